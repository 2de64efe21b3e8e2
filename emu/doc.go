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
package emu
