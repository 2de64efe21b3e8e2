package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/ovs"
)

// The Mininet commands of `emuctl cli`, typed as a Mininet user types
// them, on `single,3` with every link shaped to 10 Mbit/s: iperf measures
// the link's goodput capacity, iperfudp the rate asked, `link h1 s1 down`
// cuts pingpair off and `up` restores it, intfs and ports name the real
// interfaces, time, source, sh and noecho run what they say, and x/xterm
// without tmux or a display say what is missing.
func TestCLIMininet(t *testing.T) {
	needRoot(t)
	const lab = "tclimn"
	must(t, run(t, "", "up", "--topo", "single,3", "--link", "rate=10mbit", "--name", lab), "up")
	t.Cleanup(func() { run(t, "", "down", lab) })
	dir := t.TempDir()
	src := filepath.Join(dir, "cmds.cli")
	os.WriteFile(src, []byte("# a comment\nh2 echo sourced in $(hostname)\nexit\nnodes\n"), 0o644)
	script := []string{
		"intfs",
		"ports",
		"iperf",
		"iperfudp 5M h1 h2",
		"link h1 s1 down",
		"links",
		"pingpair",
		"link s1 h1 up",
		"pingpair",
		"pingpairfull",
		"time h1 sleep 0.3",
		"source " + src,
		"sh hostname",
		"noecho h3 hostname",
		"dpctl show",
		"xterm h1",
		"x h2",
		"py net.hosts",
		"link h1 h2 down",
		"bogus arg",
		"help",
		"exit",
	}
	r := must(t, runCLIEnv(t, strings.Join(script, "\n")+"\n", []string{"TMUX", "DISPLAY"}, nil, "cli", "-l", lab), "cli")
	outs := strings.Split(r.stdout, "emuctl("+lab+")> ")
	if len(outs) != len(script)+1 {
		t.Fatalf("%d prompts for %d commands:\n%s", len(outs)-1, len(script), r.stdout)
	}
	out := map[string]string{} // the first output of each command line
	for i, cmd := range script {
		if _, seen := out[cmd]; !seen {
			out[cmd] = outs[i+1]
		}
	}
	expect := func(cmd string, got string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(got, w) {
				t.Errorf("%s: output lacks %q:\n%s", cmd, w, got)
			}
		}
	}
	expect("intfs", out["intfs"], "h1: h1-eth0\n", "h3: h3-eth0\n", "s1: lo,s1-eth1,s1-eth2,s1-eth3\n")
	expect("ports", out["ports"], "s1 lo:0 s1-eth1:1 s1-eth2:2 s1-eth3:3\n")

	// 10 Mbit/s on the wire carries 1448 bytes of payload per 1514-byte frame
	capacity := 10e6 * 1448 / 1514
	expect("iperf", out["iperf"], "*** Iperf: testing TCP bandwidth between h1 and h3\n")
	rates := iperfResults(t, out["iperf"], 2)
	t.Logf("iperf h1 h3: server %.3f Mbit/s (%.3f of the goodput capacity), client %.3f Mbit/s", rates[0]/1e6, rates[0]/capacity, rates[1]/1e6)
	if rates[0] < 0.9*capacity || rates[0] > 1.02*capacity {
		t.Errorf("iperf: the server received %.3f Mbit/s, want 0.9–1.02 × %.3f", rates[0]/1e6, capacity/1e6)
	}
	if rates[1] < 0.9*capacity {
		t.Errorf("iperf: the client wrote %.3f Mbit/s, below 0.9 × %.3f", rates[1]/1e6, capacity/1e6)
	}
	expect("iperfudp", out["iperfudp 5M h1 h2"], "*** Iperf: testing UDP bandwidth between h1 and h2\n", "*** Results: ['5M', '")
	udp := iperfResults(t, out["iperfudp 5M h1 h2"], 3)
	t.Logf("iperfudp 5M h1 h2: server %.3f Mbit/s, client %.3f Mbit/s", udp[1]/1e6, udp[2]/1e6)
	for i, who := range []string{"", "server", "client"} {
		if i > 0 && (udp[i] < 0.95*5e6 || udp[i] > 1.02*5e6) {
			t.Errorf("iperfudp 5M: %s %.3f Mbit/s, want 0.95–1.02 × 5", who, udp[i]/1e6)
		}
	}

	expect("links after link h1 s1 down", out["links"], "h1-eth0<->s1-eth1 (DOWN DOWN)", "h2-eth0<->s1-eth2 (OK OK)")
	expect("pingpair, h1-s1 down", outs[7], "h1 -> X\nh2 -> X\n*** Results: 100% dropped (0/2 received)\n")
	expect("pingpair, h1-s1 up again", outs[9], "h1 -> h2\nh2 -> h1\n*** Results: 0% dropped (2/2 received)\n")
	if !regexp.MustCompile(`(?m)^ h1->h2: 1/1, rtt min/avg/max/mdev \d+\.\d{3}/\d+\.\d{3}/\d+\.\d{3}/0\.000 ms$`).MatchString(out["pingpairfull"]) {
		t.Errorf("pingpairfull:\n%s", out["pingpairfull"])
	}
	m := regexp.MustCompile(`\*\*\* Elapsed time: (\d+\.\d{6}) secs\n`).FindStringSubmatch(out["time h1 sleep 0.3"])
	if m == nil {
		t.Errorf("time:\n%s", out["time h1 sleep 0.3"])
	} else if s, _ := strconv.ParseFloat(m[1], 64); s < 0.3 || s > 5 {
		t.Errorf("time h1 sleep 0.3 took %s s", m[1])
	}
	// the file's exit does not leave the prompt (Mininet's source), its
	// last line still runs
	expect("source", out["source "+src], "sourced in h2\n", "available nodes are:\nh1 h2 h3 s1\n")
	host, _ := os.Hostname()
	expect("sh", out["sh hostname"], host+"\n")
	expect("noecho", out["noecho h3 hostname"], "h3\n")
	expect("dpctl", out["dpctl show"], "dpctl runs ovs-ofctl on Open vSwitch switches", "no Open vSwitch switch, only s1 (linux-bridge)")
	for _, cmd := range []string{"xterm h1", "x h2"} {
		expect(cmd, out[cmd], "$TMUX is not set", "$DISPLAY is not set", "emuctl shell -l "+lab+" "+strings.Fields(cmd)[1])
	}
	expect("py", out["py net.hosts"], "emuctl mininet")
	expect("link h1 h2 down", out["link h1 h2 down"], "src and dst not connected: h1 h2\n")
	expect("bogus", out["bogus arg"], "*** Unknown command: bogus arg\n")
	for _, c := range []string{"iperf ", "iperfudp ", "link ", "pingpair ", "pingallfull ", "pingpairfull ", "intfs ", "ports ", "sh ", "source ",
		"time ", "noecho ", "dpctl ", "switch ", "x ", "xterm ", "py "} {
		expect("help", out["help"], "\n  "+c)
	}

	// inside tmux, xterm and x open windows running in the node
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Logf("no tmux: windows not tried (%v)", err)
		return
	}
	sock := filepath.Join(dir, "tmux.sock")
	if o, err := exec.Command(tmux, "-S", sock, "new-session", "-d", "-s", "tclimn", "-x", "80", "-y", "24", "sleep 120").CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, o)
	}
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
	pid, err := exec.Command(tmux, "-S", sock, "display", "-p", "#{pid}").Output()
	if err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(dir, "x-ran-in")
	r = must(t, runCLIEnv(t, "xterm h1\nx h2 hostname > "+mark+"\nexit\n", []string{"DISPLAY"},
		[]string{"TMUX=" + sock + "," + strings.TrimSpace(string(pid)) + ",0"}, "cli", "-l", lab), "cli in tmux")
	if strings.Contains(r.stdout, "***") {
		t.Errorf("xterm/x inside tmux:\n%s", r.stdout)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(mark)
		if string(b) == "h2\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("x h2 hostname > FILE: FILE holds %q after 10 s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	wins, _ := exec.Command(tmux, "-S", sock, "list-windows", "-F", "#{window_name}").Output()
	if !strings.Contains(string(wins), "h1\n") {
		t.Errorf("tmux windows after xterm h1:\n%s", wins)
	}
}

// On Open vSwitch: dpctl runs ovs-ofctl on the switch, ports shows the
// OpenFlow port numbers, and switch stop/start cuts and restores it.
func TestCLIMininetOVS(t *testing.T) {
	needRoot(t)
	if _, err := ovs.Binaries(); err != nil {
		t.Skip(err)
	}
	const lab = "tclimo"
	must(t, run(t, "", "up", "--topo", "single,2", "--switch", "ovs", "--name", lab), "up")
	t.Cleanup(func() { run(t, "", "down", lab) })
	script := []string{"dpctl show", "ports", "switch s1 stop", "links", "pingpair", "switch s1 start", "pingpair", "switch h1 stop", "exit"}
	r := must(t, run(t, strings.Join(script, "\n")+"\n", "cli", "-l", lab), "cli")
	outs := strings.Split(r.stdout, "emuctl("+lab+")> ")
	if len(outs) != len(script)+1 {
		t.Fatalf("%d prompts for %d commands:\n%s", len(outs)-1, len(script), r.stdout)
	}
	for i, want := range map[int]string{
		1: "*** s1 " + strings.Repeat("-", 72) + "\nOFPT_FEATURES_REPLY",
		2: "s1 lo:0 s1-eth1:1 s1-eth2:2\n",
		3: "",
		4: "h1-eth0<->s1-eth1 (DOWN DOWN)\nh2-eth0<->s1-eth2 (DOWN DOWN)\n",
		5: "*** Results: 100% dropped (0/2 received)\n",
		7: "*** Results: 0% dropped (2/2 received)\n",
		8: "invalid switch: h1\n",
	} {
		if !strings.Contains(outs[i], want) || want == "" && outs[i] != "" {
			t.Errorf("%s: output lacks %q:\n%s", script[i-1], want, outs[i])
		}
	}
}

// iperfResults reads Mininet's "*** Results: ['9.55 Mbits/sec', ...]" into
// bits/s (a rate without /sec, such as iperfudp's '5M', stays 0).
func iperfResults(t *testing.T, out string, n int) []float64 {
	t.Helper()
	m := regexp.MustCompile(`\*\*\* Results: \[('[^']*'(?:, '[^']*')*)\]\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no iperf results in:\n%s", out)
	}
	items := strings.Split(strings.Trim(m[1], "'"), "', '")
	if len(items) != n {
		t.Fatalf("iperf results %v: want %d items", items, n)
	}
	mult := map[string]float64{"bits/sec": 1, "Kbits/sec": 1e3, "Mbits/sec": 1e6, "Gbits/sec": 1e9}
	rates := make([]float64, n)
	for i, it := range items {
		num, unit, ok := strings.Cut(it, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || mult[unit] == 0 {
			t.Fatalf("iperf result %q: not a rate", it)
		}
		rates[i] = v * mult[unit]
	}
	return rates
}

// runCLIEnv runs emuctl with the variables unset removed from the
// environment and set added.
func runCLIEnv(t *testing.T, stdin string, unset, set []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, u := range unset {
			drop = drop || k == u
		}
		if !drop {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, set...)
	return runCmd(t, cmd, stdin, args)
}
