package main

import (
	"path/filepath"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// emuHandle opens a netlink handle inside a node's namespace.
func emuHandle(lab, node string) (*netlink.Handle, error) {
	ns, err := netns.GetFromPath(filepath.Join(golab.NetnsDir, topo.Namespace(lab, node)))
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	return netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
}
