// Package suite runs experiment suites: `emuctl test <suite>` builds the
// network, runs every scenario and says which checks hold.
//
// A suite file (YAML; the built-in ones are in topologies/suites and are
// embedded in the binary) is a topology template, a parameter matrix,
// profiles, flows and checks:
//
//	suite: sack-reno                  # marks the file as a suite
//	title: ...
//	params:                           # every combination is a scenario
//	  loss: [0%, 1%, 5%]              # label = the value as written
//	  sack: {on: true, off: false}    # label: value (any YAML value)
//	exclude: [{loss: 0%, sack: off}]  # combinations to leave out
//	profiles:                         # quick (CI), default, paper
//	  quick: {duration: 10s, reps: 1, params: {loss: [0%, 5%]}}
//	topology: {...}                   # an emuctl topology; "${sack}", "${p.field}"
//	flows: [...]                      # traffic flows-file entries; when: {param: label}
//	collect: [cong_state]             # tracefs recovery episodes
//	checks:
//	  - {id: C1, class: physics, per: run, expect: "goodput_whole <= 1.02 * cap(54mbit)"}
//	  - {id: S1-2, class: behaviour, for: loss, where: {loss: [5%]},
//	     expect: "goodput{sack=on} / goodput{sack=off} - 1 >= 15%"}
//	  - {id: S1-8, class: reference, show: "...", paper: "+15–20 %"}
//	plots: [{kind: bars, metric: goodput}]
//
// Placeholders are substituted in the YAML tree, so every problem in an
// instantiated topology or flow is still reported at the suite file's
// line and column (topo's error style); a value reached through a
// parameter is reported where the parameter's value is written.
//
// Checks are expressions (package suite/expr: the language, its
// functions and evaluation) over per-run metrics (catalogue.go),
// parameters and model functions. A per-run check judges each run; a
// scenario-level check compares scenarios, each metric being the median
// over the scenario's valid repetitions, selected by where:, for: and a
// reference's own {param=label}. Classes: physics and behaviour gate the
// exit code; a failed fidelity check makes that run invalid (it is left
// out and made again once); reference rows put the study's numbers beside
// ours and never gate.
//
// The runner (Run) gives every repetition a fresh lab, in an order
// shuffled by a recorded seed, once the kernel has finished freeing
// earlier labs' namespaces (settle.go; the wait is a run condition),
// measures the idle path (pings), CPU load
// and host stalls, link-engine and OVS queue counters and, when asked,
// recovery episodes in a private tracefs instance; Ctrl-C (a cancelled
// context) stops the flows, tears the lab down and keeps the runs made.
// Output: raw results (analysis format) and per-run sidecars under runs/,
// runs.csv, checks.csv, outcome.json, plots/, the analysis report under
// analysis/, and report.md with the check table, medians per scenario
// and what limited each TCP/MPTCP flow and subflow (report_limited.go).
//
// A reference: block names a simulator program for the same scenarios
// (reference.go: emuctl's own ns-3 programs in validate/ns3, the flags
// per scenario); with Options.Reference the runner builds it first and
// runs it after the labs (reference_run.go), converts its JSON into the
// metric names (reference_data.go), judges every check but the fidelity
// ones on those runs too, and the report shows them in an ns-3 column
// beside Linux and the paper (report_reference.go).
//
// It changes the host only through emu (labs), its own tracefs instance
// and the reference programs' build directory, and touches nothing
// outside the labs it builds.
package suite
