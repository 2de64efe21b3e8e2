package emu

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/internal/proc"
	"github.com/emuctl/emuctl/internal/tracefs"
	"github.com/vishvananda/netlink"
)

// CleanReport says what Clean removed and what it left alone.
type CleanReport struct {
	Removed []string `json:"removed"` // labs torn down
	Skipped []string `json:"skipped"` // running labs left alone, with why
	Errors  []string `json:"errors,omitempty"`
}

// Clean finds leftovers of labs that are not running — crashed deploys,
// killed teardowns, namespaces whose state dir is gone — by their marker and
// removes them. A lab whose status is up, or whose deploy is still in
// progress, is left alone unless all is true. Objects without emuctl's
// marker are never touched.
func Clean(all bool, log *slog.Logger) (*CleanReport, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("emuctl clean needs root: run it with sudo")
	}
	// Two cleans at once take turns: the second finds what the first left.
	unlockClean, err := lockClean()
	if err != nil {
		return nil, err
	}
	defer unlockClean()
	labs := map[string]*State{}
	found := map[string][]string{}
	names, err := listNetns()
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		m, err := netnsMarker(n)
		if err != nil {
			continue
		}
		if lab, ok := labFromMarker(m); ok {
			found[lab] = append(found[lab], n)
		}
	}
	states, _ := Labs()
	for _, st := range states {
		labs[st.Lab] = st
	}
	// State dirs that exist but cannot be parsed still name a lab.
	if ents, err := os.ReadDir(RunDir()); err == nil {
		for _, e := range ents {
			if e.Name() == embeddedOVSDir || e.Name() == sshMuxBase {
				continue // OVS: emuctl's embedded daemons, not a lab (cleanOVS); shared SSH connections (cleanSSHSockets)
			}
			if e.IsDir() && labs[e.Name()] == nil {
				labs[e.Name()] = &State{Lab: e.Name()}
			}
		}
	}
	for lab, ns := range found {
		if labs[lab] == nil {
			labs[lab] = &State{Lab: lab}
		}
		_ = ns
	}
	rep := &CleanReport{}
	var order []string
	for lab := range labs {
		order = append(order, lab)
	}
	sort.Strings(order)
	for _, lab := range order {
		st := labs[lab]
		if !all {
			switch {
			case st.Status == StatusUp && supervisorDied(st):
				// A lab whose supervisor is gone has links that forward
				// nothing: it is a leftover, not a running lab.
				log.Debug("lab is up but its supervisor died", "lab", lab)
			case st.Status == StatusUp:
				rep.Skipped = append(rep.Skipped, lab+" (running; use `emuctl down "+lab+"` or clean --all)")
				continue
			case st.Status == StatusDeploying && proc.Alive(st.PID, st.PIDStart):
				rep.Skipped = append(rep.Skipped, lab+" (being deployed by pid "+fmt.Sprint(st.PID)+")")
				continue
			}
		}
		unlock, err := lockLab(lab)
		if err != nil {
			rep.Skipped = append(rep.Skipped, lab+" ("+err.Error()+")")
			continue
		}
		st.Namespaces = append(st.Namespaces, found[lab]...)
		err = teardown(st, log.With("lab", lab))
		unlock()
		if err != nil {
			rep.Errors = append(rep.Errors, err.Error())
			continue
		}
		removeLockFile(lab)
		rep.Removed = append(rep.Removed, lab)
	}
	cleanAnchors(rep)
	for _, d := range cleanSSHSockets() { // shared SSH connections of emuctl processes that are gone
		rep.Removed = append(rep.Removed, "ssh socket "+d)
	}
	cleanRootExternals(labs, all, rep)
	cleanOVS(rep, log) // OVS: rows and port devices of gone labs, idle embedded daemons (ovs_clean.go)
	cleanDanglingHosts(rep)
	if gone, errs := tracefs.Stale(true); len(gone) > 0 || len(errs) > 0 {
		rep.Errors = append(rep.Errors, errs...)
		if len(errs) == 0 {
			rep.Removed = append(rep.Removed, gone...)
		}
	}
	if len(rep.Errors) > 0 {
		return rep, errors.New(strings.Join(rep.Errors, "; "))
	}
	return rep, nil
}

// cleanRootExternals renames back real interfaces that returned to the root
// namespace under a kernel-chosen name when a crashed lab's namespace died;
// their alias still names the lab and the original name.
func cleanRootExternals(labs map[string]*State, all bool, rep *CleanReport) {
	links, err := netlink.LinkList()
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return
	}
	for _, l := range links {
		lab, ok := labFromMarker(l.Attrs().Alias)
		if !ok {
			continue
		}
		if st := labs[lab]; st != nil && st.Status == StatusUp && !all {
			continue
		}
		if _, err := os.Stat(stateDir(lab)); err == nil {
			continue // its lab still exists and will restore it
		}
		_, host, found := strings.Cut(l.Attrs().Alias, " ext=")
		if !found {
			continue
		}
		if l.Attrs().Name != host {
			if err := netlink.LinkSetName(l, host); err != nil {
				rep.Errors = append(rep.Errors, fmt.Sprintf("rename %s back to %s: %v", l.Attrs().Name, host, err))
				continue
			}
		}
		netlink.LinkSetAlias(l, "")
		rep.Removed = append(rep.Removed, "external "+host+" of "+lab+" renamed back")
	}
}

// cleanDanglingHosts removes /etc/netns/*/hosts links into state dirs that
// no longer exist.
func cleanDanglingHosts(rep *CleanReport) {
	ents, err := os.ReadDir("/etc/netns")
	if err != nil {
		return
	}
	for _, e := range ents {
		if t, err := os.Readlink(filepath.Join("/etc/netns", e.Name())); err == nil && strings.HasPrefix(t, RunDir()+"/") {
			if _, err := os.Stat(t); err != nil {
				os.Remove(filepath.Join("/etc/netns", e.Name()))
				rep.Removed = append(rep.Removed, "stale /etc/netns/"+e.Name())
			}
			continue
		}
		p := filepath.Join("/etc/netns", e.Name(), "hosts")
		target, err := os.Readlink(p)
		if err != nil || !strings.HasPrefix(target, RunDir()+"/") {
			continue
		}
		if _, err := os.Stat(target); err == nil {
			continue
		}
		os.Remove(p)
		os.Remove(filepath.Dir(p))
		rep.Removed = append(rep.Removed, "stale "+p)
	}
}

// supervisorDied reports whether a lab has a supervisor on record and it
// no longer runs.
func supervisorDied(st *State) bool {
	for _, p := range st.Procs {
		if p.Node == "" && p.Command == "supervisor" {
			return !proc.Alive(p.PID, p.Start) || isZombie(p.PID)
		}
	}
	return false
}

// lockClean serialises clean runs (blocking): each removes what it finds
// under the lab locks, and a second one started meanwhile then finds the
// host already clean instead of racing on the same objects.
func lockClean() (func(), error) {
	unlock, err := flockRun("._clean.lock", 0)
	if err != nil {
		return nil, fmt.Errorf("clean lock: %w", err)
	}
	return unlock, nil
}

// cleanAnchors removes unmounted /run/netns files whose content marks them
// as a lab's namespace anchor (nsutil.go) when that lab has no state dir:
// left by a deploy killed with its state dir lost, found by their marker.
func cleanAnchors(rep *CleanReport) {
	ents, _ := os.ReadDir(NetnsDir)
	for _, e := range ents {
		p := filepath.Join(NetnsDir, e.Name())
		lab, ok := anchorLab(p)
		if !ok {
			continue
		}
		if _, err := os.Stat(stateDir(lab)); err == nil {
			continue // its lab's teardown knows it
		}
		if err := os.Remove(p); err != nil {
			rep.Errors = append(rep.Errors, err.Error())
			continue
		}
		rep.Removed = append(rep.Removed, "namespace file "+p+" of "+lab)
	}
}
