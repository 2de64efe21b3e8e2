package lab

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/units"
)

// runKeys are the link keys a running link takes, each parsed from the
// topology's syntax and applied to one direction's parameters: the one
// table `emuctl link set`, `emuctl api` and SetLinkKeys share.
var runKeys = map[string]func(v string) (func(*tc.Dir), error){
	"rate": func(v string) (func(*tc.Dir), error) {
		r, err := units.ParseBitRate(v)
		return func(d *tc.Dir) { d.Rate = r }, err
	},
	"delay": func(v string) (func(*tc.Dir), error) {
		x, err := units.ParseDelay(v)
		return func(d *tc.Dir) { d.Delay = x }, err
	},
	"jitter": func(v string) (func(*tc.Dir), error) {
		x, err := units.ParseDelay(v)
		return func(d *tc.Dir) { d.Jitter = x }, err
	},
	"loss": func(v string) (func(*tc.Dir), error) {
		p, err := units.ParsePercent(v)
		return func(d *tc.Dir) { d.Loss, d.GE = p, nil }, err
	},
	"duplicate": func(v string) (func(*tc.Dir), error) {
		p, err := units.ParsePercent(v)
		return func(d *tc.Dir) { d.Duplicate = p }, err
	},
	"corrupt": func(v string) (func(*tc.Dir), error) {
		p, err := units.ParsePercent(v)
		return func(d *tc.Dir) { d.Corrupt = p }, err
	},
	"queue": func(v string) (func(*tc.Dir), error) {
		q, err := topo.ParseQueue(v)
		if err == nil && q.BDP > 0 {
			err = errors.New("give packets or bytes at run time, not a BDP multiple")
		}
		if err != nil {
			return nil, err
		}
		return func(d *tc.Dir) {
			d.QueuePackets, d.QueueBytes = q.Packets, q.Bytes
			d.AQM = emu.QueueAQM(q, 1500)
		}, nil
	},
}

// clearKey removes each run key's setting ("none" as its value).
var clearKey = map[string]func(*tc.Dir){
	"rate":      func(d *tc.Dir) { d.Rate = 0 },
	"delay":     func(d *tc.Dir) { d.Delay, d.Jitter = 0, 0 },
	"jitter":    func(d *tc.Dir) { d.Jitter = 0 },
	"loss":      func(d *tc.Dir) { d.Loss, d.GE = 0, nil },
	"duplicate": func(d *tc.Dir) { d.Duplicate = 0 },
	"corrupt":   func(d *tc.Dir) { d.Corrupt = 0 },
	"queue":     func(d *tc.Dir) { d.QueuePackets, d.QueueBytes, d.AQM = 0, 0, nil },
}

// RunKeys are the keys SetLinkKeys takes, sorted.
func RunKeys() []string { return slices.Sorted(maps.Keys(runKeys)) }

// LinkChange is a link's parameters in force after a change.
type LinkChange struct {
	Index   int    `json:"index"` // -1 for a wireless hop
	Name    string `json:"name"`
	Backend string `json:"backend"`
	AtoB    tc.Dir `json:"a_to_b"`
	BtoA    tc.Dir `json:"b_to_a"`
}

// SetLinkKeys changes a running link's parameters given as topology
// text ({"rate": "5mbit", "delay": "20ms", "queue": "codel ecn"}), only
// those given, in dir ("", "a->b" or "b->a"): what `emuctl link set`
// does. "none" removes a key's setting (rate none: no rate limit). A station's wireless hop is named by the station.
func (l *Lab) SetLinkKeys(link, dir string, keys map[string]string) (*LinkChange, error) {
	var sets []func(*tc.Dir)
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		parse := runKeys[k]
		if parse == nil {
			errs = append(errs, fmt.Errorf("link set: unknown key %q (valid: %s)", k, strings.Join(RunKeys(), ", ")))
			continue
		}
		if keys[k] == "none" { // the key's setting removed (no rate limit, no delay, ...)
			sets = append(sets, clearKey[k])
			continue
		}
		set, err := parse(keys[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("link set: %s %q: %w", k, keys[k], err))
			continue
		}
		sets = append(sets, set)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("link set: nothing to change: give at least one of %s", strings.Join(RunKeys(), ", "))
	}
	apply := func(d *tc.Dir) {
		for _, s := range sets {
			s(d)
		}
	}
	st, err := emu.ReadState(l.name)
	if err != nil {
		return nil, err
	}
	if station, wireless := emu.FindWirelessHop(st.Spec, link); wireless {
		h, err := emu.SetWirelessHop(l.name, station, dir, apply)
		if err != nil {
			return nil, err
		}
		return &LinkChange{Index: -1, Name: h.Station + " <-> " + h.AP, Backend: "wireless", AtoB: h.Up, BtoA: h.Down}, nil
	}
	i, err := emu.FindLink(st.Spec, link)
	if err != nil {
		return nil, err
	}
	ls, err := emu.SetLink(l.name, i, dir, apply)
	if err != nil {
		return nil, err
	}
	return &LinkChange{Index: i, Name: ls.Name, Backend: ls.Backend, AtoB: ls.AtoB, BtoA: ls.BtoA}, nil
}

// addKey is one key a link added at run time takes as a flat name and
// topology text (emuctl link add's flags, emuctl api's link.add keys,
// Python's add_link): where its value goes in the link's entry, in the
// file's syntax, so topo checks it as it checks the file's.
type addKey struct {
	path []string // below the link's link: block
	doc  string
}

// addKeys are the keys of AddLinkKeys: the shaping keys of a link: block
// and a trace's (a trace replays on the userspace link engine, as at up).
var addKeys = map[string]addKey{
	"rate":      {[]string{"rate"}, "rate, e.g. 10mbit"},
	"delay":     {[]string{"delay"}, "one-way delay, e.g. 5ms"},
	"jitter":    {[]string{"jitter"}, "jitter, e.g. 1ms"},
	"loss":      {[]string{"loss"}, "loss, e.g. 1%"},
	"duplicate": {[]string{"duplicate"}, "duplication, e.g. 0.1%"},
	"corrupt":   {[]string{"corrupt"}, "corruption, e.g. 0.1%"},
	"queue":     {[]string{"queue"}, `queue: packets (100), bytes (150kB) or a discipline ("codel ecn"); on a trace mahimahi's drop-tail limit`},
	"backend":   {[]string{"backend"}, "auto, kernel or userspace (a trace needs auto or userspace)"},
	"trace":     {[]string{"trace", "file"}, "a mahimahi delivery trace replayed in both directions (one ms timestamp per 1504-byte opportunity per line)"},
	"uplink_trace": {[]string{keyAtoB, "trace", "file"},
		"a trace for a->b alone (mahimahi's uplink: the first end is inside the shell)"},
	"downlink_trace": {[]string{keyBtoA, "trace", "file"}, "a trace for b->a alone (mahimahi's downlink)"},
	"trace_loop":     {[]string{"loop"}, "true (default: repeat the trace, period its last timestamp) or false (mahimahi's --once: silence after the end)"},
	"trace_offset":   {[]string{"offset"}, "start the replay this far into the trace, e.g. 30s"},
	"mahimahi":       {[]string{"mahimahi"}, `the whole link as a mahimahi command line ("mm-delay 20 mm-link up.trace down.trace --uplink-queue=droptail --uplink-queue-args=packets=100")`},
}

const keyAtoB, keyBtoA = "a->b", "b->a"

// traceFileKeys are the keys naming trace files, and the directions'
// trace: blocks trace_loop and trace_offset join.
var traceFileKeys = []string{"trace", "uplink_trace", "downlink_trace"}

// AddKeys are the keys AddLinkKeys takes, sorted.
func AddKeys() []string { return slices.Sorted(maps.Keys(addKeys)) }

// AddKeyDoc is what a key of AddKeys takes, for flags and help.
func AddKeyDoc(key string) string { return addKeys[key].doc }

// AddLinkKeys are the options of a link added at run time given as flat
// keys in the topology's syntax ({"rate": "10mbit", "trace":
// "up.trace", "trace_loop": "false"}): the one table `emuctl link add`,
// `emuctl api` (link.add's keys) and Python's add_link share. A trace
// file named by a relative path that exists from the working directory
// is made absolute; other relative names are looked for as the file's
// are (beside the lab's topology, $EMUCTL_TRACES, mahimahi-traces).
// trace_loop and trace_offset apply to each trace given, queue to each
// direction (a traced one's is mahimahi's drop-tail limit).
func AddLinkKeys(keys map[string]string) ([]LinkOption, error) {
	var errs []error
	var traced [][]string // the trace: blocks given
	for _, k := range traceFileKeys {
		if _, ok := keys[k]; ok {
			traced = append(traced, addKeys[k].path[:len(addKeys[k].path)-1])
		}
	}
	var opts []LinkOption
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		ak, ok := addKeys[k]
		if !ok {
			errs = append(errs, fmt.Errorf("link add: unknown key %q (valid: %s)", k, strings.Join(AddKeys(), ", ")))
			continue
		}
		v := keys[k]
		switch {
		case slices.Contains(traceFileKeys, k):
			if abs, err := filepath.Abs(v); err == nil && !filepath.IsAbs(v) && fileExists(abs) {
				v = abs
			}
		case k == "queue":
			// a direction with a trace of its own has its own queue
			// (mahimahi's): it does not inherit the link's
			for _, t := range traced {
				if len(t) > 1 {
					opts = append(opts, LinkField(strings.Join(append([]string{"link", t[0]}, ak.path...), "."), scalarValue(v)))
				}
			}
		case k == "trace_loop" || k == "trace_offset":
			if len(traced) == 0 {
				errs = append(errs, fmt.Errorf("link add: %s without a trace: give trace, uplink_trace or downlink_trace", k))
				continue
			}
			for _, t := range traced {
				opts = append(opts, LinkField(strings.Join(append(append([]string{"link"}, t...), ak.path...), "."), scalarValue(v)))
			}
			continue
		}
		opts = append(opts, LinkField(strings.Join(append([]string{"link"}, ak.path...), "."), scalarValue(v)))
	}
	return opts, errors.Join(errs...)
}

// scalarValue is a key's text as the document's scalar: booleans and
// numbers plain, so topo reads them as the file's.
func scalarValue(v string) any {
	if v == "true" || v == "false" {
		return v == "true"
	}
	return v
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
