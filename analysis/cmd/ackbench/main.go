// Command ackbench measures emuctl's ACK-frequency analysis on a synthetic
// pcapng capture with a known answer, and compares it with tshark counting
// the same pure ACKs (when tshark is installed), as a speed ratio.
//
//	go run ./analysis/cmd/ackbench [-packets 2000000] [-snaplen 128] [-keep file.pcapng]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/capture/synth"
)

func main() {
	packets := flag.Int("packets", 2_000_000, "approximate number of packets in the capture")
	snaplen := flag.Int("snaplen", 128, "snap length of the synthetic capture (0 = whole packets)")
	keep := flag.String("keep", "", "write the capture here and keep it (default: a temporary file)")
	reps := flag.Int("reps", 3, "runs of the emuctl analysis (best is reported)")
	flag.Parse()
	if err := run(*packets, *snaplen, *reps, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "ackbench:", err)
		os.Exit(1)
	}
}

func run(packets, snaplen, reps int, keep string) error {
	path := keep
	if path == "" {
		dir, err := os.MkdirTemp("", "ackbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "bulk.pcapng")
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	// 4 connections, delayed ACK (L = 2): 1.5 packets per data packet.
	b := synth.Bulk{Conns: 4, DataPackets: packets / 6, L: 2, Snaplen: snaplen}
	want, err := b.Write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	st, _ := os.Stat(path)
	fmt.Printf("capture: %d packets, %d connections, snaplen %d, %.1f MB (%s)\n", want.Packets, b.Conns, snaplen, float64(st.Size())/1e6, path)

	best := time.Duration(0)
	var rep *analysis.ACKReport
	for i := 0; i < reps; i++ {
		t0 := time.Now()
		rep, err = analysis.ACKFrequencyFile(path)
		if err != nil {
			return err
		}
		if d := time.Since(t0); best == 0 || d < best {
			best = d
		}
	}
	var acks int64
	for _, c := range rep.Conns {
		acks += c.PureACKs
	}
	if rep.Packets != want.Packets || acks != want.PureACKs*int64(b.Conns) {
		return fmt.Errorf("wrong answer: %d packets, %d pure ACKs; want %d, %d", rep.Packets, acks, want.Packets, want.PureACKs*int64(b.Conns))
	}
	ours := float64(want.Packets) / best.Seconds()
	fmt.Printf("emuctl:  %d pure ACKs in %v (best of %d) = %.2f M packets/s\n", acks, best.Round(time.Millisecond), reps, ours/1e6)

	tshark, err := exec.LookPath("tshark")
	if err != nil {
		fmt.Println("tshark:  not installed; no ratio")
		return nil
	}
	// The same definition: receiver (10.0.0.2) → sender, ACK set, no
	// payload, no SYN/FIN/RST.
	filter := "ip.src==10.0.0.2 && tcp.len==0 && tcp.flags.ack==1 && tcp.flags.syn==0 && tcp.flags.fin==0 && tcp.flags.reset==0"
	t0 := time.Now()
	out, err := exec.Command(tshark, "-n", "-r", path, "-Y", filter, "-T", "fields", "-e", "frame.number").Output()
	d := time.Since(t0)
	if err != nil {
		return fmt.Errorf("tshark: %v", err)
	}
	n := int64(len(strings.Fields(string(out))))
	if n != acks {
		return fmt.Errorf("tshark counts %d pure ACKs, emuctl %d", n, acks)
	}
	theirs := float64(want.Packets) / d.Seconds()
	fmt.Printf("tshark:  %d pure ACKs in %v = %.2f M packets/s\n", n, d.Round(time.Millisecond), theirs/1e6)
	fmt.Printf("ratio:   emuctl is %.0f× faster than tshark (same count)\n", ours/theirs)
	return nil
}
