package emu

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/emuctl/emuctl/netcfg"
	"github.com/emuctl/emuctl/topo"
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
	if _, err := os.Stat(stateDir(lab)); err == nil && st.Spec != nil {
		st.Status = StatusDown
		writeState(st)
	}
	var errs []string

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
	var owned []string
	for n := range names {
		m, err := netnsMarker(n)
		if err != nil {
			continue // gone
		}
		if ml, ok := labFromMarker(m); ok && ml == lab {
			owned = append(owned, n)
		} else {
			log.Debug("namespace not owned by this lab, left alone", "netns", n, "marker", m)
		}
	}
	sort.Strings(owned)

	// Processes emuctl started, then anything else still running inside the
	// lab's namespaces (it would keep a namespace alive).
	procs := map[int]uint64{}
	for _, p := range st.Procs {
		procs[p.PID] = p.Start
	}
	inos := map[uint64]bool{}
	for _, n := range owned {
		if ino, err := nsInode(filepath.Join(NetnsDir, n)); err == nil {
			inos[ino] = true
		}
	}
	for _, pids := range pidsInNetns(inos) {
		for _, pid := range pids {
			if s, err := procStart(pid); err == nil {
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
	errs = append(errs, ovsTeardown(st, log)...)

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

	for _, n := range owned {
		if err := deleteNamedNetns(n); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		log.Debug("netns deleted", "netns", n)
	}
	if err := netcfg.RestoreAllowedCC(st.RootAllowedCCAdded); err != nil {
		errs = append(errs, err.Error())
	}
	// OVS: emuctl's embedded daemons stop with the last lab that used them.
	if err := ovsRelease(st, log); err != nil {
		errs = append(errs, "embedded open vswitch: "+err.Error())
	}
	ownDirs := map[string]bool{}
	for _, d := range st.HostsDirs {
		ownDirs[d] = true
	}
	for n := range names {
		removeHosts(lab, n, ownDirs[filepath.Join("/etc/netns", n)])
	}
	if len(errs) > 0 {
		return fmt.Errorf("lab %s: teardown incomplete (run `emuctl clean`): %s", lab, strings.Join(errs, "; "))
	}
	if err := os.RemoveAll(stateDir(lab)); err != nil {
		return err
	}
	return nil
}
