package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
)

// The scale row (bench --scale tree,4,10): `emuctl up` and `emuctl down`
// of a lab of 10,000+ nodes, each as its own process so its own peak
// memory and descriptors are measured, with the targets beside the
// measured values, the first host pinging the last, and the kernel's
// background namespace cleanup after down.
const (
	scaleUpTarget   = 15 * time.Second
	scaleDownTarget = 5 * time.Second
	scaleMemTarget  = 200 // MB
)

type scaleResult struct {
	topo          string
	nodes, links  int
	up, down      time.Duration
	upRSS, dnRSS  float64 // MB
	from, to      string
	rtt           time.Duration
	pingErr       error
	settle        time.Duration
	settledBefore time.Duration
}

func benchScale(g string, asJSON bool) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	const lab = "benchscale"
	spec, err := topo.Generate(g, topo.GenOptions{Name: lab})
	if err != nil {
		return err
	}
	r := scaleResult{topo: g, nodes: len(spec.Nodes), links: len(spec.Links)}
	hosts := spec.Hosts()
	if len(hosts) < 2 {
		return fmt.Errorf("bench --scale %s: needs two hosts", g)
	}
	r.from, r.to = hosts[0].Name, hosts[len(hosts)-1].Name
	r.settledBefore = golab.WaitNetnsSettled(5 * time.Minute)
	run := func(args ...string) (time.Duration, float64, error) {
		cmd := exec.Command(self, args...)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		t0 := time.Now()
		err := cmd.Run()
		d := time.Since(t0)
		rss := 0.0
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = float64(ru.Maxrss) / 1024
		}
		if err != nil {
			return d, rss, fmt.Errorf("emuctl %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return d, rss, nil
	}
	if r.up, r.upRSS, err = run("up", "--topo", g, "--name", lab); err != nil {
		return err
	}
	if st, err := golab.ReadState(lab); err == nil {
		dst, _ := golab.PrimaryAddr(st.Spec.Node(r.to))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for i := 0; i < 3; i++ { // the first echo also resolves ARP along the tree
			r.rtt, r.pingErr = golab.PingAddr(ctx, lab, r.from, dst, 2*time.Second)
			if r.pingErr == nil {
				break
			}
		}
		cancel()
	} else {
		r.pingErr = err
	}
	if r.down, r.dnRSS, err = run("down", lab); err != nil {
		return err
	}
	r.settle = golab.WaitNetnsSettled(5 * time.Minute)
	if asJSON {
		return writeJSON(os.Stdout, scaleJSONOf(r))
	}
	printScale(r)
	return nil
}

func printScale(r scaleResult) {
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	fmt.Printf("\nscale: %s (%d nodes, %d links), `emuctl up` and `emuctl down` as their own processes (the kernel was settled after %.1f s)\n", r.topo, r.nodes, r.links, r.settledBefore.Seconds())
	fmt.Printf("  %-34s %10s %12s  %s\n", "", "measured", "target", "")
	fmt.Printf("  %-34s %9.2fs %11s  %s\n", "up", r.up.Seconds(), fmt.Sprintf("<= %.0fs", scaleUpTarget.Seconds()), verdict(r.up <= scaleUpTarget))
	fmt.Printf("  %-34s %9.2fs %11s  %s\n", "down", r.down.Seconds(), fmt.Sprintf("<= %.0fs", scaleDownTarget.Seconds()), verdict(r.down <= scaleDownTarget))
	mem := max(r.upRSS, r.dnRSS)
	fmt.Printf("  %-34s %8.1fMB %11s  %s\n", "peak memory (max RSS of up, down)", mem, fmt.Sprintf("<= %dMB", scaleMemTarget), verdict(mem <= scaleMemTarget))
	if r.pingErr != nil {
		fmt.Printf("  %-34s %10s %12s  %s (%v)\n", r.from+" -> "+r.to, "no reply", "reply", verdict(false), r.pingErr)
	} else {
		fmt.Printf("  %-34s %8.2fms %12s  %s\n", r.from+" -> "+r.to+" (ping)", float64(r.rtt)/1e6, "reply", verdict(true))
	}
	fmt.Printf("  %-34s %9.2fs %12s  (after down returned: the kernel frees namespaces in the background)\n", "kernel namespace cleanup", r.settle.Seconds(), "-")
}
