package ui_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/emuctl/emuctl/ui"
)

// reportGet fetches path from a server with or without its token.
func reportGet(t *testing.T, s *ui.Server, path string, token bool) (int, http.Header, string) {
	t.Helper()
	u := strings.SplitN(s.URL(), "/?token=", 2)
	url := u[0] + path
	if token {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		url += sep + "token=" + u[1]
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestReportServer: a results directory served without a lab (emuctl
// report DIR --ui): the token first; the suite's report.md as the front
// page — its verdict, its checks table with escaped cells, its plot under
// /report/, links to the analysis report —, every file read-only under
// /report/, nothing of a lab's page or API, nothing outside the
// directory.
func TestReportServer(t *testing.T) {
	s := serve(t, ui.Options{Report: "testdata/report", ReportHTML: "report/report.html"})
	for _, p := range []string{"/", "/report/report.md", "/report/plots/01-bars-goodput.svg", "/api/info"} {
		if code, _, _ := reportGet(t, s, p, false); code != http.StatusForbidden {
			t.Errorf("GET %s without the token: %d", p, code)
		}
	}
	code, h, page := reportGet(t, s, "/", true)
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'none'") {
		t.Fatalf("front page: %d %v", code, h)
	}
	for _, want := range []string{
		"<title>asym-mptcp — MPTCP over asymmetric 10 + 2 Mbit/s paths, with and without bounded queues</title>",
		"<h1>asym-mptcp — MPTCP over asymmetric 10 + 2 Mbit/s paths, with and without bounded queues</h1>",
		"<p><strong>Verdict: PASS</strong> — physics 5/5 passed",
		"<code>emuctl test asym-mptcp --quick</code> · profile <strong>quick</strong>",
		"<h2>Checks</h2>",
		"<tr><th>result</th><th>ID</th><th>class</th><th>check</th><th>measured</th><th>expected</th><th>paper</th></tr>",
		"<td>a cell with a pipe: a | b, and <em>emphasis</em></td><td>3 &lt; 4 &amp; 5 &gt; 2</td><td><code>x[a] | y &lt;= 2 * cap(10mbit)</code></td><td>&lt;b&gt;not markup&lt;/b&gt;</td>",
		`<img src="/report/plots/01-bars-goodput.svg" alt="Aggregate goodput (TCP scenario - both paths)">`,
		`<a href="/report/report/report.html">the analysis report</a>`,
		`<a href="https://example.org/emuctl">emuctl</a>`,
		"<ul>\n<li>a bullet with <code>code</code></li>\n<li>another</li>\n</ul>",
		"<pre><code>emuctl test asym-mptcp --quick\n</code></pre>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("front page lacks %q", want)
		}
	}
	if strings.Contains(page, "|---") || strings.Contains(page, "<b>") || strings.Contains(page, "**") {
		t.Errorf("front page keeps raw markdown or markup:\n%s", page)
	}
	if n := strings.Count(page, "<tr>"); n != 4 {
		t.Errorf("%d table rows, want 4 (a header and three checks)", n)
	}
	if code, h, body := reportGet(t, s, "/report/plots/01-bars-goodput.svg", true); code != 200 || h.Get("Content-Type") != "image/svg+xml" || !strings.Contains(body, "<svg") {
		t.Errorf("plot: %d %s", code, h.Get("Content-Type"))
	}
	if code, _, body := reportGet(t, s, "/report/report/report.html", true); code != 200 || !strings.Contains(body, "<h1>analysis</h1>") {
		t.Errorf("analysis report: %d", code)
	}
	for _, p := range []string{"/api/info", "/api/events", "/app.js", "/report/../server.go", "/report/%2e%2e/server.go", "/nope"} {
		if code, _, body := reportGet(t, s, p, true); code == 200 || strings.Contains(body, "package ui") {
			t.Errorf("GET %s on a report server: %d", p, code)
		}
	}
	// a directory without a suite report: the analysis report is the front page
	s2 := serve(t, ui.Options{Report: "testdata/report/report", ReportHTML: "report.html"})
	if code, _, body := reportGet(t, s2, "/", true); code != 200 || !strings.Contains(body, "<h1>analysis</h1>") {
		t.Errorf("front page of a plain results directory: %d", code)
	}
	if _, err := ui.New(ui.Options{Report: "testdata/nope"}); err == nil || !strings.Contains(err.Error(), "not a results directory") {
		t.Errorf("a missing directory: %v", err)
	}
	if _, err := ui.New(ui.Options{}); err == nil {
		t.Error("no lab and no report accepted")
	}
}

// TestReportInBrowser: the suite's report, opened from the printed URL in
// a headless chromium, shows its verdict and checks, its plot loads
// (decoded, with its size), and the analysis report opens from its link.
func TestReportInBrowser(t *testing.T) {
	ctx := browser(t)
	s := serve(t, ui.Options{Report: "testdata/report", ReportHTML: "report/report.html"})
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS(`table`))); err != nil {
		t.Fatal(err)
	}
	verdict, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`body > p > strong`)))
	firstCheck, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`table tr:nth-child(2) td:nth-child(2)`)))
	rows, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table tr").length`))
	// the plot: loaded and decoded, at its own width
	imgW := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		w, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => { const i = document.querySelector("img"); return i && i.complete ? i.naturalWidth : 0 })()`))
		if err == nil && w > 0 {
			imgW = w
			break
		}
	}
	screenshot(t, ctx, "report")
	if verdict != "Verdict: PASS" || firstCheck != "C1" || rows != 4 || imgW != 300 {
		t.Errorf("verdict %q, first check %q, %d rows, plot %d px wide (want 300)", verdict, firstCheck, rows, imgW)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`nav a[href="/report/report/report.html"]`)), chromedp.WaitVisible(chromedp.CSS(`h1`))); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.title`))
	if err != nil || title != "analysis" {
		t.Errorf("the analysis report from the page's link: %q, %v", title, err)
	}
	if regexp.MustCompile(`^http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{48}$`).FindString(s.URL()) == "" {
		t.Errorf("URL %s", s.URL())
	}
}
