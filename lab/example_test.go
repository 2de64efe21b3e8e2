package lab_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/units"
)

// A topology in Go: two hosts behind a router, one shaped access link.
// Spec resolves it with the file's rules; this needs no root.
func ExampleNewTopology() {
	t := lab.NewTopology("demo").
		Host("h1").Host("h2").Router("r1").Switch("s1").
		Link("h1", "s1", lab.Rate(10*units.Mbit), lab.Delay(5*time.Millisecond), lab.Queue(50)).
		Link("r1", "s1").
		Link("r1", "h2")
	spec, err := t.Spec()
	if err != nil {
		log.Fatal(err)
	}
	for _, n := range spec.Nodes {
		fmt.Printf("%s (%s):", n.Name, n.Kind)
		for _, ifc := range n.Interfaces {
			fmt.Printf(" %s %v", ifc.Name, ifc.Addrs)
		}
		for _, r := range n.Routes {
			fmt.Printf(" route %v via %v", r.Dst, r.Via)
		}
		fmt.Println()
	}
	for i, l := range spec.Links {
		fmt.Printf("link %d %s <-> %s", i, l.A, l.B)
		if l.Params != nil {
			fmt.Printf(" %v", l.Params)
		}
		fmt.Println()
	}
	// Output:
	// h1 (host): h1-eth0 [10.0.0.1/30] route 0.0.0.0/0 via 10.0.0.2
	// h2 (host): h2-eth0 [10.0.0.5/30] route 0.0.0.0/0 via 10.0.0.6
	// r1 (router): r1-eth0 [10.0.0.2/30] r1-eth1 [10.0.0.6/30]
	// s1 (switch): s1-eth1 [] s1-eth2 []
	// link 0 h1:h1-eth0 <-> s1:s1-eth1 rate=10mbit,delay=5ms,queue=50
	// link 1 r1:r1-eth0 <-> s1:s1-eth2
	// link 2 r1:r1-eth1 <-> h2:h2-eth0
}

// The same topology as a file: `emuctl up` or `emuctl validate` read it
// and resolve it to the same Spec.
func ExampleTopology_YAML() {
	t := lab.NewTopology("demo").
		Host("h1", lab.CC("bbr")).Host("h2").Switch("s1", lab.OVS()).
		Link("h1", "s1", lab.Rate(10*units.Mbit), lab.BtoA(lab.Loss(1))).
		Link("h2", "s1", lab.IP("h2", "10.0.0.20/24"))
	fmt.Print(string(t.YAML()))
	// Output:
	// name: demo
	// nodes:
	//   h1: {kind: host, tcp: {congestion_control: bbr}}
	//   h2: {kind: host}
	//   s1: {kind: switch, type: ovs}
	// links:
	//   - {endpoints: [h1, s1], link: {rate: 10mbit, b->a: {loss: 1%}}}
	//   - {endpoints: [h2, s1], ip: {h2: 10.0.0.20/24}}
}

// Bad input is reported by Spec (and Up), every problem at once, each
// naming the builder call and what would be valid.
func ExampleTopology_Spec_errors() {
	t := lab.NewTopology("demo").
		Host("h1").Switch("s1", lab.STP(), lab.CC("cubic")).
		Link("h1", "s9", lab.Delay(-5*time.Millisecond))
	_, err := t.Spec()
	fmt.Println(err)
	// Output:
	// Switch("s1", STP(), CC("cubic")): nodes.s1.tcp: tcp is not valid on a switch: switches are layer 2 (use kind: host or router)
	// Link("h1", "s9", Delay(-5ms)): links[0].endpoints[1]: unknown node "s9" (known: h1, s1; did you mean "s1"?)
	// Link("h1", "s9", Delay(-5ms)): links[0].link.delay: duration "-5ms" is negative (valid: 0 .. 60s)
}

// A lab up, a ping, a TCP flow, down (as root).
func ExampleUp() {
	ctx := context.Background()
	t := lab.NewTopology("demo").
		Host("h1").Host("h2").Switch("s1").
		Link("h1", "s1", lab.Rate(10*units.Mbit), lab.Delay(5*time.Millisecond)).
		Link("h2", "s1")
	l, err := lab.Up(ctx, t, lab.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Down() // from here on, return rather than exit: Down must run
	rtt, err := l.Ping(ctx, "h1", "h2")
	if err != nil {
		log.Print(err)
		return
	}
	fmt.Printf("rtt %v (at least 2 × 5 ms)\n", rtt)
	res, err := l.Traffic(ctx, lab.Flow{Client: "h1", Server: "h2", Duration: 5 * time.Second})
	if err != nil {
		log.Print(err)
		return
	}
	s := res.Summary[0]
	fmt.Printf("goodput %.2f Mbit/s of %.2f\n", s.SteadyGoodputBps/1e6, s.CapacityBps/1e6)
}

// Open a lab that `emuctl up` (or another program) built, and run a
// command in one of its nodes.
func ExampleOpen() {
	l, err := lab.Open("demo")
	if err != nil {
		log.Fatal(err)
	}
	out, err := l.Output(context.Background(), "h1", "ip", "-brief", "address")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(out))
}

// Change a running link: both directions, or one with AtoB/BtoA; then
// pull the cable and plug it back.
func ExampleLab_SetLink() {
	l, err := lab.Open("demo")
	if err != nil {
		log.Fatal(err)
	}
	if err := l.SetLink("h1-s1", lab.Rate(5*units.Mbit), lab.BtoA(lab.Delay(20*time.Millisecond), lab.Loss(1))); err != nil {
		log.Fatal(err)
	}
	if err := l.LinkDown("h1-s1"); err != nil {
		log.Fatal(err)
	}
	if err := l.LinkUp("h1-s1"); err != nil {
		log.Fatal(err)
	}
}

// Two flows at once, CUBIC against BBR, with an RTT probe beside the first.
func ExampleLab_Traffic() {
	l, err := lab.Open("demo")
	if err != nil {
		log.Fatal(err)
	}
	cubic := lab.Flow{Name: "cubic", Client: "h1", Server: "h2", Duration: 20 * time.Second, Probe: "icmp"}
	cubic.Sock.CC = "cubic"
	bbr := lab.Flow{Name: "bbr", Client: "h1", Server: "h2", Duration: 20 * time.Second}
	bbr.Sock.CC = "bbr"
	res, err := l.Traffic(context.Background(), cubic, bbr)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range res.Summary {
		fmt.Printf("%s: %.2f Mbit/s\n", s.Flow, s.SteadyGoodputBps/1e6)
	}
}
