package topo

import (
	"fmt"
	"strings"
	"time"

	"github.com/emuctl/emuctl/units"
)

// Trace is a direction's mahimahi delivery trace (trace: {file, loop,
// offset}, or an mm-link of a mahimahi: line): it replaces the rate. Ms
// holds the file's opportunities as read at load time (ms, nondecreasing,
// last > 0), so the Spec needs no file afterwards.
type Trace struct {
	File   string        `json:"file"` // as resolved (absolute when it came from a path)
	Loop   bool          `json:"loop"`
	Offset time.Duration `json:"offset,omitempty"`
	Ms     []uint32      `json:"ms"`
	At     string        `json:"at,omitempty"` // file:line:col of the trace in the topology
}

// Stage orders of a traced direction (LinkParams.Order): mahimahi's shells
// nest, so "mm-delay … mm-loss … mm-link …" runs the uplink's link, loss,
// delay and the downlink's delay, loss, link.
const (
	StageLoss  = "loss"
	StageLink  = "link"
	StageDelay = "delay"
)

// Schedule start references (Schedule.T0).
const (
	T0Up      = "up"      // when the lab is up
	T0Traffic = "traffic" // when `emuctl traffic` (or a suite's flows) start
	T0Manual  = "manual"  // `emuctl schedule start NAME`
)

// Schedule is a named list of timed changes to links (schedules: in a
// topology). Steps are in time order; ramps are already expanded into
// steps. With Repeat the whole list runs again every Repeat.Every,
// Repeat.Count times in all (0: until stopped).
type Schedule struct {
	Name   string  `json:"name"`
	T0     string  `json:"t0"`
	Repeat *Repeat `json:"repeat,omitempty"`
	Steps  []Step  `json:"steps"`
	At     string  `json:"at,omitempty"`
}

// Repeat runs a schedule again.
type Repeat struct {
	Every time.Duration `json:"every"`
	Count int           `json:"count,omitempty"` // runs in all; 0 = until stopped
}

// Step is one change at At after the schedule's t0: Set changes the link's
// parameters in Dir ("" both, "a->b", "b->a"), or State takes it down or
// up. Ramp marks the steps a ramp expanded to (k of n). A mobility step
// starts or stops the path of the node Ref (Mobility "start" | "stop";
// Link is -1).
type Step struct {
	At    time.Duration `json:"at"`
	Link  int           `json:"link"`     // index into Spec.Links
	Ref   string        `json:"link_ref"` // as the file names it
	Dir   string        `json:"dir,omitempty"`
	Set   *ParamSet     `json:"set,omitempty"`
	State string        `json:"state,omitempty"` // "down" | "up"
	Ramp  string        `json:"ramp,omitempty"`  // "3/10"
	// Mobility: "start" | "stop" the path of node Ref.
	Mobility string `json:"mobility,omitempty"`
	Pos      string `json:"pos,omitempty"`
}

// ParamSet is a partial change of link parameters: nil fields stay as
// they are; an explicit zero turns a parameter off.
type ParamSet struct {
	Rate      *units.BitRate `json:"rate_bps,omitempty"`
	Delay     *time.Duration `json:"delay,omitempty"`
	Jitter    *time.Duration `json:"jitter,omitempty"`
	Loss      *units.Percent `json:"loss_pct,omitempty"`
	Duplicate *units.Percent `json:"duplicate_pct,omitempty"`
	Corrupt   *units.Percent `json:"corrupt_pct,omitempty"`
	Queue     *Queue         `json:"queue,omitempty"`
}

// String renders s in --link syntax.
func (s *ParamSet) String() string {
	if s == nil {
		return ""
	}
	var parts []string
	if s.Rate != nil {
		parts = append(parts, "rate="+s.Rate.String())
	}
	if s.Delay != nil {
		parts = append(parts, "delay="+units.FormatDuration(*s.Delay))
	}
	if s.Jitter != nil {
		parts = append(parts, "jitter="+units.FormatDuration(*s.Jitter))
	}
	if s.Loss != nil {
		parts = append(parts, "loss="+s.Loss.String())
	}
	if s.Duplicate != nil {
		parts = append(parts, "duplicate="+s.Duplicate.String())
	}
	if s.Corrupt != nil {
		parts = append(parts, "corrupt="+s.Corrupt.String())
	}
	if s.Queue != nil {
		parts = append(parts, "queue="+s.Queue.String())
	}
	return strings.Join(parts, ",")
}

// String describes a step for logs: "at 10s ue-enb a->b rate=2mbit".
func (st Step) String() string {
	if st.Mobility != "" {
		return fmt.Sprintf("at %s %s mobility %s", units.FormatDuration(st.At), st.Ref, st.Mobility)
	}
	what := st.Set.String()
	if st.State != "" {
		what = st.State
	}
	dir := ""
	if st.Dir != "" {
		dir = " " + st.Dir
	}
	ramp := ""
	if st.Ramp != "" {
		ramp = " (ramp " + st.Ramp + ")"
	}
	return fmt.Sprintf("at %s %s%s %s%s", units.FormatDuration(st.At), st.Ref, dir, what, ramp)
}

// Schedule returns the named schedule, nil if none.
func (s *Spec) Schedule(name string) *Schedule {
	for i := range s.Schedules {
		if s.Schedules[i].Name == name {
			return &s.Schedules[i]
		}
	}
	return nil
}
