package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil/netlab"
	"github.com/emuctl/emuctl/tc"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The engine's CPU cost is measured with the engine in a child process
// (this test binary re-executed), so the traffic generators' CPU is not
// counted: the child's utime+stime include the kernel work its sends do
// (veth delivery and the receiver's stack run in its softirq context).

const childEnv = "TC_ENGINE_CHILD"

func TestMain(m *testing.M) {
	if cfg := os.Getenv(childEnv); cfg != "" {
		os.Exit(engineChild(cfg))
	}
	os.Exit(m.Run())
}

type childCfg struct{ AB, BA tc.Dir }

// engineChild runs an engine on tcta/tctb of the namespace passed as fd 3
// until its stdin closes.
func engineChild(cfg string) int {
	var c childCfg
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	e, err := New(netns.NsHandle(3), "tcta", "tctb", c.AB, c.BA, 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		cancel()
	}()
	fmt.Println("ready")
	if err := e.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// childLab is an engineLab whose engine runs in a child process.
type childLab struct {
	h1, e, h2 *netlab.Node
	pid       int
}

func newChildLab(t *testing.T, ab, ba tc.Dir) *childLab {
	t.Helper()
	l := &childLab{}
	l.h1, l.e, l.h2 = engineNodes(t)
	cfg, _ := json.Marshal(childCfg{ab, ba})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(cfg))
	// a duplicate: the *os.File owns (and eventually closes) its descriptor
	nsfd, err := unix.Dup(int(l.e.NS))
	if err != nil {
		t.Fatal(err)
	}
	nsFile := os.NewFile(uintptr(nsfd), "netns")
	defer nsFile.Close()
	cmd.ExtraFiles = []*os.File{nsFile}
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("engine child: %v", err)
			}
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill() // our own child, by pid
			t.Errorf("engine child did not stop")
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("engine child: %q %v", line, err)
	}
	l.pid = cmd.Process.Pid
	return l
}

// cpuSplit returns the child's user and system CPU time so far.
func (l *childLab) cpuSplit(t *testing.T) (user, sys time.Duration) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", l.pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)                                                    // utime, field 14 overall
	st, _ := strconv.ParseInt(f[12], 10, 64)                                                    // stime, field 15
	return time.Duration(ut) * 10 * time.Millisecond, time.Duration(st) * 10 * time.Millisecond // USER_HZ = 100
}

// TestEngineCPU reports the engine's CPU cost for a few loads.
func TestEngineCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("report only")
	}
	for _, c := range []struct {
		name string
		d    tc.Dir
	}{
		{"idle", tc.Dir{Delay: 10 * time.Millisecond}},
		{"200Mbit", tc.Dir{Rate: 200e6, Delay: time.Millisecond}},
		{"unshaped-10ms", tc.Dir{Delay: 10 * time.Millisecond}},
		{"unshaped-10ms-loss0.01%", tc.Dir{Delay: 10 * time.Millisecond, Loss: 0.01}},
		{"2Gbit", tc.Dir{Rate: 2e9}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newChildLab(t, c.d, c.d)
			var g float64
			u0, s0 := l.cpuSplit(t)
			t0 := time.Now()
			if c.name == "idle" {
				time.Sleep(2 * time.Second)
			} else {
				g = netlab.Goodput(t, l.h1, l.h2, ip2, 500*time.Millisecond, 2*time.Second)
			}
			u1, s1 := l.cpuSplit(t)
			el := time.Since(t0).Seconds()
			cores := (u1 - u0 + s1 - s0).Seconds() / el
			user := (u1 - u0).Seconds() / el
			perGbit := 0.0
			if g > 0 {
				perGbit = cores / (g / 1e9)
			}
			t.Logf("%s (%v): goodput %.1f Mbit/s; engine process CPU %.3f cores (user %.3f), %.2f cores per Gbit/s of goodput",
				c.name, c.d, g/1e6, cores, user, perGbit)
		})
	}
}
