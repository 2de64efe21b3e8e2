package emu

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/emuctl/emuctl/ovs"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// cleanOVS removes what labs that no longer exist left in Open vSwitch:
// rows carrying their marker (in the system database and in emuctl's
// embedded one) and their port devices in the root namespace; then it
// stops the embedded pair when no lab uses it. A lab "exists" while its
// state dir does: running labs Clean skipped keep everything.
func cleanOVS(rep *CleanReport, log *slog.Logger) {
	gone := func(lab string) bool {
		_, err := os.Stat(stateDir(lab))
		return os.IsNotExist(err)
	}
	for _, db := range ovsMarkers() {
		if db.err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("open vswitch %s: %v", db.ep, db.err))
			continue
		}
		for _, m := range db.markers {
			lab, ok := labFromMarker(m)
			if !ok || !gone(lab) {
				continue
			}
			if err := deleteOVSRows(db.ep, m, log); err != nil {
				rep.Errors = append(rep.Errors, err.Error())
				continue
			}
			rep.Removed = append(rep.Removed, fmt.Sprintf("open vswitch rows of %s (%s)", lab, db.ep))
		}
	}
	for _, lab := range markedRootLabs() {
		if !gone(lab) {
			continue
		}
		if err := deleteMarkedRootLinks(lab, []string{" ovs=", " ovs-bridge="}, []uint32{ovsGroup(lab), bridgeGroup(ovsGroup(lab))}, log); err != nil {
			rep.Errors = append(rep.Errors, err.Error())
			continue
		}
		rep.Removed = append(rep.Removed, "open vswitch port devices of "+lab)
	}
	if e := embeddedOVS(); fileExists(e.Dir) {
		stopped, err := releaseEmbeddedOVS("")
		if err != nil {
			rep.Errors = append(rep.Errors, "embedded open vswitch: "+err.Error())
		} else if stopped {
			rep.Removed = append(rep.Removed, "embedded open vswitch (no lab uses it)")
		}
	}
}

// markedRootLabs lists the labs that have OVS port devices in the root
// namespace.
func markedRootLabs() []string {
	seen := map[string]bool{}
	for _, l := range rootLinks() {
		if lab, ok := labFromMarker(l.Attrs().Alias); ok && strings.Contains(l.Attrs().Alias, " ovs") {
			seen[lab] = true
		}
	}
	var out []string
	for l := range seen {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// OVSLeaks lists Open vSwitch leftovers: rows carrying an emuctl marker
// in any reachable database, and emuctl's embedded daemons. While labs
// with ovs switches run, their rows and the daemons are listed too (as
// Leaks lists their namespaces).
func OVSLeaks() []string {
	var out []string
	e := embeddedOVS()
	for _, d := range e.Running() {
		out = append(out, fmt.Sprintf("embedded %s (pid %d, %s)", d.Name, d.PID, e.Dir))
	}
	st := &State{}
	for _, ep := range ovsEndpoints(st) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		c, err := ovs.Dial(ctx, ep)
		cancel()
		if err != nil {
			continue
		}
		m, _ := c.Markers(context.Background())
		c.Close()
		for k, n := range m {
			out = append(out, fmt.Sprintf("%d open vswitch rows of %s in %s", n, k, ep))
		}
	}
	sort.Strings(out)
	return out
}

// rootLinks lists the root namespace's interfaces (nil on failure).
func rootLinks() []netlink.Link {
	h, err := netlink.NewHandleAt(hostNetns, unix.NETLINK_ROUTE)
	if err != nil {
		return nil
	}
	defer h.Close()
	links, _ := h.LinkList()
	return links
}

// ovsDBMarkers is what one Open vSwitch database holds of emuctl: the
// markers on its rows, sorted, or the error the query gave.
type ovsDBMarkers struct {
	ep      string
	markers []string
	err     error
}

// ovsMarkers asks every Open vSwitch database that answers (the system one
// and emuctl's embedded one) for the emuctl markers on its rows; one that
// cannot be dialled is left out.
func ovsMarkers() []ovsDBMarkers {
	var eps []string
	if ep, _ := systemOVSDB(); fileExists(socketPath(ep)) {
		eps = append(eps, ep)
	}
	if e := embeddedOVS(); len(e.Running()) > 0 {
		eps = append(eps, e.Endpoint())
	}
	var out []ovsDBMarkers
	for _, ep := range eps {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		c, err := ovs.Dial(ctx, ep)
		cancel()
		if err != nil {
			continue
		}
		markers, err := c.Markers(context.Background())
		c.Close()
		db := ovsDBMarkers{ep: ep, err: err}
		for m := range markers {
			db.markers = append(db.markers, m)
		}
		sort.Strings(db.markers)
		out = append(out, db)
	}
	return out
}

// ovsLeaks lists, for Leaks, the Open vSwitch rows that carry an emuctl
// marker, as "open vswitch rows of LAB (ENDPOINT)".
func ovsLeaks() []string {
	var out []string
	for _, db := range ovsMarkers() {
		for _, m := range db.markers {
			if lab, ok := labFromMarker(m); ok {
				out = append(out, fmt.Sprintf("open vswitch rows of %s (%s)", lab, db.ep))
			}
		}
	}
	return out
}
