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

// etcNetnsDir is where `ip netns exec` (and `emuctl exec`) look for a
// namespace's files to show over /etc.
const etcNetnsDir = "/etc/netns"

// hostsFiles writes the lab's hosts file once into the state dir
// (<state>/etc/hosts) and makes /etc/netns/<ns> a symlink to that
// directory for every node: one atomic operation per node whose target (in
// the lab's state dir) is its marker, and one unlink to undo (a directory
// per node cost 0.2 ms to remove on ext4, 2 s for a 10,000-node lab). A
// node whose /etc/netns/<ns> already exists as a directory (the user's own
// files) gets a hosts link inside it instead. /etc/netns itself, when
// missing, is made under a journal line (journal.go) and removed when empty.
func (d *deployer) hostsFiles(ctx context.Context) error {
	etc := filepath.Join(stateDir(d.spec.Name), "etc")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		return err
	}
	labHosts := filepath.Join(etc, "hosts")
	// a change's commit rewrites the lab's hosts file whole (writeHosts:
	// renamed over, so no node ever reads half of it); here it is written
	// only when the lab has none yet
	if _, err := os.Stat(labHosts); d.scope == nil || err != nil {
		if err := os.WriteFile(labHosts, hostsFile(d.spec), 0o644); err != nil {
			return err
		}
	}
	if _, err := os.Stat(etcNetnsDir); errors.Is(err, os.ErrNotExist) {
		if err := d.j.add("hostsdir", etcNetnsDir); err != nil {
			return err
		}
		if err := os.MkdirAll(etcNetnsDir, 0o755); err != nil {
			return err
		}
		crashPoint("hostsdir-made")
		d.stMu.Lock()
		d.st.HostsDirs = append(d.st.HostsDirs, etcNetnsDir)
		d.stMu.Unlock()
	}
	return parallel(ctx, d.opt.Workers, d.nodeList(), func(n *node) error {
		dir := filepath.Join(etcNetnsDir, n.nsName)
		err := os.Symlink(etc, dir)
		if errors.Is(err, os.ErrExist) {
			if fi, serr := os.Lstat(dir); serr == nil && fi.IsDir() {
				err = os.Symlink(labHosts, filepath.Join(dir, "hosts"))
			}
		}
		if err != nil {
			return fmt.Errorf("node %s: %w", n.spec.Name, err)
		}
		return nil
	})
}

// removeHosts undoes hostsFiles for one namespace: /etc/netns/<ns> when it
// is emuctl's symlink into the lab's state dir; else /etc/netns/<ns>/hosts
// when it is emuctl's link, and the directory when it is then empty and
// ownDir (made by an older emuctl or journalled).
func removeHosts(lab, ns string, ownDir bool) {
	dir := filepath.Join(etcNetnsDir, ns)
	if target, err := os.Readlink(dir); err == nil {
		if strings.HasPrefix(target, stateDir(lab)+"/") {
			os.Remove(dir)
		}
		return
	}
	p := filepath.Join(dir, "hosts")
	if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, stateDir(lab)+"/") {
		os.Remove(p)
		ownDir = true
	}
	if ownDir {
		os.Remove(dir) // only succeeds when empty
	}
}
