package emu

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Bridge port STP states (IFLA_BRPORT_STATE).
var brStates = map[uint8]string{0: "disabled", 1: "listening", 2: "learning", 3: "forwarding", 4: "blocking"}

// bridgePortStates returns port name -> STP state for every bridge port in
// ns, from an AF_BRIDGE link dump (the netlink library has no accessor).
func bridgePortStates(ns netns.NsHandle) (map[string]string, error) {
	out := map[string]string{}
	err := do(ns, func() error {
		req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_DUMP)
		req.AddData(nl.NewIfInfomsg(unix.AF_BRIDGE))
		msgs, err := req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWLINK)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			attrs, err := nl.ParseRouteAttr(m[unix.SizeofIfInfomsg:])
			if err != nil {
				continue
			}
			var name string
			state := -1
			for _, a := range attrs {
				switch a.Attr.Type & nl.NLA_TYPE_MASK {
				case unix.IFLA_IFNAME:
					name = strings.TrimRight(string(a.Value), "\x00")
				case unix.IFLA_PROTINFO:
					nested, err := nl.ParseRouteAttr(a.Value)
					if err != nil {
						continue
					}
					for _, na := range nested {
						if na.Attr.Type&nl.NLA_TYPE_MASK == nl.IFLA_BRPORT_STATE && len(na.Value) > 0 {
							state = int(na.Value[0])
						}
					}
				}
			}
			if name != "" && state >= 0 {
				out[name] = brStates[uint8(state)]
			}
		}
		return nil
	})
	return out, err
}

// waitSTP returns when no port of the STP bridges is still listening or
// learning, so `up` returns a lab whose loops are already resolved.
func (d *deployer) waitSTP(ctx context.Context) error {
	var stp []*node
	for _, n := range d.nodeList() {
		if n.spec.STP {
			stp = append(stp, n)
		}
	}
	if len(stp) == 0 {
		return nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pending []string
		for _, n := range stp {
			var states map[string]string
			err := with(func() (err error) { states, err = bridgePortStates(n.ns); return err }, n)
			if err != nil {
				return fmt.Errorf("switch %s: read STP state: %w", n.spec.Name, err)
			}
			for port, s := range states {
				if s == "listening" || s == "learning" {
					pending = append(pending, n.spec.Name+":"+port+" ("+s+")")
				}
			}
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("STP did not converge in 30s: %s", strings.Join(pending, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
