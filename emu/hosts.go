package emu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/emuctl/emuctl/topo"
)

// hostsFile renders the lab's /etc/hosts: every host and router by name.
func hostsFile(spec *topo.Spec) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# emuctl lab %s: generated, removed by `emuctl down`\n", spec.Name)
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	for _, n := range spec.Hosts() {
		var v4, v6 string
		for _, ifc := range n.Interfaces {
			for _, a := range ifc.Addrs {
				if a.Addr().Is4() && v4 == "" {
					v4 = a.Addr().String()
				}
				if a.Addr().Is6() && v6 == "" {
					v6 = a.Addr().String()
				}
			}
		}
		if v4 != "" {
			fmt.Fprintf(&b, "%s\t%s\n", v4, n.Name)
		}
		if v6 != "" {
			fmt.Fprintf(&b, "%s\t%s\n", v6, n.Name)
		}
	}
	return []byte(b.String())
}

// hostsFiles writes the lab's hosts file once into the state dir and links
// /etc/netns/<ns>/hosts to it for every node, which is where `ip netns exec`
// and `emuctl exec` look.
func (d *deployer) hostsFiles(ctx context.Context) error {
	labHosts := filepath.Join(stateDir(d.spec.Name), "hosts")
	if err := os.WriteFile(labHosts, hostsFile(d.spec), 0o644); err != nil {
		return err
	}
	for _, n := range d.nodeList() {
		dir := filepath.Join("/etc/netns", n.nsName)
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			if err := d.j.add("hostsdir", dir); err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			crashPoint("hostsdir-made")
			d.stMu.Lock()
			d.st.HostsDirs = append(d.st.HostsDirs, dir)
			d.stMu.Unlock()
		}
		if err := os.Symlink(labHosts, filepath.Join(dir, "hosts")); err != nil {
			return fmt.Errorf("node %s: %w", n.spec.Name, err)
		}
	}
	return nil
}

// removeHosts removes /etc/netns/<ns>/hosts when it is emuctl's link into
// the lab's state dir, and the directory when it is then empty.
func removeHosts(lab, ns string, ownDir bool) {
	dir := filepath.Join("/etc/netns", ns)
	p := filepath.Join(dir, "hosts")
	if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, stateDir(lab)+"/") {
		os.Remove(p)
		ownDir = true
	}
	if ownDir {
		os.Remove(dir) // only succeeds when empty
	}
}
