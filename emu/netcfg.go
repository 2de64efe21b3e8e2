package emu

import (
	"context"
	"fmt"
	"sync"

	"github.com/emuctl/emuctl/netcfg"
	"github.com/emuctl/emuctl/topo"
)

// netcfg applies each host's and router's mptcp: block and TCP profile
// inside its namespace and records what was read back.
func (d *deployer) netcfg(ctx context.Context) error {
	if d.opt.ExtendAllowedCC {
		host, err := netcfg.ReadHost()
		if err != nil {
			return err
		}
		added, err := netcfg.ExtendAllowedCC(netcfg.NeedsAllowedCC(d.spec, host.AllowedCC))
		d.stMu.Lock()
		d.st.RootAllowedCCAdded = added
		d.stMu.Unlock()
		if err != nil {
			return err
		}
		if len(added) > 0 {
			d.log.Debug("root tcp_allowed_congestion_control extended", "added", added)
			if err := d.save(); err != nil { // recorded before anything relies on it
				return err
			}
		}
	}
	var mu sync.Mutex
	applied := map[string]*netcfg.Applied{}
	err := d.eachNode(ctx, func(n *node) bool { return n.spec.Kind != topo.KindSwitch }, func(n *node) error {
		a, err := netcfg.ApplyNode(n.ns, n.h, n.spec, d.spec)
		if err != nil {
			return fmt.Errorf("node %s: %w", n.spec.Name, err)
		}
		d.log.Debug("tcp profile and mptcp applied", "node", n.spec.Name)
		mu.Lock()
		applied[n.spec.Name] = a
		mu.Unlock()
		return nil
	})
	d.stMu.Lock()
	if d.scope != nil && d.st.NetCfg != nil { // a run-time change: the new nodes join
		for k, v := range applied {
			d.st.NetCfg[k] = v
		}
	} else {
		d.st.NetCfg = applied
	}
	d.stMu.Unlock()
	return err
}
