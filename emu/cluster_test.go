package emu

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Labs over several machines, on one host: every "machine" a local
// machine (its own network and mount namespaces, /run/netns, /etc/netns
// and /run/emuctl), joined by a veth underlay; cut links are real VXLAN
// tunnels between the machines' underlay addresses.

// clusterExec runs argv in a node wherever it is and returns its output.
func clusterExec(lab, node string, argv ...string) (string, error) {
	cmd, err := Command(lab, node, argv)
	if err != nil {
		return "", err
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// pingAllHosts pings every host from every other (one probe each way).
func pingAllHosts(t *testing.T, spec *topo.Spec) {
	t.Helper()
	var hosts []*topo.Node
	for i := range spec.Nodes {
		if spec.Nodes[i].Kind == topo.KindHost {
			hosts = append(hosts, &spec.Nodes[i])
		}
	}
	type pair struct{ from, to string }
	var pairs []pair
	for _, a := range hosts {
		for _, b := range hosts {
			if a != b {
				pairs = append(pairs, pair{a.Name, b.Name})
			}
		}
	}
	var mu sync.Mutex
	var bad []string
	err := parallel(context.Background(), 4, pairs, func(p pair) error {
		dst, _ := PrimaryAddr(spec.Node(p.to))
		out, err := clusterExec(spec.Name, p.from, "ping", "-n", "-c", "1", "-W", "2", dst.String())
		if err != nil {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%s -> %s (%s on %s): %v %s", p.from, p.to, dst, spec.Cluster.Nodes[p.to], err, strings.TrimSpace(out)))
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Fatalf("%d of %d pings failed:\n%s", len(bad), len(pairs), strings.Join(bad, "\n"))
	}
	t.Logf("%d pings between %d hosts on %d machines: all answered", len(pairs), len(hosts), len(spec.Cluster.Machines))
}

// dfPingCuts sends a 1472-byte ping with DF set (a full 1500-byte
// packet) across every cut link, both ways: from the first host of one of
// its machines to the first host of the other. It must cross each tunnel
// unfragmented, with no path MTU lowered.
func dfPingCuts(t *testing.T, spec *topo.Spec) {
	t.Helper()
	first := map[string]*topo.Node{}
	for i := range spec.Nodes {
		n := &spec.Nodes[i]
		if m := spec.Cluster.Nodes[n.Name]; n.Kind == topo.KindHost && first[m] == nil {
			first[m] = n
		}
	}
	for _, cut := range spec.Cluster.Cuts {
		for _, e := range [][2]string{{cut.A, cut.B}, {cut.B, cut.A}} {
			from, to := first[e[0]], first[e[1]]
			if from == nil || to == nil {
				t.Fatalf("VNI %d: no host on machine %s or %s", cut.VNI, e[0], e[1])
			}
			dst, _ := PrimaryAddr(to)
			out, err := clusterExec(spec.Name, from.Name, "ping", "-n", "-c", "1", "-W", "2", "-M", "do", "-s", "1472", dst.String())
			if err != nil {
				t.Errorf("VNI %d: 1472-byte DF ping %s (%s) -> %s (%s): %v %s", cut.VNI, from.Name, e[0], to.Name, e[1], err, out)
				continue
			}
			if out, _ := clusterExec(spec.Name, from.Name, "ip", "route", "get", dst.String()); strings.Contains(out, "mtu") {
				t.Errorf("%s caches a path MTU towards %s: %s", from.Name, dst, out)
			}
		}
	}
}

// requireClusterGone checks that nothing of the lab remains on the host
// (namespaces, state dir with its machines, mounts) and that no process
// runs in a namespace the lab made.
func requireClusterGone(t *testing.T, lab string) {
	t.Helper()
	requireGone(t, lab)
	b, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(b), stateDir(lab)+"/") || strings.Contains(string(b), stateDir(lab)+" ") {
		t.Errorf("mounts of lab %s remain:\n%s", lab, b)
	}
}

func clusterLab(t *testing.T, lab, text string) *topo.Spec {
	t.Helper()
	spec := loadYAML(t, lab, text)
	if spec.Cluster == nil {
		t.Fatal("no cluster in the spec")
	}
	return spec
}

// clusterUp deploys a lab over several machines; when the test ends it is
// taken down and nothing of it may remain on any machine.
func clusterUp(t *testing.T, spec *topo.Spec) *State {
	t.Helper()
	st, err := Deploy(context.Background(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Down(spec.Name, nil); err != nil {
			t.Errorf("down: %v", err)
		}
		requireClusterGone(t, spec.Name)
	})
	return st
}

const twoMachines = `
machines:
  m1: {ssh: local, underlay: 192.168.250.1}
  m2: {ssh: local, underlay: 192.168.250.2}
`

// A linear lab split over two machines: automatic placement cuts one
// switch-to-switch link; every host reaches every other; a 1472-byte
// DF ping crosses the tunnel; down leaves nothing.
func TestClusterLinearTwoMachines(t *testing.T) {
	needRoot(t)
	spec := clusterLab(t, "cl2", "name: cl2\n"+twoMachines+`
placement: auto
nodes:
  h1: {}
  h2: {}
  h3: {}
  h4: {}
  s1: {kind: switch}
  s2: {kind: switch}
  s3: {kind: switch}
  s4: {kind: switch}
links:
  - endpoints: [h1, s1]
  - endpoints: [h2, s2]
  - endpoints: [h3, s3]
  - endpoints: [h4, s4]
  - endpoints: [s1, s2]
  - endpoints: [s2, s3]
  - endpoints: [s3, s4]
`)
	if len(spec.Cluster.Cuts) != 1 {
		t.Fatalf("placement %v cuts %d links, want 1", spec.Cluster.Nodes, len(spec.Cluster.Cuts))
	}
	t0 := time.Now()
	st, err := Deploy(context.Background(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("up over 2 machines in %v; placement %v", time.Since(t0).Round(time.Millisecond), spec.Cluster.Nodes)
	defer func() {
		if err := Down("cl2", nil); err != nil {
			t.Errorf("down: %v", err)
		}
		requireClusterGone(t, "cl2")
	}()
	if st.Status != StatusUp {
		t.Fatalf("status %s", st.Status)
	}
	pingAllHosts(t, spec)
	requirePingAll(t, st) // PingAll (cli's pingall) pings on the nodes' machines
	dfPingCuts(t, spec)
	// What does not reach other machines' nodes yet says so.
	if err := InNode("cl2", "h1", func() error { return nil }); err == nil || !strings.Contains(err.Error(), "runs on machine") {
		t.Errorf("InNode on a node of another machine: %v", err)
	}
	// nothing shaped: verify measures nothing, --all each link's delay
	// floor through the workers (cluster_verify_test.go measures shaping)
	if res, err := Verify(context.Background(), "cl2", VerifyOptions{}); err != nil || len(res) != 0 {
		t.Errorf("verify of an unshaped lab: %v, %v", res, err)
	}
	// The cut link pulled (on both machines) and plugged back.
	cl, h1 := spec.Cluster.Cuts[0].Link, spec.Node("h1")
	h4addr, _ := PrimaryAddr(spec.Node("h4"))
	if err := SetLinkState("cl2", cl, false); err != nil {
		t.Fatal(err)
	}
	if out, err := clusterExec("cl2", h1.Name, "ping", "-n", "-c", "1", "-W", "1", h4addr.String()); err == nil {
		t.Errorf("h1 reached h4 across the pulled cut link: %s", out)
	}
	if err := SetLinkState("cl2", cl, true); err != nil {
		t.Fatal(err)
	}
	if out, err := clusterExec("cl2", h1.Name, "ping", "-n", "-c", "1", "-W", "2", h4addr.String()); err != nil {
		t.Errorf("h1 -> h4 after the cut link was plugged back: %v %s", err, out)
	}
	// An unshaped cut link can be shaped in place only where the kernel
	// has netem (this one has not: each machine says so).
	if _, err := SetLink("cl2", spec.Cluster.Cuts[0].Link, "", func(d *tc.Dir) { d.Rate = 1e6 }); err != nil && !strings.Contains(err.Error(), "no sch_netem") {
		t.Errorf("link set: %v", err)
	}
	// The tunnel end really is a VXLAN device with the link's VNI, MTU
	// and no learning, inside its node.
	cut := spec.Cluster.Cuts[0]
	l := spec.Links[cut.Link]
	out, err := clusterExec("cl2", l.A.Node, "ip", "-d", "link", "show", l.A.Iface)
	if err != nil {
		t.Fatal(err, out)
	}
	for _, want := range []string{fmt.Sprintf("vxlan id %d", cut.VNI), "mtu 1500", "nolearning", "dstport 4789"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s: %q missing in\n%s", l.A, want, out)
		}
	}
	// A machine's namespaces are its own: the host sees none of its nodes.
	if _, err := os.Lstat(filepath.Join(NetnsDir, topo.Namespace("cl2", "h1"))); err == nil {
		t.Errorf("node h1's namespace is visible on the host")
	}
}

// A tree over three machines: every host reaches every other.
func TestClusterTreeThreeMachines(t *testing.T) {
	needRoot(t)
	spec := gen(t, "tree,2,3", "cl3")
	text := "name: cl3\n" + twoMachines + "  m3: {ssh: local, underlay: 192.168.250.3}\nplacement: auto\nnodes:\n"
	for _, n := range spec.Nodes {
		text += fmt.Sprintf("  %s: {kind: %s}\n", n.Name, n.Kind)
	}
	text += "links:\n"
	for _, l := range spec.Links {
		text += fmt.Sprintf("  - endpoints: [%s, %s]\n", l.A.Node, l.B.Node)
	}
	spec = clusterLab(t, "cl3", text)
	if len(spec.Cluster.Cuts) != 2 {
		t.Errorf("placement %v cuts %d links, want 2", spec.Cluster.Nodes, len(spec.Cluster.Cuts))
	}
	if _, err := Deploy(context.Background(), spec, Options{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := Down("cl3", nil); err != nil {
			t.Errorf("down: %v", err)
		}
		requireClusterGone(t, "cl3")
	}()
	pingAllHosts(t, spec)
	dfPingCuts(t, spec)
}

// nodeNetns returns a handle on a node's network namespace wherever its
// machine is: a process started in the node reports its pid, and its
// /proc/<pid>/ns/net is the node's namespace. The process ends with the
// test.
func nodeNetns(t *testing.T, lab, node string) netns.NsHandle {
	t.Helper()
	cmd, err := Command(lab, node, []string{"/bin/sh", "-c", "echo $$; exec sleep 600"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("pid of a process in %s: %q", node, line)
	}
	h, err := netns.GetFromPath(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close()
		syscall.Kill(pid, syscall.SIGKILL) // the sleep this test started
		cmd.Wait()
	})
	return h
}

// tcpGoodput sends bulk TCP from one namespace to an address in another
// for dur and returns the receiver's goodput after warm, in bit/s.
func tcpGoodput(t *testing.T, from, to netns.NsHandle, dst netip.Addr, dur, warm time.Duration) float64 {
	t.Helper()
	var ln net.Listener
	if err := nsutil.Do(to, func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(dst.String(), "0"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conn net.Conn
	if err := nsutil.Do(from, func() (err error) {
		conn, err = net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 1<<16)
		for {
			select {
			case <-done:
				return
			default:
			}
			conn.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := conn.Write(buf); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
		}
	}()
	defer close(done)
	t0 := time.Now()
	var aT, bT time.Time
	var total, aN, bN int64
	buf := make([]byte, 1<<16)
	for time.Since(t0) < dur {
		srv.SetReadDeadline(time.Now().Add(time.Second))
		n, err := srv.Read(buf)
		now := time.Now()
		total += int64(n)
		if now.Sub(t0) >= warm {
			if aT.IsZero() {
				aT, aN = now, total
			}
			bT, bN = now, total
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal(err)
		}
	}
	return float64(bN-aN) * 8 / bT.Sub(aT).Seconds()
}

// A shaped cut link (10 Mbit/s, 5 ms each way): each direction is shaped
// on its sending machine before encapsulation, so the link behaves as a
// local one: TCP goodput R x 1448/1514 within 3 %, the idle RTT floor
// 2 x 5 ms (at most 2 ms above), a 1472-byte DF ping crosses it.
func TestClusterShapedCut(t *testing.T) {
	needRoot(t)
	spec := clusterLab(t, "cls", "name: cls\n"+twoMachines+`
nodes:
  h1: {machine: m1}
  h2: {machine: m2}
links:
  - endpoints: [h1, h2]
    link: {rate: 10mbit, delay: 5ms}
`)
	st, err := Deploy(context.Background(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The underlay was measured both ways, and each machine's engine
	// delays its direction by 5 ms less the underlay's one-way delay.
	if len(st.Underlay) != 2 {
		t.Fatalf("underlay measurements %+v, want m1->m2 and m2->m1", st.Underlay)
	}
	for _, u := range st.Underlay {
		t.Logf("underlay %s -> %s: RTT median %v, σ %v (%d probes); clock offset %v (exchange RTT %v)", u.From, u.To, u.RTT, u.Sigma, u.Samples, u.Offset, u.ClockRTT)
		if u.RTT <= 0 || u.RTT > time.Millisecond || u.Samples < underlayProbes/2 {
			t.Errorf("implausible underlay RTT on a veth: %+v", u)
		}
		// Both machines read this host's clock: the offset is within
		// the best exchange's round trip.
		if u.ClockRTT <= 0 || u.Offset > u.ClockRTT || -u.Offset > u.ClockRTT {
			t.Errorf("clock offset %v between machines on one host, exchange RTT %v", u.Offset, u.ClockRTT)
		}
		b, err := os.ReadFile(filepath.Join(machineDir("cls", u.From), "run", "cls", "state.json"))
		if err != nil {
			t.Fatal(err)
		}
		var ws State
		if err := json.Unmarshal(b, &ws); err != nil || len(ws.Links) != 1 {
			t.Fatalf("machine %s's state: %v, %d links", u.From, err, len(ws.Links))
		}
		sent := ws.Links[0].AtoB
		if u.From == "m2" {
			sent = ws.Links[0].BtoA
		}
		// the lower of the two machines' medians of the one round trip
		lower, _ := underlayPath(st.Underlay, u.From, u.To)
		if want := 5*time.Millisecond - lower.OneWay(); sent.Delay != want {
			t.Errorf("machine %s's engine delays by %v, want 5ms - %v = %v", u.From, sent.Delay, lower.OneWay(), want)
		}
	}
	defer func() {
		if err := Down("cls", nil); err != nil {
			t.Errorf("down: %v", err)
		}
		requireClusterGone(t, "cls")
	}()
	dfPingCuts(t, spec)
	dst, _ := PrimaryAddr(spec.Node("h2"))
	out, err := clusterExec("cls", "h1", "ping", "-n", "-c", "20", "-i", "0.05", dst.String())
	if err != nil {
		t.Fatal(err, out)
	}
	m := regexp.MustCompile(`= ([0-9.]+)/([0-9.]+)/([0-9.]+)/`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no RTT summary in %s", out)
	}
	minRTT, _ := strconv.ParseFloat(m[1], 64)
	t.Logf("idle RTT min/avg/max %s/%s/%s ms (2 x delay = 10 ms)", m[1], m[2], m[3])
	if minRTT < 10 || minRTT > 12 {
		t.Errorf("RTT floor %.3f ms, want 10 .. 12 ms", minRTT)
	}
	h1, h2 := nodeNetns(t, "cls", "h1"), nodeNetns(t, "cls", "h2")
	h1src, _ := PrimaryAddr(spec.Node("h1"))
	want := 10e6 * 1448 / 1514
	// The link engine shares two cores with everything else on the host:
	// a measurement outside the bound is repeated once (both logged),
	// never more than 3 % above capacity.
	type flow struct {
		name     string
		from, to netns.NsHandle
		dst      netip.Addr
	}
	measure := func(flows []flow, want float64) {
		for _, c := range flows {
			for try := 1; ; try++ {
				got := tcpGoodput(t, c.from, c.to, c.dst, 6*time.Second, 2*time.Second)
				t.Logf("goodput %s over the tunnel (try %d): %.3f Mbit/s = %.3f x capacity %.3f Mbit/s", c.name, try, got/1e6, got/want, want/1e6)
				if got > 1.03*want {
					t.Errorf("goodput %.3f Mbit/s exceeds capacity %.3f by more than 3 %%", got/1e6, want/1e6)
				}
				if got >= 0.97*want || try == 2 {
					if got < 0.97*want {
						t.Errorf("goodput %s %.3f Mbit/s twice below %.3f - 3 %%", c.name, got/1e6, want/1e6)
					}
					break
				}
			}
		}
	}
	measure([]flow{{"h1 -> h2", h1, h2, dst}, {"h2 -> h1", h2, h1, h1src}}, want)

	// link set through the controller: each machine changes what it sends.
	if _, err := SetLink("cls", 0, "", func(d *tc.Dir) { d.Rate = 5e6; d.Delay = 10 * time.Millisecond }); err != nil {
		t.Fatal(err)
	}
	out, err = clusterExec("cls", "h1", "ping", "-n", "-c", "20", "-i", "0.05", dst.String())
	if err != nil {
		t.Fatal(err, out)
	}
	m = regexp.MustCompile(`= ([0-9.]+)/([0-9.]+)/([0-9.]+)/`).FindStringSubmatch(out)
	minRTT, _ = strconv.ParseFloat(m[1], 64)
	t.Logf("after link set 5 Mbit/s, 10 ms: idle RTT min/avg/max %s/%s/%s ms", m[1], m[2], m[3])
	if minRTT < 20 || minRTT > 22 {
		t.Errorf("RTT floor %.3f ms after link set, want 20 .. 22 ms", minRTT)
	}
	measure([]flow{{"h1 -> h2 at 5 Mbit/s", h1, h2, dst}}, 5e6*1448/1514)
}

// A worker killed (SIGKILL) in the middle of its machine's up: up fails
// naming it, every machine is rolled back, and nothing remains — after
// up's own rollback and after clean; a namespace named like the lab's but
// not emuctl's survives.
func TestClusterWorkerKilled(t *testing.T) {
	needRoot(t)
	decoy, err := exec.Command("ip", "netns", "add", "clk.decoy").CombinedOutput()
	if err != nil {
		t.Fatalf("decoy: %v %s", err, decoy)
	}
	defer exec.Command("ip", "netns", "del", "clk.decoy").Run()
	spec := clusterLab(t, "clk", "name: clk\n"+twoMachines+`
nodes:
  h1: {machine: m1}
  s1: {kind: switch, machine: m1}
  h2: {machine: m2}
  s2: {kind: switch, machine: m2}
links:
  - endpoints: [h1, s1]
  - endpoints: [s1, s2]
    link: {rate: 10mbit, delay: 5ms}
  - endpoints: [s2, h2]
`)
	var mu sync.Mutex
	pids := map[string]int{}
	workerStarted = func(m string, pid int) {
		mu.Lock()
		pids[m] = pid
		mu.Unlock()
	}
	defer func() { workerStarted = nil }()
	killed := make(chan string, 1)
	go func() {
		// Kill m2's worker once its journal shows it making links.
		journal := filepath.Join(machineDir("clk", "m2"), "run", "clk", "journal")
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			b, _ := os.ReadFile(journal)
			mu.Lock()
			pid := pids["m2"]
			mu.Unlock()
			if pid > 0 && strings.Contains(string(b), "phase links") {
				syscall.Kill(pid, syscall.SIGKILL) // the worker this test's up started
				killed <- string(b)
				return
			}
		}
		killed <- ""
	}()
	_, err = Deploy(context.Background(), spec, Options{})
	j := <-killed
	if j == "" {
		t.Fatal("m2's worker never reached its links phase")
	}
	if err == nil {
		t.Fatal("up succeeded with a worker killed")
	}
	t.Logf("up failed as it should: %v", err)
	if !strings.Contains(err.Error(), "machine m2") || !strings.Contains(err.Error(), "killed") {
		t.Errorf("error does not say machine m2's worker was killed: %v", err)
	}
	requireClusterGone(t, "clk")
	if _, err := Clean(false, nil); err != nil {
		t.Errorf("clean: %v", err)
	}
	requireClusterGone(t, "clk")
	if m, err := netnsMarker("clk.decoy"); err != nil || m != "" {
		t.Errorf("decoy namespace clk.decoy: marker %q, %v (want it untouched)", m, err)
	}
}

// A lab mixing local machines and machines reached over SSH is refused
// at up, naming both, changing nothing.
func TestClusterRefusesMixedMachines(t *testing.T) {
	needRoot(t)
	spec := clusterLab(t, "clr", `name: clr
machines:
  m1: {ssh: local, underlay: 192.168.250.1}
  m2: {ssh: root@192.0.2.7, underlay: 192.0.2.7, mtu: 1550}
nodes: {h1: {machine: m1}, h2: {machine: m2}}
links: [{endpoints: [h1, h2]}]
`)
	_, err := Deploy(context.Background(), spec, Options{})
	if err == nil || !strings.Contains(err.Error(), "machine m1 is local and machine m2 is reached over SSH") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("want a refusal naming m1 and m2, got %v", err)
	}
	requireClusterGone(t, "clr")
}

// An SSH machine that is this host (its underlay is one of this host's
// addresses) is refused before anything is made: the controller's record
// and lock of the lab would be that machine's worker's too.
func TestClusterRefusesControllerAsMachine(t *testing.T) {
	needRoot(t)
	var mine netip.Addr
	if addrs, err := netlink.AddrList(nil, netlink.FAMILY_V4); err == nil {
		for _, a := range addrs {
			if ip, ok := netip.AddrFromSlice(a.IP); ok && !ip.Unmap().IsLoopback() {
				mine = ip.Unmap()
				break
			}
		}
	}
	if !mine.IsValid() {
		t.Skip("this host has no IPv4 address but loopback")
	}
	spec := clusterLab(t, "clr", fmt.Sprintf(`name: clr
machines:
  m1: {ssh: root@%[1]s, underlay: %[1]s, mtu: 1550}
  m2: {ssh: root@192.0.2.250, underlay: 192.0.2.250, mtu: 1550}
nodes: {h1: {machine: m1}, h2: {machine: m2}}
links: [{endpoints: [h1, h2]}]
`, mine))
	_, err := Deploy(context.Background(), spec, Options{})
	if err == nil || !strings.Contains(err.Error(), "machine m1 (root@"+mine.String()) || !strings.Contains(err.Error(), "is this host") || strings.Contains(err.Error(), "machine m2 (") {
		t.Fatalf("want a refusal naming m1 (%s) alone, got %v", mine, err)
	}
	t.Logf("refused: %v", err)
	requireClusterGone(t, "clr")
}

// The controller killed (exit 9, no rollback) at each point of a lab's
// up over two machines: clean removes everything on every machine, and
// the lab comes up again. At cluster-worker-started the first worker has
// just been started: the controller's death reaches it (SIGTERM), it
// rolls its machine back, and clean waits for it.
func TestClusterControllerKilled(t *testing.T) {
	needRoot(t)
	yaml := "name: clc\n" + twoMachines + `nodes:
  h1: {machine: m1}
  h2: {machine: m2}
links:
  - endpoints: [h1, h2]
    link: {rate: 10mbit, delay: 1ms}
`
	for _, point := range []string{"machines", "cluster-machines-bound", "cluster-mntns", "underlay", "workers", "cluster-worker-started", "cluster-up"} {
		t.Run(point, func(t *testing.T) {
			self, _ := os.Executable()
			cmd := exec.Command(self, "-test.run=^TestCrashWindowHelper$")
			cmd.Env = append(os.Environ(), "EMUCTL_TEST_CRASH="+point, "EMUCTL_TEST_CRASH_LAB=clc", "EMUCTL_TEST_CRASH_YAML="+yaml)
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 {
				t.Fatalf("controller: want exit 9, got %v\n%s", err, out)
			}
			dep, _ := LastPhase("clc")
			t.Logf("killed at %s (phase %q): %d objects of the lab on the host", point, dep, len(labObjects("clc")))
			rep, err := Clean(false, nil)
			if err != nil {
				t.Fatalf("clean: %v", err)
			}
			if !slicesContains(rep.Removed, "clc") {
				t.Errorf("clean did not remove lab clc: %+v", rep)
			}
			requireClusterGone(t, "clc")
		})
	}
	spec := clusterLab(t, "clc", yaml)
	if _, err := Deploy(context.Background(), spec, Options{}); err != nil {
		t.Fatal(err)
	}
	pingAllHosts(t, spec)
	if err := Down("clc", nil); err != nil {
		t.Fatal(err)
	}
	requireClusterGone(t, "clc")
}

func slicesContains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// A worker refuses, before making anything, an underlay whose MTU cannot
// carry a cut link's frames plus VXLAN's 50 bytes (the MTU trap: the
// kernel would lower the path MTU to 1450 and TCP its MSS to 1398), and
// one with no route to the other machine.
func TestClusterUnderlayMTUPreflight(t *testing.T) {
	needRoot(t)
	spec := clusterLab(t, "clm", "name: clm\n"+twoMachines+"nodes: {h1: {machine: m1}, h2: {machine: m2}}\nlinks: [{endpoints: [h1, h2]}]\n")
	ns := testutil.NewNetns(t)
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	la := netlink.NewLinkAttrs()
	la.Name, la.MTU = "u0", 1500
	v := netlink.NewVeth(la) // this kernel has no dummy devices
	v.PeerName, v.PeerMTU = "u0p", 1550
	if err := h.LinkAdd(v); err != nil {
		t.Fatal(err)
	}
	u0, _ := h.LinkByName("u0")
	u0p, _ := h.LinkByName("u0p")
	h.LinkSetUp(u0p)
	h.AddrAdd(u0, &netlink.Addr{IPNet: &net.IPNet{IP: net.IPv4(192, 168, 250, 1), Mask: net.CIDRMask(24, 32)}})
	saved := hostNetns
	hostNetns = ns // the worker's root namespace, as on machine m1
	defer func() { hostNetns = saved }()
	slice := spec.SliceFor("m1")
	if errs := tunnelPreflight(slice); len(errs) != 1 || !strings.Contains(errs[0], "no route") {
		t.Errorf("underlay down: %v", errs)
	}
	h.LinkSetUp(u0)
	errs := tunnelPreflight(slice)
	if len(errs) != 1 || !strings.Contains(errs[0], "through u0 with MTU 1500") || !strings.Contains(errs[0], "needs 1550") {
		t.Errorf("MTU 1500: %v", errs)
	} else {
		t.Log(errs[0])
	}
	h.LinkSetMTU(u0, 1550)
	if errs := tunnelPreflight(slice); len(errs) != 0 {
		t.Errorf("MTU 1550: %v", errs)
	}
}

// A cut link whose delay is below the underlay's own one-way delay cannot
// be emulated: up refuses it after measuring, rolling every machine back.
func TestClusterDelayBelowUnderlay(t *testing.T) {
	needRoot(t)
	spec := clusterLab(t, "clu", "name: clu\n"+twoMachines+`nodes: {h1: {machine: m1}, h2: {machine: m2}}
links:
  - endpoints: [h1, h2]
    link: {delay: 1us}
`)
	_, err := Deploy(context.Background(), spec, Options{})
	if err == nil || !strings.Contains(err.Error(), "delay 1µs is below the underlay's own one-way delay from machine m1 to m2") {
		t.Fatalf("want a refusal, got %v", err)
	}
	t.Log(err)
	requireClusterGone(t, "clu")
}

// Open vSwitch switches in a lab over two local machines, one at each end
// of a shaped cut link (10 Mbit/s, 5 ms): each machine runs its own
// embedded ovs-vswitchd, in its own namespaces (a system Open vSwitch,
// whose daemon is in the host's namespace, could not attach its ports),
// and the cut link's VXLAN device is one of the switch's ports. Every host
// reaches every other, a 1472-byte DF ping crosses the tunnel, the RTT
// floor is 2 × 5 ms and TCP goodput R × 1448/1514 ± 3 % each way; down
// stops both machines' daemons and leaves nothing.
func TestClusterOVS(t *testing.T) {
	needOVS(t)
	spec := clusterLab(t, "clo", "name: clo\n"+twoMachines+`
nodes:
  h1: {machine: m1}
  s1: {kind: switch, type: ovs, machine: m1}
  s2: {kind: switch, type: ovs, machine: m2}
  h2: {machine: m2}
  h3: {machine: m2}
links:
  - endpoints: [h1, s1]
  - endpoints: [s1, s2]
    link: {rate: 10mbit, delay: 5ms}
  - endpoints: [s2, h2]
  - endpoints: [s2, h3]
`)
	var daemons []int
	t.Cleanup(func() { // after down: registered before clusterUp's
		for _, pid := range daemons {
			// exited (a zombie until init reaps it) or gone
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(b), ") Z ") {
				t.Errorf("ovs-vswitchd %d still runs after down: %s", pid, b)
			}
		}
	})
	clusterUp(t, spec)
	// one ovs-vswitchd per machine, in the machine's network namespace
	for _, m := range []string{"m1", "m2"} {
		var mst unix.Stat_t
		if err := unix.Stat(filepath.Join(NetnsDir, machineNetns("clo", m)), &mst); err != nil {
			t.Fatal(err)
		}
		var in []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
			var st unix.Stat_t
			if strings.TrimSpace(string(comm)) == "ovs-vswitchd" && unix.Stat(filepath.Join("/proc", e.Name(), "ns", "net"), &st) == nil && st.Ino == mst.Ino {
				in = append(in, pid)
			}
		}
		t.Logf("machine %s: ovs-vswitchd %v", m, in)
		if len(in) != 1 {
			t.Errorf("machine %s: %d ovs-vswitchd in its namespace, want its own one", m, len(in))
		}
		daemons = append(daemons, in...)
	}
	pingAllHosts(t, spec)
	dfPingCuts(t, spec)
	dst, _ := PrimaryAddr(spec.Node("h2"))
	out, err := clusterExec("clo", "h1", "ping", "-n", "-c", "20", "-i", "0.05", dst.String())
	if err != nil {
		t.Fatal(err, out)
	}
	m := regexp.MustCompile(`= ([0-9.]+)/([0-9.]+)/([0-9.]+)/`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no RTT summary in %s", out)
	}
	minRTT, _ := strconv.ParseFloat(m[1], 64)
	t.Logf("idle RTT through both switches min/avg/max %s/%s/%s ms (2 x delay = 10 ms)", m[1], m[2], m[3])
	if minRTT < 10 || minRTT > 12 {
		t.Errorf("RTT floor %.3f ms, want 10 .. 12 ms", minRTT)
	}
	h1, h2 := nodeNetns(t, "clo", "h1"), nodeNetns(t, "clo", "h2")
	h1src, _ := PrimaryAddr(spec.Node("h1"))
	want := 10e6 * 1448 / 1514
	for _, c := range []struct {
		name     string
		from, to netns.NsHandle
		dst      netip.Addr
	}{{"h1 -> h2", h1, h2, dst}, {"h2 -> h1", h2, h1, h1src}} {
		for try := 1; ; try++ {
			got := tcpGoodput(t, c.from, c.to, c.dst, 6*time.Second, 2*time.Second)
			t.Logf("goodput %s through s1 -> tunnel -> s2 (try %d): %.3f Mbit/s = %.3f x capacity", c.name, try, got/1e6, got/want)
			if got > 1.03*want {
				t.Errorf("goodput %.3f Mbit/s exceeds capacity %.3f by more than 3 %%", got/1e6, want/1e6)
			}
			if got >= 0.97*want || try == 2 {
				if got < 0.97*want {
					t.Errorf("goodput %s %.3f Mbit/s twice below %.3f - 3 %%", c.name, got/1e6, want/1e6)
				}
				break
			}
		}
	}
}
