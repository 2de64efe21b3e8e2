package suite

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/emuctl/emuctl/emu"
)

// hostConditions records the machine a suite ran on: kernel, CPUs, the
// capability table of `emuctl doctor` and the backend of each concern.
func hostConditions() map[string]string {
	c := map[string]string{"cpus": fmt.Sprint(runtime.NumCPU())}
	r := emu.Doctor()
	c["kernel"] = r.Kernel
	for _, cp := range r.Capabilities {
		v := "no"
		if cp.OK {
			v = "yes"
		}
		if cp.Detail != "" {
			v += " (" + firstLine(cp.Detail) + ")"
		}
		c["capability."+cp.Name] = v
	}
	for _, b := range r.Backends {
		c["backend."+b.Concern] = b.Uses
	}
	for _, k := range []string{"tcp_available_congestion_control", "tcp_allowed_congestion_control"} {
		if b, err := os.ReadFile("/proc/sys/net/ipv4/" + k); err == nil {
			c["host."+k] = strings.TrimSpace(string(b))
		}
	}
	return c
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}
