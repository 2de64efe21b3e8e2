package emu

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/capture"
	"github.com/emuctl/emuctl/capture/packet"
	"github.com/emuctl/emuctl/capture/pcapng"
)

// icmpPackets reads a pcapng file and counts its packets and the ICMP
// echo ones among them.
func icmpPackets(t *testing.T, b []byte) (all, icmp int) {
	t.Helper()
	r, err := pcapng.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a pcapng file (%d bytes): %v", len(b), err)
	}
	var in packet.Info
	for {
		data, ci, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("pcapng: %v", err)
		}
		all++
		if packet.Decode(r.LinkType(ci.Interface), data, ci.Length, &in) && in.Proto == packet.ProtoICMP {
			icmp++
		}
	}
}

// Capture on nodes of a lab over two machines, from the controller: the
// worker on each node's machine captures and its pcapng comes back whole
// — stopping at --count, after --duration, and when the caller ends it.
func TestClusterCapture(t *testing.T) {
	needRoot(t)
	spec := clusterLab(t, "ccapt", "name: ccapt\n"+twoMachines+`nodes: {h1: {machine: m1}, h2: {machine: m2}}
links:
  - endpoints: [h1, h2]
    link: {delay: 2ms}
`)
	st := clusterUp(t, spec)
	h2, _ := PrimaryAddr(spec.Node("h2"))
	flt, err := packet.ParseFilter("icmp")
	if err != nil {
		t.Fatal(err)
	}
	// on the far machine, 4 ICMP packets (2 echoes and their replies)
	for _, node := range []string{"h2", "h1"} {
		var buf bytes.Buffer
		ready := make(chan struct{})
		done := make(chan error, 1)
		var stats capture.Stats
		go func() {
			var err error
			stats, err = CaptureNode(context.Background(), st, node, node+"-eth0", capture.Options{Count: 4, Filter: flt, Duration: 10 * time.Second, Ready: func() { close(ready) }}, &buf)
			done <- err
		}()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("%s: capture ended before it was ready: %v", node, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: capture not ready after 10 s", node)
		}
		if out, err := clusterExec("ccapt", "h1", "ping", "-n", "-c", "2", "-i", "0.2", "-W", "2", h2.String()); err != nil {
			t.Fatalf("ping: %v %s", err, out)
		}
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", node, err)
		}
		all, icmp := icmpPackets(t, buf.Bytes())
		t.Logf("%s (machine %s): %d packets, %d ICMP, stats %+v", node, spec.Cluster.Nodes[node], all, icmp, stats)
		if all != 4 || icmp != 4 || stats.Written != 4 || stats.LinkType != 1 {
			t.Errorf("%s: %d packets, %d ICMP, stats %+v: want the 4 ICMP packets of 2 echoes (Ethernet)", node, all, icmp, stats)
		}
	}
	// open-ended: the caller's context ends it, and the file is whole
	ctx, cancel := context.WithCancel(context.Background())
	var buf bytes.Buffer
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		_, err := CaptureNode(ctx, st, "h2", "h2-eth0", capture.Options{Filter: flt, Ready: func() { close(ready) }}, &buf)
		done <- err
	}()
	<-ready
	clusterExec("ccapt", "h1", "ping", "-n", "-c", "1", "-W", "2", h2.String())
	t0 := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the capture did not end 10 s after its context")
	}
	if all, _ := icmpPackets(t, buf.Bytes()); all != 2 {
		t.Errorf("cancelled capture: %d packets, want 2", all)
	}
	t.Logf("ended %v after the context", time.Since(t0).Round(time.Millisecond))
	// a wrong interface: the worker's error comes back
	if _, err := CaptureNode(context.Background(), st, "h2", "nope0", capture.Options{Count: 1}, io.Discard); err == nil || !strings.Contains(err.Error(), "machine m2") {
		t.Errorf("capture on a missing interface: %v", err)
	} else {
		t.Log(err)
	}
}
