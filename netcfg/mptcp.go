package netcfg

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/internal/mptcppm"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

const (
	mptcpEnabledKey = "net.mptcp.enabled"
	pmTypeKey       = "net.mptcp.pm_type" // 0 kernel, 1 userspace
	schedulerKey    = "net.mptcp.scheduler"
	schedulersKey   = "net.mptcp.available_schedulers"
)

var pathManagers = []string{"kernel", "userspace"} // index = pm_type

// ErrNoMPTCP is wrapped by errors from kernels without MPTCP.
var ErrNoMPTCP = mptcppm.ErrNoMPTCP

// MPTCPState is a node's effective MPTCP configuration, read back.
type MPTCPState struct {
	Enabled     bool          `json:"enabled"`
	PathManager string        `json:"path_manager"`
	Scheduler   string        `json:"scheduler"`
	Limits      Limits        `json:"limits"`
	Endpoints   []Endpoint    `json:"endpoints,omitempty"`
	Policy      []PolicyRoute `json:"policy_routing,omitempty"`
}

// Limits are the in-kernel path manager's limits of a namespace.
type Limits struct {
	Subflows        int `json:"subflows"`
	AddAddrAccepted int `json:"add_addr_accepted"`
}

// ApplyMPTCP applies node's mptcp: block inside ns, in this order: the
// sysctls net.mptcp.enabled, pm_type and scheduler; limits and endpoints
// through mptcp_pm (existing endpoints are flushed first, so applying twice
// gives the same result); source-based policy routing through h, a netlink
// handle in ns. Everything is read back and compared with PlanMPTCP's plan.
// A node without an mptcp: block is left alone (nil, nil).
func ApplyMPTCP(ns netns.NsHandle, h *netlink.Handle, node *topo.Node, spec *topo.Spec) (*MPTCPState, error) {
	plan, err := PlanMPTCP(node, spec)
	if err != nil || plan == nil {
		return nil, err
	}
	err = do(ns, func() error {
		if !hasSysctl(mptcpEnabledKey) {
			return ErrNoMPTCP
		}
		if err := writeSysctl(mptcpEnabledKey, map[bool]string{false: "0", true: "1"}[plan.Enabled]); err != nil {
			return err
		}
		if plan.PathManager != "" {
			if !hasSysctl(pmTypeKey) {
				return fmt.Errorf("mptcp.path_manager %s: this kernel has no %s (Linux 5.19+)", plan.PathManager, pmTypeKey)
			}
			if err := writeSysctl(pmTypeKey, strconv.Itoa(slices.Index(pathManagers, plan.PathManager))); err != nil {
				return err
			}
		}
		if plan.Scheduler != "" {
			avail := []string{"default"}
			if s, err := readSysctl(schedulersKey); err == nil {
				avail = strings.Fields(s)
			}
			if !slices.Contains(avail, plan.Scheduler) {
				return fmt.Errorf("MPTCP scheduler %q is not available in this kernel (available: %s)", plan.Scheduler, strings.Join(avail, " "))
			}
			if hasSysctl(schedulerKey) {
				return writeSysctl(schedulerKey, plan.Scheduler)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// With MPTCP off the plan has no endpoints and no policy routing:
	// applying it clears what an earlier apply left.
	if err := applyPM(ns, h, plan); err != nil {
		return nil, err
	}
	var entries []topo.TCPRoute
	if node.TCP != nil {
		entries = node.TCP.Routes
	}
	if err := applyPolicy(h, plan.Policy, entries); err != nil {
		return nil, err
	}
	st, err := readMPTCP(ns, h)
	if err != nil {
		return nil, err
	}
	return st, verifyMPTCP(plan, st)
}

// applyPM sets limits and endpoints through mptcp_pm.
func applyPM(ns netns.NsHandle, h *netlink.Handle, plan *MPTCPPlan) error {
	pm, err := mptcppm.Dial(ns)
	if err != nil {
		return err
	}
	defer pm.Close()
	if l := plan.Limits; l != nil {
		sub, acc, err := pm.Limits()
		if err != nil {
			return fmt.Errorf("read MPTCP limits: %w", err)
		}
		if l.Subflows >= 0 {
			sub = uint32(l.Subflows)
		}
		if l.AddAddrAccepted >= 0 {
			acc = uint32(l.AddAddrAccepted)
		}
		if err := pm.SetLimits(sub, acc); err != nil {
			return fmt.Errorf("set MPTCP limits subflows %d add_addr_accepted %d: %w", sub, acc, err)
		}
	}
	if err := pm.Flush(); err != nil {
		return fmt.Errorf("flush MPTCP endpoints: %w", err)
	}
	for _, e := range plan.Endpoints {
		flags, err := mptcppm.FlagBits(e.Flags)
		if err != nil {
			return err
		}
		pe := mptcppm.Endpoint{ID: uint8(e.ID), Addr: e.Addr.AsSlice(), Port: uint16(e.Port), Flags: flags}
		if e.Interface != "" {
			l, err := h.LinkByName(e.Interface)
			if err != nil {
				return fmt.Errorf("MPTCP endpoint %s: %w", e, err)
			}
			pe.IfIndex = int32(l.Attrs().Index)
		}
		if err := pm.AddEndpoint(pe); err != nil {
			return fmt.Errorf("add MPTCP endpoint %s: %w", e, err)
		}
	}
	return nil
}

// verifyMPTCP compares what was read back with the plan.
func verifyMPTCP(plan *MPTCPPlan, st *MPTCPState) error {
	var bad []string
	if st.Enabled != plan.Enabled {
		bad = append(bad, fmt.Sprintf("enabled is %v", st.Enabled))
	}
	if plan.PathManager != "" && st.PathManager != plan.PathManager {
		bad = append(bad, "path manager is "+st.PathManager)
	}
	if plan.Scheduler != "" && st.Scheduler != plan.Scheduler {
		bad = append(bad, "scheduler is "+st.Scheduler)
	}
	if plan.Enabled {
		if l := plan.Limits; l != nil {
			if l.Subflows >= 0 && st.Limits.Subflows != l.Subflows || l.AddAddrAccepted >= 0 && st.Limits.AddAddrAccepted != l.AddAddrAccepted {
				bad = append(bad, fmt.Sprintf("limits are subflows %d add_addr_accepted %d", st.Limits.Subflows, st.Limits.AddAddrAccepted))
			}
		}
		if len(st.Endpoints) != len(plan.Endpoints) {
			bad = append(bad, fmt.Sprintf("%d endpoints instead of %d", len(st.Endpoints), len(plan.Endpoints)))
		}
		for _, want := range plan.Endpoints {
			if !slices.ContainsFunc(st.Endpoints, func(got Endpoint) bool { return sameEndpoint(want, got) }) {
				bad = append(bad, "endpoint "+want.String()+" is missing")
			}
		}
		if len(st.Policy) != len(plan.Policy) {
			bad = append(bad, fmt.Sprintf("%d policy routing tables instead of %d", len(st.Policy), len(plan.Policy)))
		}
		for _, want := range plan.Policy {
			if !slices.Contains(st.Policy, want) {
				bad = append(bad, "policy routing "+want.String()+" is missing")
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("MPTCP read back differs from what was applied: %s", strings.Join(bad, "; "))
	}
	return nil
}

func sameEndpoint(want, got Endpoint) bool {
	return want.Addr == got.Addr && (want.ID == 0 || want.ID == got.ID) && want.Port == got.Port &&
		want.Interface == got.Interface && slices.Equal(want.Flags, got.Flags)
}

// ReadMPTCP reads the MPTCP configuration of the namespace ns (for emuctl
// inspect and mptcp check).
func ReadMPTCP(ns netns.NsHandle) (*MPTCPState, error) {
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	return readMPTCP(ns, h)
}

func readMPTCP(ns netns.NsHandle, h *netlink.Handle) (*MPTCPState, error) {
	st := &MPTCPState{PathManager: "kernel", Scheduler: "default"}
	err := do(ns, func() error {
		if !hasSysctl(mptcpEnabledKey) {
			return ErrNoMPTCP
		}
		v, err := readSysctl(mptcpEnabledKey)
		if err != nil {
			return err
		}
		st.Enabled = v != "0"
		if v, err := readSysctl(pmTypeKey); err == nil {
			if i, _ := strconv.Atoi(v); i >= 0 && i < len(pathManagers) {
				st.PathManager = pathManagers[i]
			} else {
				st.PathManager = "pm_type " + v
			}
		}
		if v, err := readSysctl(schedulerKey); err == nil {
			st.Scheduler = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	pm, err := mptcppm.Dial(ns)
	if err != nil {
		return nil, err
	}
	defer pm.Close()
	sub, acc, err := pm.Limits()
	if err != nil {
		return nil, fmt.Errorf("read MPTCP limits: %w", err)
	}
	st.Limits = Limits{Subflows: int(sub), AddAddrAccepted: int(acc)}
	eps, err := pm.Endpoints()
	if err != nil {
		return nil, fmt.Errorf("read MPTCP endpoints: %w", err)
	}
	for _, e := range eps {
		a, _ := netip.AddrFromSlice(e.Addr)
		ep := Endpoint{ID: int(e.ID), Addr: a.Unmap(), Port: int(e.Port), Flags: mptcppm.FlagNames(e.Flags)}
		if e.IfIndex > 0 {
			if l, err := h.LinkByIndex(int(e.IfIndex)); err == nil {
				ep.Interface = l.Attrs().Name
			} else {
				ep.Interface = fmt.Sprintf("ifindex %d", e.IfIndex)
			}
		}
		st.Endpoints = append(st.Endpoints, ep)
	}
	st.Policy, err = readPolicy(h)
	return st, err
}

// ExpectedSubflows estimates how many subflows (the initial one included)
// the in-kernel path managers of client and server set up for a
// connection from client to dst: the server's signal endpoints of dst's
// family that the client accepts, plus the client's subflow endpoints of
// that family, within both ends' subflow limits. It is 1 when either end
// has MPTCP off or uses the userspace path manager.
func ExpectedSubflows(client, server *MPTCPState, dst netip.Addr) int {
	if client == nil || server == nil || !client.Enabled || !server.Enabled ||
		client.PathManager != "kernel" || server.PathManager != "kernel" {
		return 1
	}
	announced, local := 0, 0
	for _, e := range server.Endpoints {
		if e.Addr.Is4() == dst.Is4() && e.Addr != dst && slices.Contains(e.Flags, "signal") {
			announced++
		}
	}
	for _, e := range client.Endpoints {
		if e.Addr.Is4() == dst.Is4() && slices.Contains(e.Flags, "subflow") {
			local++
		}
	}
	extra := min(announced, client.Limits.AddAddrAccepted) + local
	extra = min(extra, client.Limits.Subflows, server.Limits.Subflows)
	return 1 + extra
}
