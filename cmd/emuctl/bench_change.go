package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
	"golang.org/x/sys/unix"
)

// bench --change: the run-time numbers beside Mininet's, in one run —
// a host and its link added to a running 100-node lab and pinged, the
// same removed, a command's round trip through a node's persistent shell,
// and what a shell on every node of Mininet's tree1024 (1,057 nodes)
// costs emuctl's own processes.

type changeBench struct {
	AddPing, Remove, CmdTrue time.Duration
	AddPingP90, CmdTrueP90   time.Duration
	Shells                   int
	SelfRSSPerNode           float64 // KiB: this process's growth per shell
	EmuctlProcs              int     // emuctl processes resident per shell (0: the helper execs bash)
	BashRSS                  float64 // KiB, one shell's bash (not emuctl's)
	Mininet                  map[string]float64
	MininetErr               string
	StateFS                  string // the file system of the labs' state (a change writes it 2-3 times)
	Unanswered               int    // first pings of an added host unanswered within 2 s (a second one answered)
}

func median(ds []time.Duration) (time.Duration, time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)*9/10]
}

func benchChange(reps int, shellsTopo string, mininet bool, asJSON bool) error {
	ctx := context.Background()
	var b changeBench
	n := max(reps, 21)
	// 1. add a host and its link to a running 100-node lab, then ping it
	l, err := golab.Up(ctx, golab.Generator("linear,50", topo.GenOptions{Name: "benchchg"}), golab.Options{})
	if err != nil {
		return err
	}
	var adds, dels []time.Duration
	for k := range n {
		name := fmt.Sprintf("x%d", k)
		t0 := time.Now()
		if err := l.AddNode(ctx, name); err != nil {
			l.Down()
			return err
		}
		if _, err := l.AddLink(ctx, name, "s1"); err != nil {
			l.Down()
			return err
		}
		if _, err := l.Ping(ctx, "h1", name); err != nil {
			// counted, and the add's time includes the wait: a second
			// ping must answer
			b.Unanswered++
			if _, err := l.Ping(ctx, "h1", name); err != nil {
				l.Down()
				return fmt.Errorf("the added host does not answer: %w", err)
			}
		}
		adds = append(adds, time.Since(t0))
		t0 = time.Now()
		if err := l.RemoveNode(ctx, name); err != nil {
			l.Down()
			return err
		}
		dels = append(dels, time.Since(t0))
	}
	b.AddPing, b.AddPingP90 = median(adds)
	b.StateFS = fsType(golab.StateRoot())
	b.Remove, _ = median(dels)
	// 2. Cmd("true") through a persistent shell
	sh, err := l.Shell(ctx, "h1")
	if err != nil {
		l.Down()
		return err
	}
	var cmds []time.Duration
	for range 1000 {
		t0 := time.Now()
		if _, err := sh.Cmd(ctx, "true"); err != nil {
			sh.Close()
			l.Down()
			return err
		}
		cmds = append(cmds, time.Since(t0))
	}
	b.CmdTrue, b.CmdTrueP90 = median(cmds)
	sh.Close()
	if err := l.Down(); err != nil {
		return err
	}
	// 3. a shell on every node of tree1024
	if err := benchShells(ctx, shellsTopo, &b); err != nil {
		return err
	}
	// 4. Mininet, the same measures through its Python API
	if mininet {
		b.Mininet, b.MininetErr = runMininetChange(n)
	}
	if asJSON {
		return writeJSON(os.Stdout, b)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "measure\temuctl\tmininet\tratio\ttarget\t")
	row := func(what string, ours time.Duration, key, target string) {
		mn, ratio := "-", "-"
		if v, ok := b.Mininet[key]; ok && v > 0 {
			mn = fmt.Sprintf("%.2f ms", v*1e3)
			ratio = fmt.Sprintf("%.1fx", v/ours.Seconds())
		} else if b.MininetErr != "" {
			mn = b.MininetErr
		}
		fmt.Fprintf(tw, "%s\t%.2f ms\t%s\t%s\t%s\t\n", what, float64(ours)/1e6, mn, ratio, target)
	}
	row(fmt.Sprintf("add host + link to a 100-node lab, then ping (median of %d)", n), b.AddPing, "add_ping", "<= 10 ms, >= 5x")
	row(fmt.Sprintf("remove them (median of %d)", n), b.Remove, "remove", "<= 10 ms")
	if b.Unanswered > 0 {
		fmt.Fprintf(tw, "first pings of an added host unanswered within 2 s (a second answered)\t%d of %d\t\t\t\t\n", b.Unanswered, n)
	}
	row("Cmd(\"true\") through a node's shell (median of 1000)", b.CmdTrue, "cmd_true", "<= 1 ms")
	tw.Flush()
	fmt.Printf("labs' state in %s on %s (a change writes 2-3 files there; /run is tmpfs on most machines)\n", golab.StateRoot(), b.StateFS)
	fmt.Printf("%d shells (%s): emuctl's own RSS %.1f KiB per node (target <= 1024), %d emuctl processes resident; each shell is one bash of %.0f KiB\n",
		b.Shells, shellsTopo, b.SelfRSSPerNode, b.EmuctlProcs, b.BashRSS)
	return nil
}

// benchShells opens a shell on every node of a generated lab and
// measures what emuctl keeps resident for them: this process's growth
// (the shells' terminals and readers) and any emuctl process left (the
// exec helper replaces itself with bash, so there should be none).
func benchShells(ctx context.Context, gen string, b *changeBench) error {
	l, err := golab.Up(ctx, golab.Generator(gen, topo.GenOptions{Name: "benchsh"}), golab.Options{})
	if err != nil {
		return err
	}
	defer l.Down()
	before := selfRSS()
	var (
		mu     sync.Mutex
		shells []*golab.Shell
		first  error
		wg     sync.WaitGroup
	)
	sem := make(chan struct{}, 8)
	for _, node := range l.Nodes() {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			sh, err := l.Shell(ctx, node)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
				}
				return
			}
			shells = append(shells, sh)
		}()
	}
	wg.Wait()
	defer func() {
		for _, sh := range shells {
			sh.Close()
		}
	}()
	if first != nil {
		return first
	}
	// every shell answers
	for _, sh := range shells {
		if out, err := sh.Cmd(ctx, "echo ok"); err != nil || out != "ok\n" {
			return fmt.Errorf("shell in %s: %q %v", sh.Node(), out, err)
		}
	}
	b.Shells = len(shells)
	b.SelfRSSPerNode = float64(selfRSS()-before) / float64(len(shells))
	self, _ := os.Executable()
	for _, sh := range shells {
		if exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(sh.Pid()), "exe")); err == nil && exe == self {
			b.EmuctlProcs++
		}
	}
	b.BashRSS = float64(procRSS(shells[0].Pid()))
	return nil
}

// selfRSS is this process's resident memory in KiB.
func selfRSS() int { return procRSS(os.Getpid()) }

func procRSS(pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			v, _ := strconv.Atoi(f[1])
			return v
		}
	}
	return 0
}

// mininetChangeScript measures with Mininet's Python API what
// benchChange measures: written here from Mininet's documented API
// (Mininet.addHost, addLink, Host.setIP, Node.cmd, delLinkBetween,
// delNode), run with Debian's Mininet.
const mininetChangeScript = `
import json, sys, time
from mininet.net import Mininet
from mininet.nodelib import LinuxBridge
from mininet.topo import LinearTopo
from mininet.log import setLogLevel
setLogLevel('error')
n = int(sys.argv[1])
net = Mininet(topo=LinearTopo(50), switch=LinuxBridge, controller=None)
net.start()
h1, s1 = net['h1'], net['s1']
adds, dels, cmds = [], [], []
for k in range(n):
    t0 = time.time()
    h = net.addHost('x%d' % k)
    link = net.addLink(h, s1)
    h.setIP('10.0.1.%d/8' % (k + 1))
    h.configDefault(ip='10.0.1.%d/8' % (k + 1))
    s1.cmd('ip link set', link.intf2, 'master s1 up')
    out = h1.cmd('ping -c1 -W1 10.0.1.%d' % (k + 1))
    if ' 0% packet loss' not in out:
        print(json.dumps({'error': 'the added host did not answer: ' + out[-200:]})); sys.exit(0)
    adds.append(time.time() - t0)
    t0 = time.time()
    net.delLinkBetween(h, s1)
    net.delNode(h)
    dels.append(time.time() - t0)
for _ in range(1000):
    t0 = time.time(); h1.cmd('true'); cmds.append(time.time() - t0)
net.stop()
med = lambda xs: sorted(xs)[len(xs) // 2]
print(json.dumps({'add_ping': med(adds), 'remove': med(dels), 'cmd_true': med(cmds)}))
`

// runMininetChange runs mininetChangeScript with Debian's python3 and
// Mininet; a missing Mininet is said, not an error.
func runMininetChange(n int) (map[string]float64, string) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import mininet.net").Run(); err != nil {
		return nil, "skipped: no Mininet for " + py + " (apt-get install mininet)"
	}
	f, err := os.CreateTemp("", "emuctl-bench-mininet-*.py")
	if err != nil {
		return nil, "failed: " + err.Error()
	}
	defer os.Remove(f.Name())
	f.WriteString(mininetChangeScript)
	f.Close()
	out, err := exec.Command(py, f.Name(), strconv.Itoa(n)).Output()
	if err != nil {
		return nil, "failed: " + err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var res map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		return nil, "failed: " + lines[len(lines)-1]
	}
	if e, ok := res["error"].(string); ok {
		return nil, "failed: " + e
	}
	m := map[string]float64{}
	for k, v := range res {
		if f, ok := v.(float64); ok {
			m[k] = f
		}
	}
	return m, ""
}

// fsType names the file system holding dir (tmpfs, ext4, ...).
func fsType(dir string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "?"
	}
	switch st.Type {
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlayfs"
	}
	return fmt.Sprintf("file system 0x%x", st.Type)
}
