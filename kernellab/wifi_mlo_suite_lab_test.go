package kernellab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
)

// TestLabCCMLO runs `emuctl test cc-mlo --quick` for one CUBIC sender
// (bin/emuctl, or the binary EMUCTL_BIN names) where the multi-link
// tier's binaries exist:
// the suite must then run its multi-link scenarios over real 802.11be
// multi-link (links=mlo: an AP MLD and station MLDs, both links on the
// medium) and its single-link ones over one link of the same AP MLD
// (links=mlo1) instead of the wired stand-ins, and say so in its report.
// No run may fail to come up, both links must carry frames in every
// links=mlo run and one link in every links=mlo1 run, and no physics or
// behaviour check may fail; a run the emulated machine could not keep on
// time (a fidelity check: the medium's lateness) stays invalid and its
// checks unjudged — that is reported, not failed. Without the binaries it
// skips, saying what is missing (CI does).
//
// It runs last in the multi-link tier (this file's name): run before
// TestLabEmuctlWiFiMLO, that test's AP (2.4 GHz + 5 GHz at 80 MHz) never
// started — hostapd stopped in HT_SCAN five times ("Unable to setup
// interface"), though it starts when run first; not understood yet.
func TestLabCCMLO(t *testing.T) {
	requireMLO(t)
	bin := os.Getenv("EMUCTL_BIN")
	if bin == "" {
		var err error
		if bin, err = filepath.Abs("../bin/emuctl"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s: %v (make test-mlo builds it; EMUCTL_BIN names another)", bin, err)
	}
	out := t.TempDir()
	start := time.Now()
	// The quick profile's rows for one CUBIC sender: the full profile
	// (25 runs, Wi-Fi ones retried when the medium ran late) did not end
	// within 54 min in the emulated VM. single and multi stay in the
	// selection: the real rows replace them (no run), as the report says.
	args := []string{"test", "cc-mlo", "--quick", "--only", "links=single,multi,mlo1,mlo", "--only", "cca=cubic", "--only", "senders=1", "--out", out}
	cmd := exec.Command(bin, args...)
	// its progress as it goes (a long run in the emulated VM)
	var buf bytes.Buffer
	cmd.Stdout = io.MultiWriter(&buf, os.Stdout)
	cmd.Stderr = cmd.Stdout
	err := cmd.Run()
	t.Logf("emuctl %s (%v, %v):\n%s", strings.Join(args, " "), time.Since(start).Round(time.Second), err, buf.Bytes())
	var o struct {
		Verdict string `json:"verdict"`
		Checks  []struct {
			ID, Status, Title, Class, Measured, Reason string
		} `json:"checks"`
		Runs []struct {
			ID       string             `json:"id"`
			Labels   map[string]string  `json:"labels"`
			File     string             `json:"file"`
			Invalid  []string           `json:"invalid"`
			Error    string             `json:"error"`
			Retried  bool               `json:"retried"`
			Metrics  map[string]float64 `json:"metrics"`
			Scenario string             `json:"scenario"`
		} `json:"runs"`
		Notes []string `json:"notes"`
		Media []struct {
			Label, Medium, Why string
			Ran                bool
		} `json:"media"`
	}
	dir := filepath.Join(out, "cc-mlo", "latest")
	f, err := os.ReadFile(filepath.Join(dir, "outcome.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(f, &o); err != nil {
		t.Fatal(err)
	}
	ran := map[string]bool{}
	for _, m := range o.Media {
		ran[m.Label] = m.Ran
		t.Logf("links=%s ran %v: %s %s", m.Label, m.Ran, m.Medium, m.Why)
	}
	for l, want := range map[string]bool{"mlo": true, "mlo1": true, "multi": false, "single": false} {
		if r, ok := ran[l]; !ok || r != want {
			t.Errorf("links=%s: ran %v (stated %v), want %v: with the tier's binaries the real multi-link rows replace the wired stand-ins", l, r, ok, want)
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"What carried the scenarios", "**links=mlo ran**", "real 802.11be multi-link", "links=multi did not run (wired stand-in"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md does not say %q", want)
		}
	}
	mloRuns := 0
	for _, r := range o.Runs {
		if r.Error != "" {
			t.Errorf("run %s: %s", r.ID, r.Error)
			continue
		}
		links := r.Labels["links"]
		if links != "mlo" && links != "mlo1" {
			t.Logf("run %s: valid %v %v; goodput %.2f Mbit/s", r.ID, len(r.Invalid) == 0, r.Invalid, r.Metrics["goodput"])
			continue
		}
		mloRuns++
		per := perLink(t, filepath.Join(dir, r.File))
		t.Logf("run %s: valid %v %v; goodput %.2f Mbit/s, srtt %.1f ms; frames delivered per link: %s", r.ID, len(r.Invalid) == 0, r.Invalid,
			r.Metrics["goodput"], r.Metrics["srtt"], per.text)
		// the sender (sta1) and the AP: both links under multi-link, the
		// AP MLD's first one for a single-link station
		want := 2
		if links == "mlo1" {
			want = 1
		}
		for _, node := range []string{"sta1", "ap"} {
			if n := per.used[node]; n != want {
				t.Errorf("run %s: %s's frames went on %d links, want %d", r.ID, node, n, want)
			}
		}
	}
	if mloRuns == 0 {
		t.Error("no run on real multi-link")
	}
	for _, c := range o.Checks {
		t.Logf("%s %s (%s): %s %s", c.ID, c.Status, c.Class, c.Measured, c.Reason)
		if c.Status == "fail" && (c.Class == "physics" || c.Class == "behaviour") {
			t.Errorf("check %s (%s) failed: %s — %s", c.ID, c.Class, c.Title, c.Measured)
		}
	}
	t.Logf("verdict %s", o.Verdict)
}

type linkUse struct {
	used map[string]int // node → links that carried its frames
	text string
}

// perLink reads a run's raw result: each radio's frames delivered per
// link of the medium.
func perLink(t *testing.T, path string) linkUse {
	t.Helper()
	out := linkUse{used: map[string]int{}}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("run result: %v", err)
		return out
	}
	var res analysis.Result
	if err := json.Unmarshal(b, &res); err != nil || res.WiFi == nil {
		t.Errorf("run result %s: %v (medium: %v)", path, err, res.WiFi != nil)
		return out
	}
	var parts []string
	for _, r := range res.WiFi.Radios {
		var ls []string
		for _, l := range r.Links {
			ls = append(ls, fmt.Sprintf("%d MHz %d", l.FreqMHz, l.Delivered))
			if l.Delivered > 0 {
				out.used[r.Node]++
			}
		}
		if len(r.Links) == 0 && r.Delivered > 0 {
			out.used[r.Node] = 1 // a single-link radio
			ls = append(ls, fmt.Sprintf("%d", r.Delivered))
		}
		parts = append(parts, r.Node+" {"+strings.Join(ls, ", ")+"}")
	}
	sort.Strings(parts)
	out.text = strings.Join(parts, "; ")
	return out
}
