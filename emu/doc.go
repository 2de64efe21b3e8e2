// Package emu is the runtime: it turns a topo.Spec into a running lab of
// network namespaces, veth pairs, Linux bridges, addresses, routes, sysctls
// and processes, and takes it down again.
//
// It is the only package that orchestrates host changes. Everything it
// creates carries the lab's ownership marker (the alias "emuctl:<lab>" on the
// loopback of each namespace and on every interface it makes), and a state
// directory per lab (/run/emuctl/<lab>/) records what was made. Teardown and
// Clean find objects by marker, never by name pattern, and never touch a
// namespace, interface or process emuctl did not create.
//
// Every node, switches included, lives in its own network namespace named
// "<lab>.<node>", visible to `ip netns`.
//
// A deploy runs phases in order (deploy.go: namespaces, links, externals,
// shaping, ovs, wifi, routes, sysctls, netcfg, hosts, wait, start), each
// journalled first so a crash at any point leaves records clean can
// follow (journal.go). Nodes go through one interface per kind (kind.go:
// host, router, Linux bridge switch, ovs switch, access point, station,
// root), picked from one registry: a kind makes and sets up its node in
// the namespaces phase, at up and in a change alike, and removes it in a
// change; the kinds with lab-wide parts contribute the phases named after
// them (ovs, wifi). Links go through one interface whatever they are
// made of (link.go): a veth pair, kernel-shaped or not (link_veth.go), a
// userspace-engine link (link_engine.go), a link with an Open vSwitch
// port at an end (link_ovs.go), a station's wireless hop (link_wifi.go);
// the phases, `link set/show/up/down` and verify ask a link's kind,
// picked from the link registry beside the node kinds'. The
// lab's one supervisor process (supervisor.go) runs the userspace link
// engines and the Wi-Fi medium (wifi_medium.go for hwsim radios,
// wifi_engine.go for the engine backend's veth ports).
//
// A running lab changes through the same phases (change.go): AddNode,
// AddLink, RemoveLink and RemoveNode edit the lab's topology (topo's
// edit.go), build what the edit adds with a deployer scoped to it, remove
// what it drops, and follow changed routes; the lab's document is kept in
// its state dir (topology.yaml), and Topology writes the lab as it stands.
// Open vSwitch bridges and ports a change adds or removes are planned
// beside the recorded ones and added or deleted in one OVSDB transaction
// (ovs_change.go).
//
// A lab over several machines (topo.Cluster) has a controller — Deploy on
// a Spec whose Cluster has no Slice (cluster.go) — and one worker per
// machine, Deploy on that machine's slice (cluster_worker.go), reached by
// nsenter into a local machine's namespaces (cluster_local.go) or over
// SSH (cluster_ssh.go); a link cut between machines is a VXLAN tunnel end
// (link_vxlan.go; on an ovs switch, a port of its bridge), its delay less
// the underlay's (cluster_underlay.go). Packages built on emu run their
// own roles on a node's machine through MachineCommand (cluster_role.go:
// traffic's flow ends there), and interrupt commands there by closing
// their input (CommandInterruptible; ssh passes no signal on). Its links'
// counters are read by each machine's worker, streamed to a
// CounterReader on the controller (counters_cluster.go).
//
// Some of a lab's processes are the running binary re-executed in a
// named role: the exec helper behind Command, the supervisor, the keeper
// of a node's Wi-Fi daemons, a machine's worker and the holder of a local
// machine's new mount namespace. Importing emu is all a program needs to serve
// them: an init dispatches on the role name in os.Args and exits with the
// role's status (roles.go). Nothing else in emu ends the process (the
// test-only crash hooks aside) or needs to be called first.
package emu
