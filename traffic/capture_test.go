package traffic

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
)

// A capture taken for the whole run lands beside the result, is referenced
// relative to it, and holds the receiver's ACKs: a Linux receiver with
// delayed ACKs sends about one pure ACK per two data packets.
func TestCaptureDuringRun(t *testing.T) {
	needRoot(t)
	lab := gen(t, "single,2", "ttrcap", "rate=20mbit,delay=2ms")
	dir := t.TempDir()
	res, err := Run(context.Background(), lab, []Flow{{Client: "h1", Server: "h2", Proto: TCP, Duration: 2 * time.Second, Interval: 100 * time.Millisecond}},
		Options{Captures: []CaptureSpec{{Node: "h2", Iface: "h2-eth0", Filter: "tcp"}}, CaptureDir: dir, ResultDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Captures) != 1 || res.Captures[0].File != "h2-h2-eth0.pcapng" {
		t.Fatalf("captures %+v", res.Captures)
	}
	rep, err := analysis.ACKFrequencyFile(filepath.Join(dir, res.Captures[0].File))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Conns) == 0 {
		t.Fatalf("no connection in the capture (%d packets)", rep.Packets)
	}
	c := rep.Conns[0]
	t.Logf("%d packets; %d pure ACKs, %.3f ACKs per data packet", rep.Packets, c.PureACKs, c.ACKsPerData)
	if c.ACKsPerData < 0.3 || c.ACKsPerData > 1.05 {
		t.Errorf("ACKs per data packet %.3f: want delayed ACKs (about 0.5)", c.ACKsPerData)
	}
	if _, err := Run(context.Background(), lab, []Flow{{Client: "h1", Server: "h2", Proto: TCP, Duration: time.Second}},
		Options{Captures: []CaptureSpec{{Node: "h9", Iface: "x"}}, CaptureDir: dir}); err == nil {
		t.Error("a capture on an unknown node was accepted")
	}
	_ = os.Remove
}
