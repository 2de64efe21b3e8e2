package emu

import (
	"context"
	"time"

	"github.com/emuctl/emuctl/ovs"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// InspectOVS reads a lab's bridges from its OVSDB and its queues from the
// kernel. It returns nil for a lab without ovs switches.
func InspectOVS(st *State) *OVSInfo {
	if st.OVS == nil {
		return nil
	}
	info := &OVSInfo{Embedded: st.OVS.Embedded, DB: st.OVS.DB, RunDir: st.OVS.RunDir, ExecRunDir: st.OVS.ExecRunDir}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := ovs.Dial(ctx, st.OVS.DB)
	if err != nil {
		info.Error = err.Error()
		return info
	}
	defer c.Close()
	info.Bridges, err = c.Show(ctx, Marker(st.Lab))
	if err != nil {
		info.Error = err.Error()
	}
	root, err := netlink.NewHandleAt(hostNetns, unix.NETLINK_ROUTE)
	if err != nil {
		return info
	}
	defer root.Close()
	for _, b := range st.OVS.Bridges {
		for _, p := range b.Ports {
			if p.QoS != ovs.QoSHTB {
				continue
			}
			qs, err := ovsQueueStats(root, p.Name, p.QueueLimits)
			if err != nil {
				continue
			}
			if info.Queues == nil {
				info.Queues = map[string][]QueueStats{}
			}
			info.Queues[b.Node+":"+p.Iface] = qs
		}
	}
	return info
}
