package emu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/emuctl/emuctl/internal/proc"
	"github.com/emuctl/emuctl/netcfg"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Down tears a lab down: its processes, real interfaces (restored), node
// namespaces, hosts files and state dir. A lab that does not exist is
// already down: Down returns nil. Only objects carrying the lab's marker are
// removed.
func Down(lab string, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	unlock, err := lockLab(lab)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := ReadState(lab)
	if errors.Is(err, ErrNoLab) {
		st = &State{Lab: lab}
	} else if err != nil {
		return err
	}
	if err := teardown(st, log.With("lab", lab)); err != nil {
		return err
	}
	removeLockFile(lab)
	return nil
}

// teardown removes everything of the lab that st records or that carries
// the lab's marker. It is idempotent: anything already gone is done.
func teardown(st *State, log *slog.Logger) error {
	lab := st.Lab
	var j *journal
	if _, err := os.Stat(stateDir(lab)); err == nil {
		if st.Spec != nil {
			st.Status = StatusDown
			writeState(st)
		}
		j, _ = openJournal(lab)
		defer j.close()
	}
	rec := readJournal(lab) // what a killed deploy made before recording it (journal.go)
	var errs []string
	// A lab over several machines: every machine's part first (cluster.go).
	errs = append(errs, teardownMachines(st, log)...)
	closeSSHMasters(lab) // this process's shared connections to them (cluster_sshmux.go)
	t0, last := time.Now(), ""
	step := func(name string) {
		if last != "" {
			log.Debug("teardown step done", "step", last, "took", time.Since(t0))
		}
		t0, last = time.Now(), name
		j.add("teardown", name)
	}

	step("scan")
	// Which namespaces are ours: recorded ones and any whose loopback
	// carries this lab's marker. The name filter only narrows the scan; the
	// marker decides.
	names := map[string]bool{}
	for _, n := range st.Namespaces {
		names[n] = true
	}
	all, _ := listNetns()
	for _, n := range all {
		if strings.HasPrefix(n, lab+".") {
			names[n] = true
		}
	}
	owned := ownedNetns(lab, names, log)

	// Processes emuctl started, then anything else still running inside the
	// lab's namespaces (it would keep a namespace alive).
	step("procs")
	// The supervisor first: it stops the daemons it keeps and would
	// restart one that exits while it still runs.
	sups, procs := map[int]uint64{}, map[int]uint64{}
	for _, p := range append(st.Procs, rec.Procs...) {
		if p.Command == "supervisor" {
			sups[p.PID] = p.Start
		} else {
			procs[p.PID] = p.Start
		}
	}
	if len(sups) > 0 {
		stopPIDs(sups, daemonGrace+time.Second)
	}
	inos := map[uint64]bool{}
	for _, n := range owned {
		if ino, err := nsInode(filepath.Join(NetnsDir, n)); err == nil {
			inos[ino] = true
		}
	}
	for _, pids := range pidsInNetns(inos) {
		for _, pid := range pids {
			if s, err := proc.Start(pid); err == nil {
				procs[pid] = s
			}
		}
	}
	if len(procs) > 0 {
		log.Debug("stopping processes", "count", len(procs))
		stopPIDs(procs, 2*time.Second)
	}

	// OVS: the lab's rows (by marker) and its port devices in the root
	// namespace go first, so ovs-vswitchd lets go of every port (ovs_teardown.go).
	step("ovs")
	errs = append(errs, ovsTeardown(st, log)...)
	errs = append(errs, rootLinkRemains(lab, rec, log)...)
	errs = append(errs, rootEnds(st, log)...)

	// Real interfaces go home before their namespace disappears (a physical
	// device would come back under another name, a veth would be destroyed).
	for _, es := range st.Externals {
		if !es.Moved {
			continue
		}
		if err := restoreExternal(lab, topo.Namespace(lab, es.Node), es); err != nil {
			errs = append(errs, err.Error())
		} else {
			log.Debug("external restored", "host", es.HostName)
		}
	}

	step("netns")
	var mu sync.Mutex
	// Each batch's namespaces are held open while their names go, so the
	// kernel frees them after the batch, not between unmounts (its
	// cleanup competes with them for CPU and RCU grace periods).
	hold := netnsHoldBatch()
	for start := 0; start < len(owned); start += hold {
		batch := owned[start:min(start+hold, len(owned))]
		held := make([]netns.NsHandle, 0, len(batch))
		for _, n := range batch {
			if h, err := netns.GetFromPath(filepath.Join(NetnsDir, n)); err == nil {
				held = append(held, h)
			}
		}
		parallel(context.Background(), teardownWorkers, batch, func(n string) error {
			if err := deleteNamedNetns(n); err != nil {
				mu.Lock()
				errs = append(errs, err.Error())
				mu.Unlock()
				return nil
			}
			log.Debug("netns deleted", "netns", n)
			return nil
		})
		for _, h := range held {
			h.Close()
		}
	}
	for _, p := range netnsRemains(rec) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err.Error())
			continue
		}
		log.Debug("unmounted namespace file of the lab removed", "path", p)
	}
	if err := netcfg.RestoreAllowedCC(st.RootAllowedCCAdded); err != nil {
		errs = append(errs, err.Error())
	}
	// OVS: emuctl's embedded daemons stop with the last lab that used them.
	if err := ovsRelease(st, log); err != nil {
		errs = append(errs, "embedded open vswitch: "+err.Error())
	}
	step("hosts")
	ownDirs := map[string]bool{}
	for _, d := range append(st.HostsDirs, rec.HostsDirs...) {
		ownDirs[d] = true
	}
	hosts := map[string]bool{} // namespace name -> its /etc/netns dir is ours
	for n := range names {
		hosts[n] = hosts[n] || ownDirs[filepath.Join("/etc/netns", n)]
	}
	for d := range ownDirs {
		if filepath.Dir(d) == "/etc/netns" {
			hosts[filepath.Base(d)] = true
		}
	}
	hlist := make([]string, 0, len(hosts))
	for n := range hosts {
		hlist = append(hlist, n)
	}
	parallel(context.Background(), teardownWorkers, hlist, func(n string) error {
		removeHosts(lab, n, hosts[n])
		return nil
	})
	if ownDirs[etcNetnsDir] {
		os.Remove(etcNetnsDir) // made by this lab; only succeeds when empty
	}
	errs = append(errs, unmountUnder(stateDir(lab))...) // local machines' mounts (cluster_local.go)
	if len(errs) > 0 {
		return fmt.Errorf("lab %s: teardown incomplete (run `emuctl clean`): %s", lab, strings.Join(errs, "; "))
	}
	step("statedir")
	crashPoint("teardown-statedir")
	if err := removeStateDir(lab); err != nil {
		return err
	}
	return nil
}

// teardownWorkers bounds parallel namespace checks and deletions: unmounts
// wait for an RCU grace period each, which overlap when several run.
const teardownWorkers = 8

// netnsHoldBatch is how many namespace descriptors teardown holds at once
// (see the netns step): as many as the descriptor limit leaves room for,
// at least 1024. Measured on tree,4,10 (11,111 namespaces): holding all
// of them, the step took 0.85 s; in batches of 2048, 19 s; one at a time,
// 27 s — the kernel's cleanup of each batch slows the next batch's
// unmounts. Descriptor use stays bounded by the limit, never above it.
func netnsHoldBatch() int {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil {
		return 1024
	}
	open := 0
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		open = len(ents)
	}
	return max(1024, int(lim.Cur)-open-512)
}

// ownedNetns returns the namespaces among names whose loopback carries the
// lab's marker, sorted.
func ownedNetns(lab string, names map[string]bool, log *slog.Logger) []string {
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	var mu sync.Mutex
	var owned []string
	parallel(context.Background(), teardownWorkers, list, func(n string) error {
		m, err := netnsMarker(n)
		if err != nil {
			return nil // gone, or not a mounted namespace (netnsRemains)
		}
		if ml, ok := labFromMarker(m); ok && ml == lab {
			mu.Lock()
			owned = append(owned, n)
			mu.Unlock()
		} else {
			log.Debug("namespace not owned by this lab, left alone", "netns", n, "marker", m)
		}
		return nil
	})
	sort.Strings(owned)
	return owned
}

// netnsRemains lists the files under /run/netns that a lab's journal proves
// are its own and that hold no namespace: hard links to its anchor left
// unmounted (a kill between link and mount, or between unmount and
// unlink), and the anchor itself. A mounted namespace file shows the nsfs
// inode, never the anchor's, so only unmounted ones match.
func netnsRemains(rec journalRecord) []string {
	var out []string
	if len(rec.AnchorInos) > 0 {
		ids := map[fileID]bool{}
		for _, id := range rec.AnchorInos {
			ids[id] = true
		}
		ents, _ := os.ReadDir(NetnsDir)
		for _, e := range ents {
			p := filepath.Join(NetnsDir, e.Name())
			var st unix.Stat_t
			if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				continue
			}
			if ids[fileID{st.Dev, st.Ino}] {
				out = append(out, p)
			}
		}
	}
	for _, p := range rec.Anchors {
		if filepath.Dir(p) != NetnsDir || slices.Contains(out, p) {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// rootLinkRemains deletes root-namespace devices the journal says the lab
// was making (OVS port ends, whose unique names carry a random suffix)
// that are still there unmarked — a kill between creation and marking —
// or marked as the lab's. A device of that name with another marker is
// left alone.
func rootLinkRemains(lab string, rec journalRecord, log *slog.Logger) []string {
	var errs []string
	for _, name := range rec.RootLinks {
		l, err := netlink.LinkByName(name)
		if err != nil {
			continue // gone (or never made)
		}
		if a := l.Attrs().Alias; a != "" {
			if ml, ok := labFromMarker(a); !ok || ml != lab {
				continue
			}
		}
		if err := netlink.LinkDel(l); err != nil && !errors.Is(err, unix.ENODEV) {
			errs = append(errs, fmt.Sprintf("delete %s: %v", name, err))
			continue
		}
		log.Debug("root device of the lab removed", "name", name)
	}
	return errs
}

// rootEnds deletes the lab's link ends in the machine's namespace (nodes
// of kind root): every veth there whose alias is exactly the lab's
// marker. Deleting their peers' namespaces would delete them too, but
// the kernel frees a namespace asynchronously: a lab brought up again at
// once would find the names taken.
func rootEnds(st *State, log *slog.Logger) []string {
	if st.Spec == nil || !slices.ContainsFunc(st.Spec.Nodes, func(n topo.Node) bool { return n.Kind == topo.KindRoot }) {
		return nil // no node of kind root: nothing of the lab is there (the spec is saved before any link)
	}
	lab := st.Lab
	links, err := netlink.LinkList()
	if err != nil {
		return []string{fmt.Sprintf("list the machine's devices: %v", err)}
	}
	var errs []string
	m := Marker(lab)
	for _, l := range links {
		if l.Attrs().Alias != m || l.Type() != "veth" {
			continue // a namespace's loopback carries the marker too (a worker's machine namespace)
		}
		if err := netlink.LinkDel(l); err != nil && !errors.Is(err, unix.ENODEV) {
			errs = append(errs, fmt.Sprintf("%s (a link end in the machine's namespace): %v", l.Attrs().Name, err))
			continue
		}
		log.Debug("root-namespace link end deleted", "device", l.Attrs().Name)
	}
	return errs
}
