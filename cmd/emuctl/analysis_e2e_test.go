package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/capture/pcapng"
	"github.com/emuctl/emuctl/capture/synth"
)

func TestModelTack(t *testing.T) {
	out := must(t, run(t, "", "model", "tack", "--bw", "200mbit", "--rtt", "10ms")).stdout
	for _, want := range []string{"f_tack        400 Hz", "periodic regime", "f_tcp(L=1)    16667 Hz", "2.4 %", "pivot         9.6 Mbit/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("model tack output lacks %q:\n%s", want, out)
		}
	}
	var pt struct {
		FTack   float64 `json:"f_tack_hz"`
		RatioL1 float64 `json:"ratio_l1"`
		Regime  string  `json:"regime"`
	}
	js := must(t, run(t, "", "model", "tack", "--bw", "7.056mbit", "--rtt", "10ms", "--json")).stdout
	if err := json.Unmarshal([]byte(js), &pt); err != nil || pt.FTack != 294 || pt.Regime != "byte-counting" || pt.RatioL1 != 0.5 {
		t.Errorf("--json: %v %+v\n%s", err, pt, js)
	}
	csv := must(t, run(t, "", "model", "tack", "--bw", "48mbit,200mbit", "--rtt", "10ms,80ms,200ms", "--format", "csv")).stdout
	for _, want := range []string{"48,10,400,4000,2000,10,", "200,80,50,16667,8333,0.3,", "200,200,20,"} {
		if !strings.Contains(csv, want) {
			t.Errorf("csv lacks %q:\n%s", want, csv)
		}
	}
	dir := t.TempDir()
	must(t, run(t, "", "model", "tack", "--sweep", "-o", dir))
	for _, f := range []string{"tack-rtt.svg", "tack-rtt.png", "tack-bw.svg", "tack-bw.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("sweep: %s: %v", f, err)
		}
	}
	for _, bad := range [][]string{{"--bw", "200mbit", "--rtt", "10ms", "--beta", "1"}, {"--bw", "200mbps", "--rtt", "10ms"}, {"--bw", "1mbit"}} {
		if r := run(t, "", append([]string{"model", "tack"}, bad...)...); r.code == 0 || r.stderr == "" {
			t.Errorf("model tack %v: exit %d, stderr %q", bad, r.code, r.stderr)
		}
	}
}

func TestCaptureAcksAndReport(t *testing.T) {
	dir := t.TempDir()
	f, _ := os.Create(filepath.Join(dir, "h2.pcapng"))
	if _, err := (synth.Bulk{DataPackets: 1000, L: 2, Conns: 2}).Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := must(t, run(t, "", "capture", "acks", filepath.Join(dir, "h2.pcapng"))).stdout
	if !strings.Contains(out, "| 10.0.0.1:40000 | 10.0.0.2:5201 |") || !strings.Contains(out, "| 1000 | 1000 | 500 |") {
		t.Errorf("capture acks:\n%s", out)
	}
	data, err := os.ReadFile("../../analysis/testdata/example_result.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "run1.json"), data, 0o644)
	r := must(t, run(t, "", "report", dir, "--no-run-plots"))
	md, err := os.ReadFile(filepath.Join(dir, "report", "report.md"))
	if err != nil || !strings.Contains(r.stdout, "report.html") || !strings.Contains(string(md), "## ACK frequency") {
		t.Errorf("report: %v\n%s", err, r.stdout)
	}
	if r := run(t, "", "report", t.TempDir()); r.code == 0 || !strings.Contains(r.stderr, "no result files") {
		t.Errorf("empty dir: %d %s", r.code, r.stderr)
	}
}

// TestCaptureInLab captures ICMP on a lab host while it is pinged.
func TestCaptureInLab(t *testing.T) {
	needRoot(t)
	must(t, run(t, "", "up", "--name", "tancap", "topologies/linear3.yaml"))
	t.Cleanup(func() { run(t, "", "down", "tancap") })
	path := filepath.Join(t.TempDir(), "h2.pcapng")
	var stderr bytes.Buffer
	capt := exec.Command(bin, "capture", "--lab", "tancap", "h2:h2-eth0", "--filter", "icmp", "--count", "4", "-w", path)
	capt.Stderr = &stderr
	if err := capt.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- capt.Wait() }()
	for i := 0; i < 50 && !strings.Contains(stderr.String(), "capturing on"); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	must(t, run(t, "", "exec", "--lab", "tancap", "h1", "--", "ping", "-c2", "-i0.2", "-W2", "h2"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("capture: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		capt.Process.Kill()
		t.Fatalf("capture did not stop after 4 packets:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "4 packets written") {
		t.Errorf("capture stderr: %s", stderr.String())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := pcapng.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[uint32]int{}
	for {
		_, ci, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		dirs[ci.Flags]++
	}
	if dirs[pcapng.FlagInbound] != 2 || dirs[pcapng.FlagOutbound] != 2 {
		t.Errorf("directions %v, want 2 inbound requests and 2 outbound replies", dirs)
	}
	if r := run(t, "", "capture", "--lab", "tancap", "h9:eth0", "-w", path); r.code == 0 || !strings.Contains(r.stderr, `no node "h9"`) {
		t.Errorf("unknown node: %d %s", r.code, r.stderr)
	}
}
