package ui_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/emuctl/emuctl/ui"
)

// plotCheck is what the page's script found of one plot.
type plotCheck struct {
	Src    string  `json:"src"`
	Width  int     `json:"w"`
	Height int     `json:"h"`
	Ink    float64 `json:"ink"` // the fraction of pixels that are not near white
}

// TestSuiteReportsInBrowser looks at every built-in suite's report as a
// person would, in a headless chromium: the reports of a results
// directory (EMUCTL_SUITE_REPORTS, e.g. results/ci after make
// test-suites, which runs this test at its end), each served as emuctl
// report DIR --ui serves it. For each: the verdict, the checks before the
// plots and the plots before the tables, and every plot loaded, decoded
// at the figure's size and drawn (ink on at least 2 % of its pixels, not
// a blank or broken image); a full-page screenshot of each report and one
// of each plot as the page shows it are kept with the test's artifacts
// (go test -artifacts -outputdir DIR).
func TestSuiteReportsInBrowser(t *testing.T) {
	root := os.Getenv("EMUCTL_SUITE_REPORTS")
	if root == "" {
		t.Skip("no suite reports to look at: set EMUCTL_SUITE_REPORTS to a results directory (make test-suites runs this on results/ci)")
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "latest"))
	sort.Strings(dirs)
	if len(dirs) == 0 {
		t.Fatalf("%s holds no <suite>/latest report", root)
	}
	for _, dir := range dirs {
		suite := filepath.Base(filepath.Dir(dir))
		t.Run(suite, func(t *testing.T) {
			real, err := filepath.EvalSymlinks(dir)
			if err != nil {
				t.Fatal(err)
			}
			ctx := browser(t)
			s := serve(t, ui.Options{Report: real})
			if err := chromedp.Do(ctx, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS(`table`))); err != nil {
				t.Fatal(err)
			}
			verdict, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`body > p > strong`)))
			heads, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("h2")].map(h => h.textContent)`))
			t.Logf("%s: %s; sections %v", suite, verdict, heads)
			at := func(h string) int {
				for i, x := range heads {
					if x == h {
						return i
					}
				}
				return -1
			}
			checks, plots, scen := at("Checks"), at("Plots"), at("Scenarios (medians over valid runs)")
			if checks != 0 || plots >= 0 && (plots < checks || scen >= 0 && plots > scen) {
				t.Errorf("sections in order %v: want Checks first, then Plots, then the tables", heads)
			}
			var checked []plotCheck
			for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
				checked, err = chromedp.Run(ctx, chromedp.Evaluate[[]plotCheck](`[...document.querySelectorAll("img")].map(i => {
					if (!i.complete || !i.naturalWidth) return {src: i.getAttribute("src"), w: 0, h: 0, ink: 0};
					const c = document.createElement("canvas");
					c.width = i.naturalWidth; c.height = i.naturalHeight;
					const g = c.getContext("2d");
					g.drawImage(i, 0, 0);
					const d = g.getImageData(0, 0, c.width, c.height).data;
					let ink = 0;
					for (let k = 0; k < d.length; k += 4) if (d[k] < 230 || d[k+1] < 230 || d[k+2] < 230) ink++;
					return {src: i.getAttribute("src"), w: i.naturalWidth, h: i.naturalHeight, ink: ink / (d.length / 4)};
				})`))
				if err == nil && allLoaded(checked) {
					break
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if plots >= 0 && len(checked) == 0 {
				t.Error("a Plots section without an image")
			}
			for _, p := range checked {
				t.Logf("plot %s: %d×%d px, ink %.1f %%", p.Src, p.Width, p.Height, 100*p.Ink)
				// analysis.FigWidth × PNGDPI: 7.5 in at 150 dpi
				if p.Width != 1125 || p.Ink < 0.02 {
					t.Errorf("plot %s: %d×%d px, %.1f %% ink: want a drawn 1125-px figure", p.Src, p.Width, p.Height, 100*p.Ink)
				}
			}
			screenshot(t, ctx, suite+"-report")
			for i, p := range checked {
				png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.JSPath(fmt.Sprintf(`document.querySelectorAll("img")[%d]`, i))))
				if err != nil {
					t.Errorf("plot %s as the page shows it: %v", p.Src, err)
					continue
				}
				name := fmt.Sprintf("%s-plot%02d-%s.png", suite, i+1, strings.TrimSuffix(filepath.Base(p.Src), ".png"))
				if err := os.WriteFile(filepath.Join(t.ArtifactDir(), name), png, 0o644); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func allLoaded(ps []plotCheck) bool {
	for _, p := range ps {
		if p.Width == 0 {
			return false
		}
	}
	return true
}
