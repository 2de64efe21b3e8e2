package main

import (
	"os"
	"runtime/debug"
)

// longLivedGC lets a process that makes change after change on a lab
// (emuctl api, ui, bench --change) collect garbage a quarter as often as
// Go's default: each change builds a new Spec and its JSON, and at the
// default a fifth of a change's CPU went to the collector. Its heap may
// grow to 5× what is live (a few MB for a 1,000-node lab). GOGC, when
// set, wins.
func longLivedGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
