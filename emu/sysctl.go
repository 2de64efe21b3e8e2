package emu

import (
	"fmt"
	"strings"

	"github.com/emuctl/emuctl/internal/sysctl"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// writeSysctls writes each setting inside ns, reads it back, and fails on
// the first one that cannot be applied.
func writeSysctls(ns netns.NsHandle, kvs []topo.KV) error {
	return do(ns, func() error {
		for _, kv := range kvs {
			// internal/sysctl: a private procfs per namespace, since
			// /proc/sys lookups slow down with every namespace alive.
			if err := sysctl.Write(kv.Key, kv.Value); err != nil {
				return fmt.Errorf("sysctl %s=%s: %w", kv.Key, kv.Value, err)
			}
			got, err := sysctl.Read(kv.Key)
			if err != nil {
				return fmt.Errorf("sysctl %s: read back: %w", kv.Key, err)
			}
			if norm(string(got)) != norm(kv.Value) {
				return fmt.Errorf("sysctl %s=%s: kernel kept %q", kv.Key, kv.Value, strings.TrimSpace(string(got)))
			}
		}
		return nil
	})
}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// ReadSysctl reads one sysctl inside a node's namespace.
func ReadSysctl(nsName, key string) (string, error) {
	h, err := netns.GetFromPath(NetnsDir + "/" + nsName)
	if err != nil {
		return "", err
	}
	defer h.Close()
	var out string
	err = do(h, func() error {
		b, err := sysctl.Read(key)
		out = strings.TrimSpace(string(b))
		return err
	})
	return out, err
}

// setBridgeSTP turns on kernel STP for a bridge with a short forward delay
// (the kernel minimum, 2 s), via IFLA_BR_STP_STATE which the netlink
// library does not expose. The request is sent from inside ns.
func setBridgeSTP(ns netns.NsHandle, index int) error {
	return do(ns, func() error {
		req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_ACK)
		msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
		msg.Index = int32(index)
		req.AddData(msg)
		linkInfo := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
		linkInfo.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("bridge"))
		data := linkInfo.AddRtAttr(nl.IFLA_INFO_DATA, nil)
		data.AddRtAttr(nl.IFLA_BR_FORWARD_DELAY, nl.Uint32Attr(200)) // centiseconds
		data.AddRtAttr(nl.IFLA_BR_STP_STATE, nl.Uint32Attr(1))
		req.AddData(linkInfo)
		_, err := req.Execute(unix.NETLINK_ROUTE, 0)
		return err
	})
}
