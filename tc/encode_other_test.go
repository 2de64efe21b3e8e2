//go:build !linux

package tc

import "testing"

// checkEncodes: the rtnetlink encoder is Linux-only; elsewhere the plan is
// checked as data alone.
func checkEncodes(*testing.T, int, Qdisc) {}
