package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/suite"
	"github.com/emuctl/emuctl/ui"
)

// a suite of three short runs over one shaped link, for the suite's page
const pageSuite = `suite: tui-suite
title: the suite page's test
params:
  rate: [10mbit, 20mbit, 30mbit]
profiles:
  quick: {duration: 3s, warmup: 500ms, reps: 1}
topology:
  nodes:
    h1: {}
    h2: {}
  links:
    - endpoints: [h1, h2]
      link: {rate: "${rate}", delay: 1ms, queue: 50}
flows:
  - {name: bulk, from: h1, to: h2, proto: tcp, cc: reno}
checks:
  - id: C1
    class: physics
    title: goodput within capacity
    per: run
    expect: goodput[bulk] <= 1.02 * cap(rate)
    unit: Mbit/s
  - id: B1
    class: behaviour
    title: a faster link carries more
    expect: goodput{rate=30mbit} > goodput{rate=10mbit}
    show: goodput{rate=30mbit} / goodput{rate=10mbit}
`

// seen is what the page showed while the suite ran.
type seen struct {
	Progress string   `json:"progress"`
	Status   string   `json:"status"`
	Nodes    []string `json:"nodes"`
	AB       string   `json:"ab"`
	Checks   []string `json:"checks"` // "C1 pass so far"
	Runs     int      `json:"runs"`
}

// TestSuitePageInBrowser: emuctl test --ui's page, in a headless
// chromium, while a real three-run suite runs: it follows each run's lab
// as it comes up (its nodes drawn, the link's throughput live and within
// the run's capacity), counts the runs, shows the checks judged so far
// ("so far" until their scenarios have all run, then "final"), and when
// the suite ends its verdict and its report in the page.
func TestSuitePageInBrowser(t *testing.T) {
	testutil.NeedRoot(t)
	ctx := browser(t)
	s, err := suite.Load("tui-suite.yaml", []byte(pageSuite))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := s.Plan("quick", suite.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	feed := &ui.SuiteFeed{}
	srv := serve(t, ui.Options{Lab: "tui-suite", Report: dir, Suite: feed})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL()), chromedp.WaitVisible(chromedp.CSS(`#suite`))); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var statuses []suite.Status
	done := make(chan *suite.Outcome, 1)
	go func() {
		out, err := suite.Run(context.Background(), plan, suite.Options{Dir: dir, Seed: 3, Lab: "tui-suite",
			Watch: func(st suite.Status) {
				feed.Set(st)
				mu.Lock()
				statuses = append(statuses, st)
				mu.Unlock()
			}})
		if err != nil {
			t.Errorf("suite: %v", err)
		}
		done <- out
	}()

	const look = `(() => ({
	  progress: document.getElementById('suite-progress').textContent,
	  status: document.getElementById('status').textContent,
	  nodes: [...document.querySelectorAll('#topo .node text')].map(e => e.textContent).sort(),
	  ab: (document.getElementById('ab-0') || {}).textContent || '',
	  checks: [...document.querySelectorAll('#suite-checks tbody tr')].map(r => [...r.children].slice(0, 4).map(c => c.textContent).join(' ')),
	  runs: document.querySelectorAll('#suite-runs tbody tr').length,
	}))()`
	var out *suite.Outcome
	var views []seen
	maxRate := map[string]float64{} // per run's rate: the largest a→b the page showed
	runRate := regexp.MustCompile(`: rate=(\d+)mbit #1 \(running\)`)
	soFar := false
	// the rates are timed: judged only when the machine gave the run its
	// CPU (the suite's own flows fill a core)
	load := testutil.MeasureHost(func() {
		for out == nil {
			select {
			case out = <-done:
			case <-time.After(200 * time.Millisecond):
			}
			v, err := chromedp.Run(ctx, chromedp.Evaluate[seen](look))
			if err != nil {
				t.Fatalf("reading the page: %v", err)
			}
			views = append(views, v)
			if m := runRate.FindStringSubmatch(v.Progress); m != nil && v.Status == "live" && strings.Join(v.Nodes, " ") == "h1 h2" {
				maxRate[m[1]] = max(maxRate[m[1]], mbit(v.AB))
			}
			for _, c := range v.Checks {
				soFar = soFar || strings.HasSuffix(c, "so far")
			}
		}
	})
	if out.Verdict != "pass" {
		t.Fatalf("the suite itself: %s %+v", out.Verdict, out.Checks)
	}
	// the page at the end: the verdict, every run, every check final,
	// and the report in the page
	var verdict, report string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		verdict, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById('verdict') || {}).textContent || ''`))
		report, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const d = document.getElementById('suite-report-frame').contentDocument; return d && d.body ? d.body.textContent : '' })()`))
		if verdict != "" && report != "" {
			break
		}
	}
	last, _ := chromedp.Run(ctx, chromedp.Evaluate[seen](look))
	screenshot(t, ctx, "suite")

	followed := map[string]bool{} // the progress lines the page showed while live
	for _, v := range views {
		if v.Status == "live" && strings.HasPrefix(v.Progress, "run ") {
			followed[v.Progress[:len("run 1 of 3")]] = true
		}
	}
	t.Logf("%d looks; live during %v; largest a→b shown per run's rate (Mbit/s): %v; final checks %q; report %d chars", len(views), followed, maxRate, last.Checks, len(report))
	if len(followed) < 2 {
		t.Errorf("the page followed the lab during %v, want at least two of the three runs", followed)
	}
	// physics: during each run the page shows that run's lab, whose bulk
	// flow fills its link: the wire rate (counters count whole frames)
	// reaches 0.8 × R and never exceeds R by more than a sampling
	// interval's jitter (3 %, as TestUIBrowser)
	starved, why := load.Starved(true)
	t.Logf("while the suite ran: %v", load)
	for rate, shown := range maxRate {
		r, _ := strconv.ParseFloat(rate, 64)
		switch {
		case starved:
			t.Logf("the %s Mbit/s run's rate (at most %.2f Mbit/s shown) is not judged: %s", rate, shown, why)
		case shown < 0.8*r || shown > 1.03*r:
			t.Errorf("during the %s Mbit/s run the page showed at most %.2f Mbit/s a→b, want within [0.8, 1.03] × %s", rate, shown, rate)
		}
	}
	if len(maxRate) < 2 {
		t.Errorf("the page showed a live rate during %d runs, want at least two of three", len(maxRate))
	}
	if !soFar {
		t.Errorf("no check was shown as judged so far while the suite ran")
	}
	if verdict != "PASS" || last.Runs != 3 || len(last.Checks) != 2 {
		t.Errorf("at the end: verdict %q, %d runs, checks %q", verdict, last.Runs, last.Checks)
	}
	for _, c := range last.Checks {
		if !strings.HasSuffix(c, "pass final") {
			t.Errorf("check at the end: %q, want pass, final", c)
		}
	}
	if !strings.Contains(report, "goodput within capacity") || !strings.Contains(report, "a faster link carries more") {
		t.Errorf("the report in the page: %.300q", report)
	}
	// the statuses the runner handed on: runs counted up, the last one final
	mu.Lock()
	defer mu.Unlock()
	fin := statuses[len(statuses)-1]
	if fin.Phase != "finished" || fin.Done != 3 || fin.Verdict != "pass" || fin.Report != "report.md" {
		t.Errorf("the last status: %+v", fin)
	}
	if _, err := os.Stat(filepath.Join(dir, fin.Report)); err != nil {
		t.Error(err)
	}
}

// TestSuiteStatusServed: api/suite answers the feed's last status behind
// the token, with its version; suite-report is 404 until report.md
// exists, then a page of it (the file's own markup escaped, no script)
// that only the suite's page may frame.
func TestSuiteStatusServed(t *testing.T) {
	dir := t.TempDir()
	feed := &ui.SuiteFeed{}
	if _, err := ui.New(ui.Options{Suite: feed, Report: dir}); err == nil {
		t.Error("a suite's page without its lab's name was accepted")
	}
	s := serve(t, ui.Options{Lab: "tui-x", Report: dir, Suite: feed})
	c := newClient(t, s)
	get := func(path string, token bool) (int, http.Header, string) {
		req, _ := http.NewRequest("GET", c.base+path, nil)
		if token {
			req.AddCookie(&http.Cookie{Name: c.cookie, Value: c.token})
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}
	if code, _, _ := get("/api/suite", false); code != http.StatusForbidden {
		t.Errorf("api/suite without the token: %d", code)
	}
	if code, h, body := get("/api/suite", true); code != 200 || h.Get("X-Version") != "0" || body != `{"phase":"starting"}` {
		t.Errorf("before a status: %d %q %s", code, h.Get("X-Version"), body)
	}
	feed.Set(suite.Status{Suite: "s", Phase: "running", Runs: 4, Done: 1, Current: "rate=10mbit #1"})
	code, h, body := get("/api/suite", true)
	var st suite.Status
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil || h.Get("X-Version") != "1" || st.Current != "rate=10mbit #1" || st.Done != 1 {
		t.Errorf("after one status: %d %q %s (%v)", code, h.Get("X-Version"), body, err)
	}
	if code, _, _ := get("/suite-report", true); code != http.StatusNotFound {
		t.Errorf("suite-report before the report: %d", code)
	}
	os.WriteFile(filepath.Join(dir, "report.md"), []byte("# s\n\nVerdict: **PASS** <script>alert(1)</script>\n"), 0o644)
	code, h, body = get("/suite-report", true)
	if code != 200 || !strings.Contains(body, "<strong>PASS</strong>") || strings.Contains(body, "<script>") ||
		!strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'self'") || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'none'") {
		t.Errorf("suite-report: %d %q %s", code, h.Get("Content-Security-Policy"), body)
	}
	if code, _, body := get("/api/info", true); code != 200 || !strings.Contains(body, `"suite":true`) {
		t.Errorf("api/info: %d %s", code, body)
	}
}
