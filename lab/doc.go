// Package lab is emuctl's Go API: build a lab from a topology — a YAML
// file, or one described in Go with the Topology builder — work in it,
// change its links, drive traffic through it and measure, and take it
// down, from a Go program instead of the command line.
//
//	t := lab.NewTopology("demo").
//		Host("h1").Host("h2").Switch("s1").
//		Link("h1", "s1", lab.Rate(10*units.Mbit), lab.Delay(5*time.Millisecond)).
//		Link("h2", "s1")
//	l, err := lab.Up(ctx, t, lab.Options{})
//	if err != nil { ... }
//	defer l.Down()
//	rtt, err := l.Ping(ctx, "h1", "h2")               // ≥ 10 ms: 2 × 5 ms
//	res, err := l.Traffic(ctx, lab.Flow{Client: "h1", Server: "h2", Duration: 5 * time.Second})
//	err = l.SetLink("h1-s1", lab.Rate(20*units.Mbit)) // while it runs
//
// What it owns: nothing of its own. It is the public face of the packages
// that do the work — topo (decoding, validation, resolution), emu (the
// running lab), traffic (flows) — and wraps their entry points in one
// handle, *Lab, with errors as values: it never prints and never exits.
// The builder writes the YAML document a user would write and loads it
// with topo, so a Go topology and a file obey one set of rules and give
// one Spec (Topology.YAML shows the file).
//
// Why a package of its own rather than the module root: the root is the
// repository (README, Makefile, cmd/emuctl, topologies/), and its
// packages are the CLI's as much as a program's; a package named for what
// it hands out reads right where it is used (lab.Up, lab.NewTopology,
// *lab.Lab, lab.Rate), and the engine (topo, emu and below) never
// imports it, so it stays a thin layer on top of it. Its clients are
// programs, `emuctl api` and the web page, and the CLI itself:
// cmd/emuctl reaches the runtime only through lab (a test there pins it),
// so what a command does, a program can.
//
// # By name
//
// Besides *Lab, package-level functions act on a lab given by its name
// or its State (ReadState, Labs, Deploy, Down, ShowLinks, Schedules,
// Mobility, Verify, ...), and on the host (Doctor, Clean, Leaks): they
// serve callers that read a lab's state once and act on it, as the CLI's
// commands do. Each is the path the Lab method of the same name takes;
// the types they take and return are lab's: copies with the runtime's
// fields and JSON (PingResult, ScheduleStatus, ...), or for the larger
// ones (State, LinkInfo, WiFiNodeStatus, ...) emu's under lab's name.
//
// # Root and re-execution
//
// Up, Open and every Lab method act on the host's kernel: run the program
// as root (CAP_NET_ADMIN and CAP_SYS_ADMIN). Building a Topology and
// resolving it (Spec, YAML) needs nothing. Some of a lab's processes are
// the program itself, re-executed: the exec helper behind Command/Exec/
// Output, the lab's supervisor (userspace link engines, the Wi-Fi
// medium), the Wi-Fi daemon keeper. Importing lab (through emu) is all it
// takes to serve those roles — no call in main, no flag — and the
// supervisor outlives the program until Down, so a lab left up is still
// whole: Open finds it, and `emuctl down` removes it.
//
// # Names
//
// Nodes are named as in the topology. A link is named as `emuctl link`
// names it: its index ("0"), an end ("h1:h1-eth0"), its two nodes
// ("h1-s1"), or a station for its wireless hop ("sta1").
package lab
