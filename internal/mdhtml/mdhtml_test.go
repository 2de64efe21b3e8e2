package mdhtml

import (
	"strings"
	"testing"
)

// TestPage: a report's Markdown as a page — its title, headings, a pipe
// table (header row, escaped pipe), an image and a link relative to the
// page (base "") or under a server's base, code spans kept literal, and
// every other character escaped.
func TestPage(t *testing.T) {
	md := "# sack-reno — <b>title</b>\n\n**Verdict: PASS** — 3 of 3\n\n## Checks\n\n| result | ID | check |\n|---|---|---|\n| ✓ | C1 | `a \\| b` <script> |\n\n![Goodput](plots/01-bars.png)\n\nsee [the analysis](analysis/report.html) and `x*y*z`\n"
	page := string(Page([]byte(md), "", `<a href="x">nav</a>`))
	for _, want := range []string{
		"<title>sack-reno — &lt;b&gt;title&lt;/b&gt;</title>",
		`<nav><a href="x">nav</a></nav>`,
		"<h1>sack-reno — &lt;b&gt;title&lt;/b&gt;</h1>",
		"<p><strong>Verdict: PASS</strong> — 3 of 3</p>",
		"<tr><th>result</th><th>ID</th><th>check</th></tr>",
		"<td><code>a | b</code> &lt;script&gt;</td>",
		`<img src="plots/01-bars.png" alt="Goodput">`,
		`<a href="analysis/report.html">the analysis</a>`,
		"<code>x*y*z</code>",
		"td:first-child{white-space:nowrap}",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "<b>") {
		t.Errorf("markup from the text got through:\n%s", page)
	}
	if got := Render("![p](plots/a.png)", "/report/"); !strings.Contains(got, `src="/report/plots/a.png"`) {
		t.Errorf("under a base: %s", got)
	}
}
