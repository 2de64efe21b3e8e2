//go:build linux

package tc

import (
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// ReadTree returns the egress qdiscs installed on link (in ns), parents
// before children, with their parameters and counters. An empty result
// means the device default (noqueue on veth).
func ReadTree(ns netns.NsHandle, link netlink.Link) ([]Qdisc, error) {
	c, err := dialTC(ns)
	if err != nil {
		return nil, err
	}
	defer c.close()
	qs, err := c.list(link.Attrs().Index)
	if err != nil {
		return nil, err
	}
	return orderTree(egress(qs)), nil
}

// ReadBack describes the installed tree for `emuctl inspect`: one qdisc
// per line, children indented, with tc-like parameters and counters.
func ReadBack(ns netns.NsHandle, link netlink.Link) (string, error) {
	qs, err := ReadTree(ns, link)
	if err != nil {
		return "", err
	}
	if len(qs) == 0 {
		return "(device default qdisc)\n", nil
	}
	return formatTree(qs), nil
}

// orderTree sorts qdiscs depth-first from the root.
func orderTree(qs []Qdisc) []Qdisc {
	var out []Qdisc
	used := make([]bool, len(qs))
	var walk func(parentMajor uint32, root bool)
	walk = func(parentMajor uint32, root bool) {
		for i, q := range qs {
			if used[i] {
				continue
			}
			if (root && q.Parent == handleRoot) || (!root && q.Parent&0xFFFF0000 == parentMajor) {
				used[i] = true
				out = append(out, q)
				walk(q.Handle, false)
			}
		}
	}
	walk(0, true)
	for i, q := range qs { // anything detached, at the end
		if !used[i] {
			out = append(out, q)
		}
	}
	return out
}
