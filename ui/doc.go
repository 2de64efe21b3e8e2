// Package ui is `emuctl ui`: a live web page of a running lab — its
// topology, each link's configured parameters and measured throughput per
// direction, drops and state, the lab's events — served over HTTP on
// loopback behind a random token, and with --allow-changes a way to set a
// link's parameters and pull or plug it, move a Wi-Fi station and open a
// terminal into a node from the page. The same page follows a
// suite as it runs (emuctl test --ui: suite.go, a SuiteFeed the runner
// sets; each run's lab as it comes and goes; the report at the end), and
// a results directory is served on its own (emuctl report --ui:
// report.go).
//
// What it owns: the HTTP server (server.go: the token, the method list a
// page may call), the event stream to each page (events.go: server-sent
// events, bounded clients, slow ones dropped), a node's terminal
// (terminal.go: the API's tty — bash on a pseudo-terminal — over a
// WebSocket) and the page itself (static/, our own small JavaScript and
// SVG, its terminal emulator term.js and its large labs' layout and
// clustering layout.js included, embedded with go:embed: no CDN, nothing
// fetched at build time).
//
// What it must not do: reach the lab any other way than through package
// api's in-process client (api.NewClient): a page reads and changes a lab
// with the methods and the event stream `emuctl api` serves, so the CLI,
// the API and the page share one code path into package lab.
package ui
