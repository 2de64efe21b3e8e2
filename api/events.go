package api

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
)

// Events: a subscription watches one lab and sends notifications
// (method "event") while it lasts:
//
//	{"subscription": "ev1", "type": "node-added", "node": "h3", "t": ...}
//	  types: node-added, node-removed, link-added, link-removed (with the
//	  link's ends), link-changed (its parameters in force), link-state (an
//	  end went up or down), wifi-handover (a station moved to another access
//	  point of its network: node, a (from), b (to), params: the SNRs, the
//	  time off the air), lab-down (the lab is gone; the subscription ends)
//	{"subscription": "ev1", "type": "counters", "t": ..., "links": [...]}
//	  every interval: per link and direction bytes, packets, drops, the
//	  rate since the last sample (bit/s: frames as on the wire, from the
//	  engine of a userspace link), and a userspace link's engine counters
//	  (queue now, drops by cause), or a kernel-shaped link's qdiscs'
//	  ("kernel": per direction packets and bytes queued, drops, AQM
//	  drops and marks, netem's loss drops); on a lab over several
//	  machines each link as its A end's machine's worker read it (its
//	  stamp "at"), or state "remote" with why ("remote") until it answers
//	{"subscription": "ev1", "type": "warning", "t": ..., "message": ...}
//	  something the stream cannot show: a machine's counters worker that
//	  failed (told once; it is started again)
//
// The lab is read as it stands on the host (its state and interfaces), so
// changes made by any process — the CLI, another session — are seen.

type subscribeParams struct {
	onLab
	IntervalMS int   `json:"interval_ms,omitempty"`
	Counters   *bool `json:"counters,omitempty"`
}

func subscribe(ctx context.Context, s *session, p subscribeParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	every := 500 * time.Millisecond
	if p.IntervalMS != 0 {
		if p.IntervalMS < 50 {
			return nil, newError(CodeInvalidParams, "events.subscribe: interval_ms %d: at least 50", p.IntervalMS)
		}
		every = time.Duration(p.IntervalMS) * time.Millisecond
	}
	counters := p.Counters == nil || *p.Counters
	sctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	id := s.id("ev")
	s.subs[id] = cancel
	s.mu.Unlock()
	go watch(sctx, s, id, l.Name(), every, counters)
	return map[string]any{"subscription": id, "lab": l.Name(), "interval_ms": every.Milliseconds()}, nil
}

func unsubscribe(ctx context.Context, s *session, p struct {
	Subscription string `json:"subscription"`
}) (any, error) {
	s.mu.Lock()
	cancel := s.subs[p.Subscription]
	delete(s.subs, p.Subscription)
	s.mu.Unlock()
	if cancel == nil {
		return nil, newError(CodeNotFound, "no subscription %q in this session", p.Subscription)
	}
	cancel()
	return nil, nil
}

// event is one notification's params.
type event struct {
	Subscription string `json:"subscription"`
	Type         string `json:"type"`
	T            string `json:"t"`
	Node         string `json:"node,omitempty"`
	Link         *int   `json:"link,omitempty"`
	A            string `json:"a,omitempty"`
	B            string `json:"b,omitempty"`
	State        string `json:"state,omitempty"`
	Params       any    `json:"params,omitempty"`
	Links        any    `json:"links,omitempty"`
	Message      string `json:"message,omitempty"`
}

// wireBytes are the bytes that crossed a link a->b and b->a: a
// userspace link's engine counts the frames it sent on (each one as on
// the wire); the A end's interface counts what its stack sent, where a
// segmentation-offloaded packet of several frames carries one set of
// headers (2 % less than the wire under a bulk TCP flow).
func wireBytes(c emu.LinkCounters) [2]uint64 {
	if c.Engine != nil {
		return [2]uint64{c.Engine.AToB.OutBytes, c.Engine.BToA.OutBytes}
	}
	return [2]uint64{c.AtoB.Bytes, c.BtoA.Bytes}
}

// counted: the link's counters were read (its end exists, and on a lab
// over several machines its machine's worker answered).
func counted(c emu.LinkCounters) bool { return c.StateA != "remote" && c.StateA != "missing" }

// rates are a link's rates a->b and b->a since its last sample p, in
// bit/s: bytes over the time between the two reads of the link (dt, the
// time between the two ticks, when a read has no stamp). A link not read
// in either sample has none; one whose sample is p's again (a machine's
// worker that has not read since) keeps p's.
func rates(c emu.LinkCounters, p rateCounters, dt time.Duration) (float64, float64) {
	if !counted(c) || !counted(p.LinkCounters) {
		return 0, 0
	}
	if !c.At.IsZero() && c.At.Equal(p.At) {
		return p.AtoBbps, p.BtoAbps
	}
	if !c.At.IsZero() && c.At.After(p.At) {
		dt = c.At.Sub(p.At)
	}
	if dt <= 0 {
		return 0, 0
	}
	now, then := wireBytes(c), wireBytes(p.LinkCounters)
	var bps [2]float64
	for k := range bps {
		if now[k] >= then[k] { // not a link made again, its counters from 0
			bps[k] = float64(now[k]-then[k]) * 8 / dt.Seconds()
		}
	}
	return bps[0], bps[1]
}

// rateCounters is a link's counters with the rates since the last sample.
type rateCounters struct {
	emu.LinkCounters
	AtoBbps float64 `json:"a_to_b_bps"`
	BtoAbps float64 `json:"b_to_a_bps"`
}

func watch(ctx context.Context, s *session, id, lab string, every time.Duration, counters bool) {
	var prev *emu.State
	var last []rateCounters
	known := map[string]string{}     // each link's last state read ("remote" is none: its machine's worker has not answered)
	reader := emu.NewCounterReader() // keeps the namespaces' handles (and a lab's machines' workers) between ticks
	defer reader.Close()
	reader.Interval = every / 2 // each tick finds a newer line of every machine's worker
	var lastT time.Time
	seen := -1 // handovers already told (-1: not read yet)
	tick := time.NewTicker(every)
	defer tick.Stop()
	var states emu.StateCache // the state file is read again only when it changed
	for {
		now := time.Now().UTC().Format(time.RFC3339Nano)
		st, err := states.Read(lab)
		if err != nil || st.Status == emu.StatusDown {
			if errors.Is(err, emu.ErrNoLab) || err == nil {
				s.notify("event", event{Subscription: id, Type: "lab-down", T: now})
				s.mu.Lock()
				delete(s.subs, id)
				s.mu.Unlock()
				return
			}
		} else {
			if prev != nil && st.Spec != nil && prev.Spec != nil {
				for _, e := range diffEvents(prev, st) {
					e.Subscription, e.T = id, now
					s.notify("event", e)
				}
			}
			prev = st
			if roams(st) {
				seen = handoverEvents(s, id, lab, seen)
			}
			if counters {
				t, cs, err := reader.Read(lab)
				for _, w := range reader.Warnings() {
					s.notify("event", event{Subscription: id, Type: "warning", T: now, Message: w})
				}
				if err == nil {
					out := make([]rateCounters, len(cs))
					for i, c := range cs {
						out[i].LinkCounters = c
						key := c.A + " " + c.B
						if c.StateA != "remote" {
							if k, ok := known[key]; ok && k != c.StateA {
								li := c.Index
								s.notify("event", event{Subscription: id, Type: "link-state", T: now, Link: &li, A: c.A, B: c.B, State: c.StateA})
							}
							known[key] = c.StateA
						}
						if k := slices.IndexFunc(last, func(o rateCounters) bool { return o.A == c.A && o.B == c.B }); k >= 0 {
							out[i].AtoBbps, out[i].BtoAbps = rates(c, last[k], t.Sub(lastT))
						}
					}
					last, lastT = out, t
					s.notify("event", event{Subscription: id, Type: "counters", T: t.UTC().Format(time.RFC3339Nano), Links: out})
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// roams: the lab has a station that roams between access points.
func roams(st *emu.State) bool {
	if st.Spec == nil || st.Medium == nil {
		return false
	}
	for _, n := range st.Spec.Nodes {
		if n.Station != nil && len(n.Station.ESS) > 1 {
			return true
		}
	}
	return false
}

// handoverEvents tells the handovers the medium made since the first
// seen (all it had when the subscription began are not told) and returns
// how many it has made.
func handoverEvents(s *session, id, lab string, seen int) int {
	ms, err := emu.LabMediumStats(lab)
	if err != nil {
		return seen
	}
	n := len(ms.Handovers)
	if seen >= 0 {
		for _, h := range ms.Handovers[min(seen, n):] {
			s.notify("event", event{Subscription: id, Type: "wifi-handover", T: h.Time.UTC().Format(time.RFC3339Nano), Node: h.Station, A: h.From, B: h.To,
				Params: map[string]any{"from_snr_db": h.FromSNRdB, "to_snr_db": h.ToSNRdB, "off_air_ms": float64(h.OffAir) / 1e6}})
		}
	}
	return n
}

// diffEvents are the changes between two readings of a lab's state.
func diffEvents(old, new *emu.State) []event {
	var out []event
	for _, n := range new.Spec.Nodes {
		if old.Spec.Node(n.Name) == nil {
			out = append(out, event{Type: "node-added", Node: n.Name, Params: map[string]any{"kind": n.Kind}})
		}
	}
	for _, n := range old.Spec.Nodes {
		if new.Spec.Node(n.Name) == nil {
			out = append(out, event{Type: "node-removed", Node: n.Name})
		}
	}
	key := func(l topo.Link) string { return l.A.String() + " " + l.B.String() }
	oldAt, newAt := map[string]int{}, map[string]int{}
	for i, l := range old.Spec.Links {
		oldAt[key(l)] = i
	}
	for i, l := range new.Spec.Links {
		newAt[key(l)] = i
		if _, ok := oldAt[key(l)]; !ok {
			out = append(out, event{Type: "link-added", Link: &i, A: l.A.String(), B: l.B.String(), Params: withoutOpportunities(l.Params)})
		}
	}
	for i, l := range old.Spec.Links {
		if _, ok := newAt[key(l)]; !ok {
			out = append(out, event{Type: "link-removed", Link: &i, A: l.A.String(), B: l.B.String()})
		}
	}
	for _, ls := range new.Links {
		for _, o := range old.Links {
			if o.Name == ls.Name && (fmt.Sprint(o.AtoB) != fmt.Sprint(ls.AtoB) || fmt.Sprint(o.BtoA) != fmt.Sprint(ls.BtoA)) {
				i := ls.Index
				a, b := ls.AtoB, ls.BtoA
				a.Trace, b.Trace = a.Trace.Summary(), b.Trace.Summary() // not the opportunities
				out = append(out, event{Type: "link-changed", Link: &i, A: ls.Name, Params: map[string]any{"a_to_b": a, "b_to_a": b}})
			}
		}
	}
	return out
}

// withoutOpportunities is a link's parameters with each trace named (its
// file, loop, offset) but not its delivery opportunities, which would make
// an event of a long trace hundreds of kilobytes.
func withoutOpportunities(p *topo.LinkParams) *topo.LinkParams {
	if p == nil {
		return nil
	}
	c := *p
	if c.Trace != nil {
		t := *c.Trace
		t.Ms = nil
		c.Trace = &t
	}
	c.AtoB, c.BtoA = withoutOpportunities(p.AtoB), withoutOpportunities(p.BtoA)
	return &c
}
