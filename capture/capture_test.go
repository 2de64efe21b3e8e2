package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/capture/packet"
	"github.com/emuctl/emuctl/capture/pcapng"
	"github.com/emuctl/emuctl/internal/testutil"
)

// nsPair creates two namespaces joined by a veth pair (10.199.7.1/24 in
// the first, .2 in the second) and removes them when the test ends. Names
// carry the "tan" prefix and the process ID.
func nsPair(t *testing.T) (pathA, pathB string) {
	t.Helper()
	testutil.NeedRoot(t)
	a, b := fmt.Sprintf("tanA%d", os.Getpid()), fmt.Sprintf("tanB%d", os.Getpid())
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	del := func(ns string) {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v\n%s", ns, err, out)
		}
	}
	ip("netns", "add", a)
	t.Cleanup(func() { del(a) })
	ip("netns", "add", b)
	t.Cleanup(func() { del(b) })
	ip("link", "add", "tanv0", "netns", a, "type", "veth", "peer", "name", "tanv1", "netns", b)
	for ns, addr := range map[string]string{a: "10.199.7.1/24", b: "10.199.7.2/24"} {
		dev := map[string]string{a: "tanv0", b: "tanv1"}[ns]
		ip("-n", ns, "addr", "add", addr, "dev", dev)
		ip("-n", ns, "link", "set", dev, "up")
		ip("-n", ns, "link", "set", "lo", "up")
	}
	return "/run/netns/" + a, "/run/netns/" + b
}

// startCapture runs Capture in the background and waits until it is
// receiving; wait returns its result.
func startCapture(t *testing.T, ctx context.Context, ns, iface string, o Options, w io.Writer) (wait func() (Stats, error)) {
	t.Helper()
	ready := make(chan struct{})
	o.Ready = func() { close(ready) }
	var st Stats
	var err error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		st, err = Capture(ctx, ns, iface, o, w)
	}()
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
		t.Fatal("capture did not start")
	}
	return func() (Stats, error) { wg.Wait(); return st, err }
}

func TestCaptureUDPFilterCount(t *testing.T) {
	nsA, nsB := nsPair(t)
	var buf bytes.Buffer
	flt, _ := packet.ParseFilter("udp and port 9999")
	t0 := time.Now()
	wait := startCapture(t, context.Background(), nsB, "tanv1", Options{Filter: flt, Count: 20, Snaplen: 64, Duration: 20 * time.Second}, &buf)
	var conn net.Conn
	err := inNetns(nsA, func() error {
		var err error
		conn, err = net.Dial("udp", "10.199.7.2:9999")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var noise net.Conn
	inNetns(nsA, func() error { noise, err = net.Dial("udp", "10.199.7.2:9998"); return err })
	defer noise.Close()
	payload := bytes.Repeat([]byte("x"), 200)
	for i := 0; i < 25; i++ {
		noise.Write(payload)
		conn.Write(payload)
		time.Sleep(time.Millisecond)
	}
	st, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	if st.Written != 20 || st.Filtered == 0 || st.LinkType != pcapng.LinkTypeEthernet {
		t.Fatalf("stats %+v", st)
	}
	r, err := pcapng.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var prev int64
	for {
		data, ci, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var in packet.Info
		ok := packet.Decode(r.LinkType(ci.Interface), data, ci.Length, &in)
		if !ok || in.DstPort != 9999 || in.Payload != 200 || ci.CaptureLength != 64 || ci.Length != 14+20+8+200 || ci.Flags != pcapng.FlagInbound {
			t.Fatalf("packet %d: %+v %+v", n, in, ci)
		}
		if ci.TimestampNs < t0.UnixNano() || ci.TimestampNs > time.Now().UnixNano() || ci.TimestampNs < prev {
			t.Fatalf("packet %d: timestamp %d outside the test", n, ci.TimestampNs)
		}
		prev = ci.TimestampNs
		n++
	}
	if n != 20 || r.Interfaces()[0].Name != "tanv1" {
		t.Fatalf("%d packets, interfaces %+v", n, r.Interfaces())
	}
}

// TestCaptureTCPAcks captures a bulk TCP transfer at the receiver and
// checks the ACK accounting end to end, and that tshark reads the file.
func TestCaptureTCPAcks(t *testing.T) {
	nsA, nsB := nsPair(t)
	var ln net.Listener
	if err := inNetns(nsB, func() error {
		var err error
		ln, err = net.Listen("tcp", "10.199.7.2:5201")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		n, _ := io.Copy(io.Discard, c)
		c.Close()
		got <- n
	}()
	path := filepath.Join(t.TempDir(), "b.pcapng")
	f, _ := os.Create(path)
	ctx, cancel := context.WithCancel(context.Background())
	flt, _ := packet.ParseFilter("tcp port 5201")
	wait := startCapture(t, ctx, nsB, "tanv1", Options{Filter: flt, Snaplen: 128}, f)
	var c net.Conn
	if err := inNetns(nsA, func() error {
		var err error
		c, err = net.Dial("tcp", "10.199.7.2:5201")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const total = 8 << 20
	if _, err := c.Write(make([]byte, total)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if n := <-got; n != total {
		t.Fatalf("received %d bytes", n)
	}
	time.Sleep(100 * time.Millisecond)
	cancel()
	st, err := wait()
	f.Close()
	if err != nil || st.Written == 0 {
		t.Fatalf("%+v %v", st, err)
	}
	rep, err := analysis.ACKFrequencyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Conns) != 1 {
		t.Fatalf("%+v", rep)
	}
	ac := rep.Conns[0]
	if !strings.HasPrefix(ac.Sender, "10.199.7.1:") || ac.Receiver != "10.199.7.2:5201" || ac.DataBytes < total || // retransmissions count too

		ac.PureACKs == 0 || ac.MSS <= 0 || ac.ACKsPerSegment <= 0 || ac.ACKsPerSegment > 1.05 {
		t.Fatalf("%+v", ac)
	}
	t.Logf("bulk 8 MiB over veth: %d data packets (%d segments), %d pure ACKs, %.3f ACKs/segment",
		ac.DataPackets, ac.DataSegments, ac.PureACKs, ac.ACKsPerSegment)
	if tshark, err := exec.LookPath("tshark"); err == nil {
		out, err := exec.Command(tshark, "-r", path, "-Y", "tcp.len==0 && tcp.flags.ack==1 && tcp.flags.syn==0 && tcp.flags.fin==0 && tcp.flags.reset==0 && ip.src==10.199.7.2", "-T", "fields", "-e", "frame.number").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		if n := int64(len(strings.Fields(string(out)))); n != ac.PureACKs {
			t.Fatalf("tshark counts %d pure ACKs, we count %d", n, ac.PureACKs)
		}
	}
}

func TestCaptureErrors(t *testing.T) {
	_, nsB := nsPair(t)
	if _, err := Capture(context.Background(), nsB, "nosuch0", Options{}, io.Discard); err == nil || !strings.Contains(err.Error(), "nosuch0") {
		t.Fatalf("unknown interface: %v", err)
	}
	if _, err := Capture(context.Background(), "/run/netns/tan-does-not-exist", "lo", Options{}, io.Discard); err == nil {
		t.Fatal("unknown namespace accepted")
	}
	// Loopback works and Duration ends the capture.
	st, err := Capture(context.Background(), nsB, "lo", Options{Duration: 300 * time.Millisecond}, io.Discard)
	if err != nil || st.LinkType != pcapng.LinkTypeEthernet {
		t.Fatalf("%+v %v", st, err)
	}
}
