package lab

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/labstate"
	"github.com/emuctl/emuctl/topo"
)

// State is a lab's record as its state directory holds it: status, the
// resolved Spec, namespaces, links and how each is built, processes, OVS
// and Wi-Fi parts. `emuctl inspect --json` prints it.
//
// It is package labstate's type under lab's name (an alias), as are the
// dozen types it nests: labstate holds the lab's data and nothing of the
// runtime, which fills it (package emu uses the same types), so lab's
// clients never name emu's types and no copy has to follow the layout.
type State = labstate.State

// ErrNoLab is the error (wrapped) for a lab that is not running.
var ErrNoLab = emu.ErrNoLab

// NetnsDir is where the nodes' network namespaces are bound
// (/run/netns/<lab>.<node>, as ip-netns names them).
const NetnsDir = emu.NetnsDir

// ReadState reads the recorded state of the lab called name; an error
// wrapping ErrNoLab when there is none. Unlike Open it takes a lab in
// any status (deploying, up, failed).
func ReadState(name string) (*State, error) { return emu.ReadState(name) }

// Labs is the recorded state of every lab on this machine, by name.
func Labs() ([]*State, error) { return emu.Labs() }

// Deploy builds the lab spec describes, as `emuctl up` does, and returns
// its recorded state once every link is up; Up does the same from any
// Source and returns a handle. On any failure, or when ctx is cancelled,
// everything made so far is removed. opt.Name renames the lab first.
func Deploy(ctx context.Context, spec *topo.Spec, opt Options) (*State, error) {
	if opt.Name != "" {
		if err := topo.Rename(spec, opt.Name); err != nil {
			return nil, err
		}
	}
	return emu.Deploy(ctx, spec, emu.Options{
		Workers: opt.Workers, AllowExternal: opt.AllowExternal, ExtendAllowedCC: opt.ExtendAllowedCC, Log: opt.Log,
	})
}

// Down tears the lab called name down, as `emuctl down` does (see
// Lab.Down); log receives one debug line per host change (nil: none).
// A lab already down is no error.
func Down(name string, log *slog.Logger) error { return emu.Down(name, log) }

// StateDir is the lab's state directory (under StateRoot).
func StateDir(name string) string { return emu.StateDir(name) }

// WaitNetnsSettled waits, at most max, until the kernel has finished
// freeing the network namespaces of labs taken down (their cleanup runs
// after Down returns), and returns how long that took. Measurements
// that follow a Down call it first so the last lab's teardown does not
// compete with them.
func WaitNetnsSettled(max time.Duration) time.Duration { return emu.WaitNetnsSettled(max) }

// PrimaryAddr is a node's first IPv4 address, else its first IPv6 one
// (Lab.Addr by name); false when it has none.
func PrimaryAddr(n *topo.Node) (netip.Addr, bool) { return emu.PrimaryAddr(n) }

// EndpointNetns is where a node's interface lives: the namespace's path
// and the interface's name there (an ovs switch's ports and a lab over
// several machines place some elsewhere than the node's namespace).
func EndpointNetns(st *State, node, iface string) (nsPath, ifname string) {
	return emu.EndpointNetns(st, node, iface)
}
