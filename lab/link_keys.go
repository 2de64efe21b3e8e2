package lab

import (
	"errors"
	"fmt"
	"maps"
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
