package lab

import (
	"errors"
	"fmt"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/labstate"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
)

// A link is named as `emuctl link` names it: its index in the topology
// ("0"), one of its ends ("h1:h1-eth0"), its two nodes ("h1-s1"), or, for
// a station's wireless hop, the station ("sta1").

// SetLink changes a running link's parameters, only those given, as
// `emuctl link set` does: Rate, Delay, Jitter, JitterDist, Reorder, Loss,
// GilbertElliott, Duplicate, Corrupt, Queue, QueueBytes, for both
// directions or, inside AtoB/BtoA, one. The link's backend applies them
// (kernel qdiscs replaced; a userspace engine updated in place, without
// dropping queued frames). Options that only a new lab can take (MTU, IP,
// Backend, QueueBDP) are refused before anything changes.
func (l *Lab) SetLink(link string, opts ...LinkOption) error {
	if len(opts) == 0 {
		return errors.New("SetLink: nothing to change: give Rate, Delay, Jitter, Loss, Queue, ... (or AtoB/BtoA of them)")
	}
	changes := map[string][]func(*tc.Dir){}
	var order []string
	var errs []error
	var collect func(dir string, opts []LinkOption)
	collect = func(dir string, opts []LinkOption) {
		for _, o := range opts {
			switch {
			case o.dir != "" && dir != "":
				errs = append(errs, fmt.Errorf("SetLink(%q, ... %s): a direction inside a direction", link, o.call))
			case o.dir != "":
				collect(o.dir, o.sub)
			case o.set == nil:
				errs = append(errs, fmt.Errorf("SetLink(%q, %s): cannot change while the lab runs (give it to Topology.Link; a running link takes Rate, Delay, Jitter, JitterDist, Reorder, Loss, GilbertElliott, Duplicate, Corrupt, Queue, QueueBytes)", link, o.call))
			default:
				if changes[dir] == nil {
					order = append(order, dir)
				}
				changes[dir] = append(changes[dir], o.set)
			}
		}
	}
	collect("", opts)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	st, err := emu.ReadState(l.name)
	if err != nil {
		return err
	}
	station, wireless := emu.FindWirelessHop(st.Spec, link)
	i := -1
	if !wireless {
		if i, err = emu.FindLink(st.Spec, link); err != nil {
			return err
		}
	}
	// one change per direction named, in the order given
	for _, dir := range order {
		sets := changes[dir]
		apply := func(d *tc.Dir) {
			for _, s := range sets {
				s(d)
			}
		}
		if wireless {
			_, err = emu.SetWirelessHop(l.name, station, dir, apply)
		} else {
			_, err = emu.SetLink(l.name, i, dir, apply)
		}
		if err != nil {
			return fmt.Errorf("lab %s: link %s: %w", l.name, link, err)
		}
	}
	return nil
}

// LinkDown takes a link down at both ends, like pulling the cable.
func (l *Lab) LinkDown(link string) error { return l.linkState(link, false) }

// LinkUp brings a link taken down back up.
func (l *Lab) LinkUp(link string) error { return l.linkState(link, true) }

func (l *Lab) linkState(link string, up bool) error {
	i, err := FindLink(l.spec, link)
	if err != nil {
		return err
	}
	return SetLinkState(l.name, i, up)
}

// FindLink resolves a link's name (see the package doc: "3", "h1:h1-eth0",
// "h1-s1" or "h1,s1", a station's wireless hop) to its index in
// spec.Links, or says which links there are.
func FindLink(spec *topo.Spec, ref string) (int, error) { return emu.FindLink(spec, ref) }

// SetLinkState takes link i (an index of the lab's Spec.Links) of the lab
// called name down at both ends, or brings it back up, as `emuctl link
// down|up` does.
func SetLinkState(name string, i int, up bool) error { return emu.SetLinkState(name, i, up) }

// LinkInfo is what `emuctl link show` prints for one link (an alias of
// package labstate's type, which the runtime fills).
type LinkInfo = labstate.LinkInfo

// ShowLinks describes every link of the lab called name (Lab.Links).
func ShowLinks(name string) ([]LinkInfo, error) { return emu.ShowLinks(name) }

// Links describes every link, wireless hops included, as `emuctl link
// show` does: backend, parameters in force per direction, interface
// states, engine counters or installed qdiscs.
func (l *Lab) Links() ([]LinkInfo, error) { return ShowLinks(l.name) }
