// Package netcfg owns the per-node TCP profile and MPTCP configuration
// inside a node's network namespace: TCP sysctls (congestion control, SACK,
// timestamps, ECN, buffers, RACK bits, no_metrics_save), per-route TCP
// metrics (quickack, initcwnd, initrwnd, congctl), MPTCP sysctls
// (enabled, path manager, scheduler), MPTCP limits and endpoints through
// the mptcp_pm generic netlink family, and source-based policy routing for
// multihomed MPTCP nodes. It reads everything it applies back and fails
// when the kernel kept something else: a setting that cannot be applied is
// an error, never a warning.
//
// It also verifies MPTCP end to end (CheckMPTCP: an MPTCP connection
// between two nodes, subflows per path from MPTCP_FULL_INFO) and offers
// per-socket congestion control (SetSocketCC) for emuctl's own traffic.
//
// netcfg works on namespaces and netlink handles it is given; it never
// creates or deletes namespaces or links (that is emu's job) and never logs.
// The one host-wide change it can make, extending the root namespace's
// net.ipv4.tcp_allowed_congestion_control, happens only through
// ExtendAllowedCC, which its caller must record and undo (RestoreAllowedCC).
// PlanMPTCP and the preflight checks are pure and need no privileges.
package netcfg
