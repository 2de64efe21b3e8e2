package emu

import (
	"fmt"

	"github.com/emuctl/emuctl/topo"
)

// Kinds. A link kind is one way emuctl builds a link (link.go), picked
// here from one registry, so the deploy phases, run-time changes and their
// rollbacks ask a link's kind instead of testing it.

// linkKinds picks a link's kind: the first that claims it.
var linkKinds = []func(spec *topo.Spec, links []LinkState, li int) linkKind{
	hopKind,     // a station's wireless hop (link_wifi.go)
	clusterKind, // cut between machines, or another machine's (link_vxlan.go)
	engineKind,  // shaped by the userspace engine (link_engine.go)
	portKind,    // an end on an ovs switch (link_ovs.go)
	vethKind,    // a veth pair (link_veth.go)
}

// kindOf is link li's kind, from the recorded shaping (links, in the
// order planLinks made it) and the Spec.
func kindOf(spec *topo.Spec, links []LinkState, li int) linkKind {
	for _, pick := range linkKinds {
		if k := pick(spec, links, li); k != nil {
			return k
		}
	}
	panic(fmt.Sprintf("link %d: no kind", li)) // vethKind claims every link
}

func (d *deployer) kindOf(li int) linkKind { return kindOf(d.spec, d.st.Links, li) }

func hopKind(spec *topo.Spec, _ []LinkState, li int) linkKind {
	if li >= len(spec.Links) {
		return wifiHop{}
	}
	return nil
}

func engineKind(_ *topo.Spec, links []LinkState, li int) linkKind {
	if ls, ok := findLinkState(links, li); ok && ls.Backend == BackendEngine {
		return engineLink{}
	}
	return nil
}

func portKind(spec *topo.Spec, links []LinkState, li int) linkKind {
	l := spec.Links[li]
	for _, ep := range []topo.Endpoint{l.A, l.B} {
		if n := spec.Node(ep.Node); n != nil && isOVS(n) {
			return ovsLink{kernel: kernelShaped(links, li)}
		}
	}
	return nil
}

func vethKind(_ *topo.Spec, links []LinkState, li int) linkKind {
	return vethLink{kernel: kernelShaped(links, li)}
}

// kernelShaped reports whether link li is shaped by kernel qdiscs.
func kernelShaped(links []LinkState, li int) bool {
	ls, ok := findLinkState(links, li)
	return ok && (ls.Backend == BackendNetem || ls.Backend == BackendShaper)
}
