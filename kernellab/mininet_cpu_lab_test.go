package kernellab

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cpuLimitScript is a Mininet script: two CPULimitedHost(sched='cfs',
// cpu=0.25) hosts (each a quarter of the machine), Mininet's own
// runCpuLimitTest (busy loops in each host, the CPU each got per second
// as a percentage of the machine), and what the layer made of the limit.
const cpuLimitScript = `
import json
from mininet.net import Mininet
from mininet.node import CPULimitedHost
from mininet.nodelib import LinuxBridge
from mininet.topo import SingleSwitchTopo
from mininet.util import custom
from mininet.log import setLogLevel
setLogLevel("warning")
net = Mininet(topo=SingleSwitchTopo(2), host=custom(CPULimitedHost, sched="cfs", cpu=0.25),
              switch=LinuxBridge, controller=None)
net.start()
h1 = net["h1"]
out = {"cgroup": h1.cmd("cat /proc/self/cgroup").strip(), "groups": h1.groups}
out["cpu.max"] = open(h1.groups["v2"] + "/cpu.max").read().strip() if "v2" in h1.groups else ""
out["results"] = net.runCpuLimitTest(cpu=0.25, duration=4)
net.stop()
print(json.dumps(out))
`

// TestLabMininetCPULimitV2: the Mininet layer's CPULimitedHost on cgroup v2
// (the VM mounts cgroup2 with the cpu controller; the build machine has
// cgroup v1, where make test-mininet's test_limit covers it): each host
// gets a group of its own with cpu.max = 0.25 x 2 CPUs of every period,
// its shell is in it, and Mininet's runCpuLimitTest measures what the
// busy loops got: never more than the quarter of the machine (a second's
// sample may straddle periods: +2.5 points), and on average at least 80 %
// of it (the guest's CPUs are host threads; a host that takes them away
// lowers it, never raises it).
func TestLabMininetCPULimitV2(t *testing.T) {
	RequireLab(t, "cgroup v2 CPU limits of the Mininet layer's CPULimitedHost")
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err != nil || !strings.Contains(string(b), "cpu") {
		t.Skipf("this lab VM has no cgroup v2 cpu controller (/sys/fs/cgroup/cgroup.controllers: %q, %v)", b, err)
	}
	bin := os.Getenv("EMUCTL_BIN")
	if bin == "" {
		bin = "../bin/emuctl"
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "cpulimit.py")
	if err := os.WriteFile(script, []byte(cpuLimitScript), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command(bin, "mininet", script)
	b, err := cmd.Output()
	t.Logf("emuctl mininet cpulimit.py (%v): %s", time.Since(start).Round(time.Second), b)
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("%v: %s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var out struct {
		Cgroup  string            `json:"cgroup"`
		Groups  map[string]string `json:"groups"`
		CPUMax  string            `json:"cpu.max"`
		Results []float64         `json:"results"`
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &out); err != nil {
		t.Fatalf("script output: %v", err)
	}
	g := out.Groups["v2"]
	if g == "" || !strings.HasPrefix(out.Cgroup, "0::/") || !strings.HasSuffix(g, strings.TrimPrefix(out.Cgroup, "0::")) {
		t.Errorf("h1's shell is in %q, its group %q: not a cgroup v2 group of its own", out.Cgroup, g)
	}
	if out.CPUMax != "50000 100000" {
		t.Errorf("cpu.max %q, want 50000 100000 (a quarter of 2 CPUs per 100 ms period)", out.CPUMax)
	}
	if len(out.Results) != 8 {
		t.Fatalf("%d samples, want 2 hosts x 4 s", len(out.Results))
	}
	sum := 0.0
	for _, r := range out.Results {
		sum += r
		if r > 25+2.5 {
			t.Errorf("a second's sample %.1f %% of the machine, over the 25 %% limit", r)
		}
	}
	if mean := sum / float64(len(out.Results)); mean < 0.8*25 {
		t.Errorf("mean %.1f %% of the machine, under 80 %% of the 25 %% limit", mean)
	}
	_ = exec.Command(bin, "clean").Run()
}
