package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/capture/synth"
)

// results writes four runs of two scenarios (from the analysis package's
// example result) and a capture into a temporary directory.
func results(t *testing.T) string {
	t.Helper()
	base, err := analysis.Load("../testdata/example_result.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, sc := range []struct {
		name  string
		scale float64
	}{{"sack=off", 1}, {"sack=off", 0.9}, {"sack=on", 1.3}, {"sack=on", 1.25}} {
		data, _ := json.Marshal(base)
		var r analysis.Result
		json.Unmarshal(data, &r)
		r.Scenario, r.Repetition = sc.name, i%2+1
		r.Conditions["tcp_sack"] = map[bool]string{true: "1", false: "0"}[sc.name == "sack=on"]
		for fi := range r.Flows {
			for si := range r.Flows[fi].Samples {
				s := &r.Flows[fi].Samples[si]
				s.Bytes = int64(float64(s.Bytes) * sc.scale)
				s.GoodputBps *= sc.scale
			}
		}
		if i != 0 {
			r.Captures = nil
		}
		f, err := os.Create(filepath.Join(dir, strings.ReplaceAll(sc.name, "=", "-")+"-"+string(rune('a'+i))+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := analysis.Encode(f, &r); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	f, _ := os.Create(filepath.Join(dir, "h2.pcapng"))
	if _, err := (synth.Bulk{DataPackets: 4000, L: 2, IntervalNs: 2_000_000}).Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return dir
}

func TestGenerate(t *testing.T) {
	dir := results(t)
	out := filepath.Join(dir, "report")
	if keep := os.Getenv("EMUCTL_KEEP_REPORT"); keep != "" {
		out = keep // inspect the rendered report by hand
	}
	res, err := Generate(dir, out, Options{Title: "test report"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs != 4 {
		t.Fatalf("runs %d", res.Runs)
	}
	md, _ := os.ReadFile(res.Markdown)
	html, _ := os.ReadFile(res.HTML)
	for _, want := range []string{"# test report", "## Runs", "## Repetitions", "Ratio to the baseline scenario", "## ACK frequency",
		"## Conditions", "Conditions that differ between runs", "| sack-on-c | tcp_sack | 1 |", "plots/bars-aggregate_mbps.png",
		"plots/run001-goodput.png", "plots/run001-cwnd.png", "plots/run001-rtt-cdf.png", "plots/ack-frequency.png", "tables/flows.csv"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, want := range []string{"<h2>Repetitions</h2>", `<img src="plots/bars-aggregate_mbps.svg"`, "<td class=\"num\">"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, p := range append(res.Plots, res.Tables...) {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	// The ACK table found the synthetic capture's 2000 ACKs for 4000 packets.
	ack, err := os.ReadFile(filepath.Join(out, "tables", "ack-frequency.csv"))
	if err != nil || !strings.Contains(string(ack), ",4000,2000,0.5,") {
		t.Errorf("ack table: %v\n%s", err, ack)
	}
	// A second run over the same directory ignores the report's own JSON tables.
	if _, err := Generate(dir, out, Options{NoRunPlots: true}); err != nil {
		t.Fatal(err)
	}
}

func TestGenerateEmpty(t *testing.T) {
	if _, err := Generate(t.TempDir(), t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "no result files") {
		t.Fatalf("%v", err)
	}
}
