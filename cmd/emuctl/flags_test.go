package main

import (
	"strings"
	"testing"
)

// TestTypedFlags: rates, delays, percentages, sizes and durations are
// typed flags: a bad value is refused while the flags are parsed, naming
// the flag and saying what would be valid, before any lab is looked up
// (no lab runs under these names).
func TestTypedFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"link", "set", "0", "--lab", "tflags-none", "--rate", "10mbps"}, `invalid argument "10mbps" for "--rate" flag: rate "10mbps" is in bytes per second`},
		{[]string{"link", "set", "0", "--lab", "tflags-none", "--delay", "5"}, `"--delay" flag: duration "5" has no unit: write e.g. 5ms or 5us`},
		{[]string{"link", "set", "0", "--lab", "tflags-none", "--jitter", "2m"}, `"--jitter" flag: duration "2m" is too long (valid: 0 .. 60s)`},
		{[]string{"link", "set", "0", "--lab", "tflags-none", "--loss", "101%"}, `"--loss" flag: percentage "101%" is out of range (valid: 0% .. 100%)`},
		{[]string{"link", "set", "0", "--lab", "tflags-none", "--corrupt", "x"}, `"--corrupt" flag: percentage "x" is not a number`},
		{[]string{"traffic", "--lab", "tflags-none", "--from", "a", "--to", "b", "--rate", "10"}, `"-b, --rate" flag: rate "10" has no unit`},
		{[]string{"traffic", "--lab", "tflags-none", "--from", "a", "--to", "b", "-t", "10"}, `"-t, --time" flag: duration "10" has no unit: write e.g. 10s or 10ms`},
		{[]string{"traffic", "--lab", "tflags-none", "--from", "a", "--to", "b", "--sndbuf", "4XB"}, `"--sndbuf" flag: size "4XB" is not valid (e.g. 262144, 256KiB, 4MiB)`},
	} {
		r := run(t, "", c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("emuctl %s: exit %d, stderr %q; want an error containing %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
		if strings.Contains(r.stderr, "tflags-none") {
			t.Errorf("emuctl %s: looked for the lab before refusing the flag: %q", strings.Join(c.args, " "), r.stderr)
		}
	}
	// good values reach the lab lookup (and fail there: no such lab)
	r := run(t, "", "link", "set", "0", "--lab", "tflags-none", "--rate", "2.5mbit", "--delay", "5msec", "--loss", "0.5")
	if r.code == 0 || !strings.Contains(r.stderr, `no lab "tflags-none" is running`) {
		t.Errorf("good values: exit %d, stderr %q", r.code, r.stderr)
	}
}
