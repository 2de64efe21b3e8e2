package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"golang.org/x/sys/unix"
)

// TestSoak (make soak; EMUCTL_SOAK=N cycles, EMUCTL_SOAK_SEED to replay):
// cycles of up / traffic / down on varied topologies, most of them hit by
// a SIGKILL of `up`, of the lab's supervisor or of `down` at a random
// instant, each followed by `clean`. After every cycle the host must be
// exactly as before (namespaces, root interfaces, marked Open vSwitch rows,
// processes, files under /run/emuctl, /run/netns and /etc/netns, tracefs
// instances), and decoys named like emuctl's objects must be untouched.
// It prints how many faults landed in each phase.
func TestSoak(t *testing.T) {
	cycles, _ := strconv.Atoi(os.Getenv("EMUCTL_SOAK"))
	if cycles <= 0 {
		t.Skip("soak test: run `make soak` (EMUCTL_SOAK=<cycles>)")
	}
	needRoot(t)
	seed, _ := strconv.ParseUint(os.Getenv("EMUCTL_SOAK_SEED"), 10, 64)
	if seed == 0 {
		seed = uint64(time.Now().UnixNano()%1_000_000 + 1)
	}
	t.Logf("seed %d (EMUCTL_SOAK_SEED=%d replays this run)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 21))

	const lab = "soak"
	dir := t.TempDir()
	shaped := filepath.Join(dir, "shaped.yaml")
	os.WriteFile(shaped, []byte("name: soak\nnodes: {h1: {}, h2: {}, s1: {kind: switch}}\nlinks:\n"+
		"  - endpoints: [h1, s1]\n    link: {rate: 20mbit, delay: 2ms, backend: userspace}\n  - endpoints: [s1, h2]\n"), 0o644)
	// a constant 12 Mbit/s trace for traced links added at run time
	trace := filepath.Join(dir, "const.trace")
	var tb strings.Builder
	for ms := 1; ms <= 1000; ms++ {
		fmt.Fprintf(&tb, "%d\n", ms)
	}
	os.WriteFile(trace, []byte(tb.String()), 0o644)
	// Wi-Fi on the engine backend: h1 a station, h2 the wired server;
	// its run-time changes add a station (or remove h1, a station)
	wifiLab := filepath.Join(dir, "wifi.yaml")
	os.WriteFile(wifiLab, []byte("name: soak\nwifi: {backend: engine}\nnodes: {ap1: {kind: ap, wifi: {mode: g, channel: 1}}, h1: {kind: station, position: [3, 0]}, h2: {}}\n"+
		"links: [{endpoints: [ap1, h2]}]\n"), 0o644)
	topos := []struct {
		name       string
		args       []string
		supervisor bool
	}{
		{"linux-bridge", []string{"--topo", "linear,6"}, false},
		{"shaped", []string{shaped}, true},
		{"routed", []string{"topologies/routed.yaml"}, false},
		{"wifi", []string{wifiLab}, true},
	}
	if _, err := exec.LookPath("ovs-vswitchd"); err == nil {
		// and switches with the topology's names on the host (names:
		// topology; not s1, which the decoys hold)
		names := filepath.Join(dir, "ovs-names.yaml")
		os.WriteFile(names, []byte("name: soak\nnodes: {h1: {}, h2: {}, tz1: {kind: switch, type: ovs, names: topology}, tz2: {kind: switch, type: ovs, names: topology}}\n"+
			"links: [{endpoints: [h1, tz1]}, {endpoints: [tz1, tz2]}, {endpoints: [tz2, h2]}]\n"), 0o644)
		topos = append(topos, []struct {
			name       string
			args       []string
			supervisor bool
		}{{"ovs", []string{"--topo", "linear,3", "--switch", "ovs"}, false}, {"ovs-names", []string{names}, false}}...)
	} else {
		t.Log("Open vSwitch not installed: no OVS cycles")
	}

	decoys := makeDecoys(t, lab)
	t.Cleanup(func() { exec.Command(bin, "down", lab).Run() })
	must(t, run(t, "", "clean"), "clean")
	before := hostSnapshot()
	faults := map[string]int{}
	upTime := map[string]time.Duration{}
	var changeTime time.Duration // a link add's, measured by the first clean cycle

	for i := 0; i < cycles; i++ {
		tp := topos[i%len(topos)]
		upArgs := append([]string{"up", "--name", lab}, tp.args...)
		mode := []string{"clean-cycle", "kill-up", "kill-up", "kill-supervisor", "kill-down", "kill-change"}[rng.IntN(6)]
		if upTime[tp.name] == 0 {
			mode = "clean-cycle" // first cycle of a topology measures its up time
		}
		if mode == "kill-supervisor" && !tp.supervisor {
			mode = "kill-up"
		}
		switch mode {
		case "clean-cycle":
			t0 := time.Now()
			must(t, run(t, "", upArgs...), upArgs...)
			upTime[tp.name] = time.Since(t0)
			r := must(t, run(t, "", "traffic", "-l", lab, "--from", "h1", "--to", "h2", "--time", "1s"), "traffic")
			if !strings.Contains(r.stdout+r.stderr, "bit/s") {
				t.Errorf("cycle %d: traffic printed no rate:\n%s%s", i, r.stdout, r.stderr)
			}
			// a run-time change, timed for the kill-change cycles
			if tp.name == "wifi" {
				must(t, run(t, "", "node", "add", "-l", lab, "hx", "--kind", "station", "--position", "0,3"), "node add (station)")
				must(t, run(t, "", "exec", "-l", lab, "hx", "--", "ping", "-c1", "-W2", "h2"), "ping from the added station")
			} else {
				must(t, run(t, "", "node", "add", "-l", lab, "hx"), "node add")
			}
			t0 = time.Now()
			must(t, run(t, "", "link", "add", "-l", lab, "hx", "h1", "--rate", "10mbit", "--delay", "1ms"), "link add")
			changeTime = max(changeTime, time.Since(t0))
			must(t, run(t, "", "node", "del", "-l", lab, "hx"), "node del")
			must(t, run(t, "", "down", lab), "down")
			faults["none (up, traffic, change, down)"]++
		case "kill-up":
			at := time.Duration(rng.Float64() * float64(upTime[tp.name]) * 1.2)
			phase := killAt(t, at, upArgs...)
			if phase != "" {
				must(t, run(t, "", "down", lab), "down") // up won the race: a running lab, which clean leaves alone
			}
			if st, err := emu.ReadState(lab); phase == "" && err == nil && st.Status == emu.StatusUp {
				phase = "after ready (a running lab: then down)"
				must(t, run(t, "", "down", lab), "down")
			}
			if phase == "" {
				phase, _ = emu.LastPhase(lab)
				if phase == "" {
					phase = "before any phase"
				}
			}
			faults["up: "+phase]++
		case "kill-supervisor":
			must(t, run(t, "", upArgs...), upArgs...)
			st, err := emu.ReadState(lab)
			if err != nil {
				t.Fatal(err)
			}
			killed := false
			for _, p := range st.Procs {
				if p.Command == "supervisor" {
					syscall.Kill(p.PID, syscall.SIGKILL)
					killed = true
				}
			}
			if !killed {
				t.Fatalf("cycle %d: %s has no supervisor on record", i, tp.name)
			}
			time.Sleep(50 * time.Millisecond)
			faults["supervisor (lab up)"]++
		case "kill-change":
			// kill -9 of a run-time change at a random instant: an add of a
			// node and its shaped link, or the removal of a node; then down
			must(t, run(t, "", upArgs...), upArgs...)
			if changeTime == 0 {
				changeTime = 100 * time.Millisecond
			}
			at := time.Duration(rng.Float64() * float64(changeTime) * 1.5)
			args := []string{"link", "add", "-l", lab, "hx", "h1", "--rate", "10mbit", "--delay", "1ms"}
			what := "link add"
			switch {
			case rng.IntN(3) == 0:
				args, what = []string{"node", "del", "-l", lab, "h1"}, "node del"
			case tp.name == "wifi":
				// a station joining the running medium
				args, what = []string{"node", "add", "-l", lab, "hx", "--kind", "station", "--position", "0,3"}, "station add"
			default:
				must(t, run(t, "", "node", "add", "-l", lab, "hx"), "node add")
				if rng.IntN(2) == 0 { // a link replaying a trace, on the engine
					args, what = []string{"link", "add", "-l", lab, "hx", "h1", "--trace", trace, "--delay", "1ms"}, "traced link add"
				}
			}
			phase := killAt(t, at, args...)
			if phase == "" {
				if phase, _ = emu.LastPhase(lab); !strings.HasPrefix(phase, "change-") {
					phase = "before any phase"
				}
			}
			faults["change ("+what+"): "+phase]++
			must(t, run(t, "", "down", lab), "down")
		case "kill-down":
			must(t, run(t, "", upArgs...), upArgs...)
			step := killAt(t, time.Duration(rng.Float64()*float64(40*time.Millisecond)), "down", lab)
			if step == "" {
				_, step = emu.LastPhase(lab)
				if step == "" {
					// Killed before teardown began: the lab is intact and
					// still up, which clean rightly leaves alone.
					step = "before any step (then down again)"
					must(t, run(t, "", "down", lab), "down")
				}
			}
			faults["down: "+step]++
		}
		r := run(t, "", "clean")
		if r.code != 0 {
			t.Fatalf("cycle %d (%s, %s): clean failed: %s%s", i, tp.name, mode, r.stdout, r.stderr)
		}
		// A process being killed shows for a moment with no command line
		// (its memory already released, its exit not finished: a killed
		// up in the middle of a namespace operation can take seconds on a
		// busy kernel): give the last exits time before judging, as long
		// as every extra process is one of those.
		diff := snapshotDiff(before, hostSnapshot())
		for k := 0; k < 150 && diff != "" && onlyProcesses(diff); k++ {
			if k >= 20 && !onlyExiting(diff) {
				break
			}
			time.Sleep(100 * time.Millisecond)
			diff = snapshotDiff(before, hostSnapshot())
		}
		if diff != "" {
			t.Fatalf("cycle %d (%s, %s): the host is not as before:\n%s%s", i, tp.name, mode, diff, processStates(diff))
		}
		for _, d := range decoys {
			if _, err := os.Lstat(d); err != nil {
				t.Fatalf("cycle %d (%s, %s): decoy %s is gone", i, tp.name, mode, d)
			}
		}
	}
	var keys []string
	for k := range faults {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "soak: %d cycles, seed %d; faults injected per phase:\n", cycles, seed)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-36s %d\n", k, faults[k])
	}
	fmt.Print(b.String())
}

// killAt starts emuctl with args, SIGKILLs it after d and returns "" —
// or, when it finished first, "finished".
func killAt(t *testing.T, d time.Duration, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = "../.."
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return "finished (" + args[0] + " returned before the kill)"
	case <-time.After(d):
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	return ""
}

// makeDecoys makes objects named like the lab's that emuctl did not make:
// a named namespace without a marker, an empty file and an empty directory
// where the lab's namespace files and hosts links go, and a root veth pair
// named like a node's interfaces. They are removed when the test ends.
func makeDecoys(t *testing.T, lab string) []string {
	t.Helper()
	ns := filepath.Join(emu.NetnsDir, lab+"decoy.h1")
	file := filepath.Join(emu.NetnsDir, lab+".h99")
	etc := "/etc/netns/" + lab + ".h98"
	os.MkdirAll(emu.NetnsDir, 0o755)
	if err := os.WriteFile(file, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(ns, nil, 0o444)
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies in the decoy namespace
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		errc <- unix.Mount("/proc/thread-self/ns/net", ns, "none", unix.MS_BIND, "")
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "link", "add", "h1-eth0", "type", "veth", "peer", "name", "s1-eth1").CombinedOutput(); err != nil {
		t.Logf("no decoy veth (%v: %s)", err, out)
	}
	t.Cleanup(func() {
		exec.Command("ip", "link", "del", "h1-eth0").Run()
		unix.Unmount(ns, unix.MNT_DETACH)
		os.Remove(ns)
		os.Remove(file)
		os.Remove(etc)
	})
	return []string{ns, file, etc, "/sys/class/net/h1-eth0"}
}

// hostSnapshot lists what the soak test compares between cycles.
func hostSnapshot() map[string]bool {
	out := map[string]bool{}
	add := func(kind string, xs ...string) {
		for _, x := range xs {
			out[kind+" "+x] = true
		}
	}
	for _, root := range []string{emu.NetnsDir, "/etc/netns", emu.RunDir()} {
		filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			if err == nil {
				add("file", p)
			}
			return nil
		})
	}
	if ents, err := os.ReadDir("/sys/class/net"); err == nil {
		for _, e := range ents {
			alias, _ := os.ReadFile("/sys/class/net/" + e.Name() + "/ifalias")
			add("interface", e.Name()+" "+strings.TrimSpace(string(alias)))
		}
	}
	if ents, err := os.ReadDir("/sys/kernel/tracing/instances"); err == nil {
		for _, e := range ents {
			add("tracefs", e.Name())
		}
	}
	self, _ := os.Readlink("/proc/self/ns/net")
	exe, _ := filepath.EvalSymlinks(bin)
	if ents, err := os.ReadDir("/proc"); err == nil {
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			ns, _ := os.Readlink("/proc/" + e.Name() + "/ns/net")
			x, _ := os.Readlink("/proc/" + e.Name() + "/exe")
			stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
			if strings.Contains(string(stat), ") Z ") {
				continue // dead, waiting for its parent (pid 1 when emuctl was killed) to reap it
			}
			if kernelThread(string(stat)) {
				continue // a kworker can run in a dying lab namespace's cleanup for a moment
			}
			if (ns != "" && ns != self) || (x != "" && x == exe) {
				cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
				add("process", fmt.Sprintf("%d %s", pid, strings.ReplaceAll(string(cmd), "\x00", " ")))
			}
		}
	}
	add("leak", emu.Leaks()...) // marked namespaces, OVS rows, radios, state dirs
	return out
}

func snapshotDiff(before, after map[string]bool) string {
	var b strings.Builder
	for k := range after {
		if !before[k] && !strings.HasSuffix(k, ".lock") {
			fmt.Fprintf(&b, "  + %s\n", k)
		}
	}
	for k := range before {
		// A process that was there before may end by itself; only what
		// appeared is emuctl's doing.
		if !after[k] && !strings.HasSuffix(k, ".lock") && !strings.HasPrefix(k, "process ") {
			fmt.Fprintf(&b, "  - %s\n", k)
		}
	}
	return b.String()
}

func onlyProcesses(diff string) bool {
	for _, l := range strings.Split(strings.TrimSpace(diff), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "+ process ") {
			return false
		}
	}
	return true
}

// onlyExiting reports whether every extra process in diff has an empty
// command line (a process whose exit is under way).
func onlyExiting(diff string) bool {
	for _, l := range strings.Split(strings.TrimSpace(diff), "\n") {
		f := strings.Fields(strings.TrimSpace(l))
		if len(f) != 3 { // "+ process PID" and nothing else: no command line
			return false
		}
	}
	return true
}

// processStates describes the extra processes of diff (state, wait
// channel, executable), for the failure message.
func processStates(diff string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(diff), "\n") {
		f := strings.Fields(strings.TrimSpace(l))
		if len(f) < 3 || f[1] != "process" {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + f[2] + "/stat")
		wchan, _ := os.ReadFile("/proc/" + f[2] + "/wchan")
		exe, _ := os.Readlink("/proc/" + f[2] + "/exe")
		fmt.Fprintf(&b, "  process %s: stat %q wchan %q exe %q\n", f[2], strings.TrimSpace(string(stat)), string(wchan), exe)
	}
	return b.String()
}

// kernelThread reports whether a /proc/PID/stat line is a kernel thread's
// (kthreadd, pid 2, or one of its children).
func kernelThread(stat string) bool {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(stat[i+1:]) // state, ppid, ...
	return len(f) > 1 && (f[1] == "2" || strings.HasPrefix(stat, "2 ("))
}
