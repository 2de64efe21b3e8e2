// Package suites embeds the built-in experiment suites (the four studies,
// a bufferbloat smoke suite and the Wi-Fi medium's physics) so `emuctl test <name>` works from any
// directory. Each <name>.yaml is a suite file; see suite/doc.go.
package suites

import "embed"

// FS holds every *.yaml suite of this directory.
//
//go:embed *.yaml
var FS embed.FS
