package ui_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/traffic"
	"github.com/emuctl/emuctl/ui"
)

// browser starts a headless Debian chromium driven through the DevTools
// protocol (chromedp starts it and kills it, by its own process, when the
// test ends), or skips the test when there is none.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no chromium on PATH: the page is not tested in a browser (apt-get install chromium; make install-deps installs it)")
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // root
		chromedp.WindowSize(1400, 900),
		chromedp.UserDataDir(t.TempDir()),
		// its singleton socket directory too: chromedp ends chromium with
		// SIGKILL, which leaves it behind in the TMPDIR chromium was given
		chromedp.Env("TMPDIR="+t.TempDir()),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	tctx, cancelT := context.WithTimeout(ctx, 40*time.Second)
	t.Cleanup(cancelT)
	return tctx
}

// screenshot keeps the page as a PNG with the test's artifacts (go test
// -artifacts keeps them; otherwise a temporary directory).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	keepShot(t, ctx, name, chromedp.FullScreenshot(100))
}

// keepShot keeps a screenshot action's PNG with the test's artifacts.
func keepShot(t *testing.T, ctx context.Context, name string, shot chromedp.Action[[]byte]) {
	t.Helper()
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	p := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("screenshot %s (%d bytes)", p, len(png))
}

// mbit reads a rate the page shows ("9.98 Mbit/s") in Mbit/s.
func mbit(s string) float64 {
	f := strings.Fields(s)
	if len(f) != 2 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	switch f[1] {
	case "Gbit/s":
		return v * 1e3
	case "Mbit/s":
		return v
	case "kbit/s":
		return v / 1e3
	}
	return v / 1e6
}

// The page of a running lab in a real browser: it names every node and
// link, its numbers update several times a second and show a real flow's
// rate, a link's details plot its history, a change made on the page
// reaches the lab, and the lab going down shows.
func TestUIBrowser(t *testing.T) {
	testutil.NeedRoot(t)
	ctx := browser(t)
	l := upLab(t, "tui3")
	s := serve(t, ui.Options{Lab: l.Name(), AllowChanges: true})

	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS(`#row-1`))); err != nil {
		t.Fatal(err)
	}
	nodes, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#topo .node text')].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#links tbody tr').length`))
	sort.Strings(nodes)
	if !slices.Equal(nodes, []string{"h1", "h2", "s1"}) || rows != 2 {
		t.Errorf("the page draws nodes %v and %d links, want h1 h2 s1 and 2", nodes, rows)
	}
	params, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#row-0 td:nth-child(3)`)))
	if !strings.Contains(params, "rate=10.00Mbit/s") || !strings.Contains(params, "delay=2ms") {
		t.Errorf("link 0's parameters on the page: %q", params)
	}

	// live: the update counter moves, and a flow's rate shows
	done := make(chan error, 1)
	var res *lab.Result
	go func() {
		var err error
		// CUBIC: it fills the queue until a drop, and backs off to 0.7
		res, err = l.Traffic(context.Background(), lab.Flow{Client: "h1", Server: "h2", Duration: 4 * time.Second, Sock: traffic.SockOpts{CC: "cubic"}})
		done <- err
	}()
	time.Sleep(2500 * time.Millisecond) // past slow start
	var shown []float64
	type gauge struct {
		Packets int     `json:"packets"`
		Limit   int     `json:"limit"`
		Width   float64 `json:"width"`
		Table   string  `json:"table"`
	}
	var gauges []gauge
	u0, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#updates`)))
	for range 4 {
		ab, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#ab-0`)))
		if err != nil {
			t.Fatal(err)
		}
		shown = append(shown, mbit(ab))
		// link 0's a->b queue gauge on the wire, and the table's number
		g, err := chromedp.Run(ctx, chromedp.Evaluate[gauge](`(() => {
			const f = document.getElementById('qf-ab-0');
			return { packets: +f.dataset.packets, limit: +f.dataset.limit, width: +f.getAttribute('width'),
				table: document.getElementById('queue-0').textContent };
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		gauges = append(gauges, g)
		time.Sleep(250 * time.Millisecond)
	}
	u1, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#updates`)))
	screenshot(t, ctx, "page-under-traffic")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	n0, _ := strconv.Atoi(u0)
	n1, _ := strconv.Atoi(u1)
	t.Logf("updates on the page: %d -> %d in 1 s; link 0 a->b shown: %v Mbit/s; flow goodput %.3f Mbit/s (%.3f on the wire)",
		n0, n1, shown, res.Summary[0].SteadyGoodputBps/1e6, res.Summary[0].SteadyGoodputBps*1514/1448/1e6)
	// the gauge: the default queue of a 10 Mbit/s, 2 ms link (100
	// packets: its BDP is 3.3), filled as the counters say, never past
	// the limit and the one packet in transit; CUBIC keeps it over half
	// full (after a drop it sends 0.7 of queue + BDP)
	var pk []int
	for _, g := range gauges {
		pk = append(pk, g.Packets)
		if g.Limit != 100 || g.Packets < 0 || g.Packets > g.Limit+1 || math.Abs(g.Width-30*min(1, float64(g.Packets)/float64(g.Limit))) > 0.01 ||
			!strings.HasPrefix(g.Table, strconv.Itoa(g.Packets)+" / ") {
			t.Errorf("link 0's a->b queue gauge: %+v (want limit 100, width 30 × packets/limit, the table's number)", g)
		}
	}
	slices.Sort(pk)
	t.Logf("link 0's a->b queue on the wire: %v packets of 100", pk)
	if pk[len(pk)/2] < 50 {
		t.Errorf("link 0's a->b queue under a CUBIC flow: %v packets, want a median ≥ 50 of 100", pk)
	}
	if n1-n0 < 2 {
		t.Errorf("the page updated %d times in 1 s, want ≥ 2", n1-n0)
	}
	sort.Float64s(shown)
	wire := res.Summary[0].SteadyGoodputBps * 1514 / 1448 / 1e6
	if med := shown[len(shown)/2]; med < 0.9*wire || med > 1.1*wire || med > 10.3 {
		t.Errorf("link 0 a->b on the page: %v Mbit/s, want within 10 %% of the flow's %.3f Mbit/s on the wire (and at most the link's 10)", shown, wire)
	}

	// a link's details: parameters and its history plot
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#row-0`)), chromedp.WaitVisible(chromedp.CSS(`#plot polyline`))); err != nil {
		t.Fatal(err)
	}
	plotPts, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`#plot polyline`), "points"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(plotPts.Value)); n < 10 {
		t.Errorf("the link's plot has %d points", n)
	}
	screenshot(t, ctx, "link-details")

	// a change from the page goes through the API to the lab
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#keys`), "delay=9ms"),
		chromedp.Click(chromedp.CSS(`#btn-set`)),
		chromedp.WaitVisible(chromedp.CSS(`#change-result.ok`)),
	); err != nil {
		t.Fatal(err)
	}
	result, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#change-result`)))
	links, err := l.Links()
	if err != nil || links[0].AtoB.Delay != 9*time.Millisecond {
		t.Errorf("after link set on the page (%q): %+v %v", result, links, err)
	}
	time.Sleep(700 * time.Millisecond)
	evs, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#events`)))
	if !strings.Contains(evs, "link-changed link 0") || !strings.Contains(evs, "delay=9ms") {
		t.Errorf("event list after the change: %q", evs)
	}

	// a node's details: interfaces, addresses, routes
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#topo .node circle`)), chromedp.WaitVisible(chromedp.CSS(`#details h3`))); err != nil {
		t.Fatal(err)
	}
	details, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#details`)))
	if !strings.Contains(details, "Interfaces") || !strings.Contains(details, "-eth0") || !strings.Contains(details, "10.0.0.") {
		t.Errorf("node details: %q", details)
	}
	screenshot(t, ctx, "node-details")

	// a terminal into that node: bash on a pseudo-terminal, drawn by the
	// page's own emulator (term.js), keys typed into it
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#btn-shell`)), chromedp.WaitVisible(chromedp.CSS(`#term-out .scr`))); err != nil {
		t.Fatal(err)
	}
	node, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#term-node`)))
	screen := func() []string {
		// each row without its trailing blanks
		lines, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#term-out .scr')].map(e => e.textContent.trimEnd())`))
		return lines
	}
	count := func(want string) int { return strings.Count(strings.Join(screen(), "\n"), want) }
	// waitScreen waits until the screen shows want more often than the
	// had times it did (counted before the keys that print it), and says
	// when
	waitScreen := func(want string, had int, d time.Duration) time.Time {
		t.Helper()
		deadline := time.Now().Add(d)
		for {
			if count(want) > had {
				return time.Now()
			}
			if time.Now().After(deadline) {
				t.Fatalf("the terminal did not show %q within %v; its screen:\n%q", want, d, screen())
			}
			time.Sleep(30 * time.Millisecond)
		}
	}
	keys := func(k string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`#term-out`), k)); err != nil {
			t.Fatal(err)
		}
	}
	size := func() (int, int) {
		v, _ := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[+document.getElementById('term-out').dataset.rows, +document.getElementById('term-out').dataset.cols]`))
		if len(v) != 2 {
			return 0, 0
		}
		return v[0], v[1]
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(strings.Join(screen(), "\n"), "@"+node+" ("+l.Name()+")]"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no prompt naming %s in the terminal: %q", node, screen())
		}
	}
	// its size is the panel's, as the page measured it
	rows, cols := size()
	if rows < 5 || cols < 40 {
		t.Errorf("the terminal is %d × %d", rows, cols)
	}
	want := fmt.Sprintf("%s\n%d %d", node, rows, cols)
	had := count(want)
	keys("hostname; stty size\r")
	waitScreen(want, had, 5*time.Second)
	// output shows as it is printed, not when the command ends
	keys("for i in 1 2 3; do echo tick$i; sleep 1; done\r")
	t1 := waitScreen("tick1", 0, 5*time.Second)
	t3 := waitScreen("tick3", 0, 5*time.Second)
	if d := t3.Sub(t1); d < 1800*time.Millisecond {
		t.Errorf("tick1 and tick3 showed %v apart: not as printed (want ≥ 1.8 s)", d)
	}
	// what a full-screen program sends: clear, cursor addressing, colour
	keys(`clear; printf '\033[5;10HXY\033[1;31mRED\033[0m'; sleep 3` + "\r")
	waitScreen("XYRED", 0, 5*time.Second)
	type cell struct {
		Row   int    `json:"row"`
		Col   int    `json:"col"`
		Color string `json:"color"`
		Bold  string `json:"bold"`
	}
	red, err := chromedp.Run(ctx, chromedp.Evaluate[cell](`(() => {
		const rows = [...document.querySelectorAll('#term-out .scr')];
		const row = rows.findIndex(r => r.textContent.includes('XYRED'));
		const span = [...rows[row].children].find(s => s.textContent.startsWith('RED'));
		const cs = getComputedStyle(span);
		return { row, col: rows[row].textContent.indexOf('XY'), color: cs.color, bold: cs.fontWeight };
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if red.Row != 4 || red.Col != 9 || red.Color != "rgb(255, 0, 0)" || red.Bold != "700" {
		t.Errorf("after clear and \\033[5;10H: XY at row %d col %d (want 4, 9 from 0), RED in %s weight %s (want bold bright red)", red.Row, red.Col, red.Color, red.Bold)
	}
	screenshot(t, ctx, "terminal")
	// Ctrl-C from the keyboard, through the terminal's line discipline
	keys("sleep 30\r")
	time.Sleep(300 * time.Millisecond)
	if err := chromedp.Do(ctx, chromedp.KeyEvent("c", chromedp.KeyModifiers(chromedp.ModifierCtrl))); err != nil {
		t.Fatal(err)
	}
	keys("echo rc=$?\r")
	waitScreen("rc=130", 0, 5*time.Second)
	// the panel resized: the page measures it again and bash is told
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1000, 700)); err != nil {
		t.Fatal(err)
	}
	var rows2, cols2 int
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if rows2, cols2 = size(); rows2 != rows || cols2 != cols {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal stayed %d × %d in a smaller window", rows, cols)
		}
	}
	time.Sleep(200 * time.Millisecond) // the resize message on its way
	want = fmt.Sprintf("%d %d", rows2, cols2)
	had = count(want)
	keys("stty size\r")
	waitScreen(want, had, 5*time.Second)
	t.Logf("terminal of %s: %d × %d, then %d × %d in a smaller window; ticks %v apart", node, rows, cols, rows2, cols2, t3.Sub(t1).Round(10*time.Millisecond))
	// closed from the page: bash is hung up
	info, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#term-info`)))
	var pid int
	if i := strings.Index(info, "bash pid "); i >= 0 {
		fmt.Sscanf(info[i+len("bash pid "):], "%d", &pid)
	}
	if pid == 0 {
		t.Fatalf("no pid in the terminal's header %q", info)
	}
	chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#term-close`)))
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("bash (pid %d) runs 3 s after the page closed its terminal: %v", pid, err)
		}
	}
	chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900))

	// the lab goes down: the page says so and stays
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#status.down`))); err != nil {
		t.Errorf("the page does not show the lab down: %v", err)
	} else if status, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#status`))); status != "lab down" {
		t.Errorf("status after down: %q", status)
	}
	screenshot(t, ctx, "lab-down")
}

// The Wi-Fi map in a real browser: stations where the medium has them,
// their SNR to their AP; a station dragged on the map moves in the medium
// (wifi.move, as `emuctl wifi move`), and its new SNR — the medium's, read
// back through the lab — shows on the page within a second.
func TestUIBrowserWiFi(t *testing.T) {
	testutil.NeedRoot(t)
	ctx := browser(t)
	uctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := lab.Up(uctx, lab.NewTopology("tui4").
		AccessPoint("ap1", lab.SSID("tui4"), lab.Position(0, 0, 0)).
		Station("sta1", lab.AP("ap1"), lab.Position(5, 0, 0)).
		Station("sta2", lab.AP("ap1"), lab.Position(-5, 3, 0)), lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Down(); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	s := serve(t, ui.Options{Lab: l.Name(), AllowChanges: true})

	snrOf := func() (float64, [3]float64) {
		ms, err := l.MediumStats()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ms.Links {
			if k.From == "sta1" && k.To == "ap1" {
				return k.SNRdB, ms.Positions["sta1"]
			}
		}
		t.Fatalf("the medium has no link sta1 -> ap1: %+v", ms.Links)
		return 0, [3]float64{}
	}
	snr0, pos0 := snrOf()
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS(`#wsnr-sta1`))); err != nil {
		t.Fatal(err)
	}
	shown0, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#wsnr-sta1`)))
	names, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#wifimap .wnode')].map(g => g.dataset.node).sort()`))
	if !slices.Equal(names, []string{"ap1", "sta1", "sta2"}) || shown0 != fmt.Sprintf("%.1f dB", snr0) {
		t.Errorf("the map shows %v, sta1's SNR %q; the medium says %.1f dB", names, shown0, snr0)
	}

	// drag sta1 150 pixels to the right
	xy, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
		document.getElementById('wifimap').scrollIntoView();
		const r = document.querySelector('#wifimap .wnode[data-node="sta1"]').firstChild.getBoundingClientRect();
		return [r.x + r.width / 2, r.y + r.height / 2];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	steps := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, xy[0], xy[1], chromedp.ButtonLeft)}
	for i := 1; i <= 5; i++ {
		steps = append(steps, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, xy[0]+float64(30*i), xy[1], chromedp.ButtonLeft))
	}
	steps = append(steps, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, xy[0]+150, xy[1], chromedp.ButtonLeft))
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#wifi-result.ok`))); err != nil {
		msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#wifi-result`)))
		t.Fatalf("no wifi.move after the drag: %v %q", err, msg)
	}
	moved := time.Now()
	snr1, pos1 := snrOf()
	want := fmt.Sprintf("%.1f dB", snr1)
	var shown string
	for time.Since(moved) < time.Second {
		if shown, _ = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#wsnr-sta1`))); shown == want {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("sta1 dragged from %v to %v m: SNR to ap1 %.1f -> %.1f dB (medium); the page shows %q %v after the move",
		pos0, pos1, snr0, snr1, shown, time.Since(moved).Round(time.Millisecond))
	if pos1[0] < pos0[0]+2 || pos1[1] < pos0[1]-1 || pos1[1] > pos0[1]+1 || pos1[2] != pos0[2] {
		t.Errorf("sta1 at %v after a drag to the right from %v", pos1, pos0)
	}
	if snr1 >= snr0 {
		t.Errorf("SNR %.1f dB after moving away from the AP, was %.1f", snr1, snr0)
	}
	if shown != want {
		t.Errorf("the page shows sta1's SNR %q a second after the move, the medium %s", shown, want)
	}
	screenshot(t, ctx, "wifi-map")

	// the AP's range, to the map's scale: the medium's distance
	ms, err := l.MediumStats()
	if err != nil || ms.Ranges["ap1"] <= 0 {
		t.Fatalf("the medium has no range for ap1: %v %v", ms.Ranges, err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#wifi-fit-range`)), chromedp.Sleep(600*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	geo, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
		const c = document.getElementById('wrange-ap1'), f = state.wframe;
		return [+c.getAttribute('r'), f.sc];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ap1's range: %.2f m in the medium; on the map a circle of %.1f px at %.3f px/m = %.2f m", ms.Ranges["ap1"], geo[0], geo[1], geo[0]/geo[1])
	if math.Abs(geo[0]/geo[1]-ms.Ranges["ap1"]) > 0.01 {
		t.Errorf("the map's range %.2f m, the medium's %.2f m", geo[0]/geo[1], ms.Ranges["ap1"])
	}
	screenshot(t, ctx, "wifi-ranges")
}

// TestUIBrowserMachines: a lab over two machines (two local machines of
// topologies/cluster-linear.yaml): the page frames each machine's nodes
// with its name — every node inside its machine's frame and no other —
// from the API's machines method; its links' states and rates are read
// through the machines' workers: every link up, and under a flow the cut
// link's rate on the page is the one-shot counters' and the flow's within
// 10 %.
func TestUIBrowserMachines(t *testing.T) {
	testutil.NeedRoot(t)
	ctx := browser(t)
	b, err := os.ReadFile("../topologies/cluster-linear.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l, err := lab.Up(context.Background(), lab.YAML("tuimach.yaml", []byte(strings.Replace(string(b), "name: cluster-linear", "name: tuimach", 1))), lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Down(); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	s := serve(t, ui.Options{Lab: l.Name()})
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS(`#topo .machine`))); err != nil {
		t.Fatal(err)
	}
	type frame struct {
		Name  string   `json:"name"`
		Label string   `json:"label"`
		Nodes []string `json:"nodes"` // the nodes whose centre is inside the frame
	}
	frames, err := chromedp.Run(ctx, chromedp.Evaluate[[]frame](`(() => {
	  const nodes = [...document.querySelectorAll('#topo .node')].map(g => ({ name: g.dataset.node, b: g.getBBox(), t: g.transform.baseVal.consolidate().matrix }));
	  return [...document.querySelectorAll('#topo .machine')].map(f => {
	    const r = f.querySelector('rect').getBBox();
	    const inside = nodes.filter(n => n.t.e >= r.x && n.t.e <= r.x + r.width && n.t.f >= r.y && n.t.f <= r.y + r.height).map(n => n.name).sort();
	    return { name: f.dataset.machine, label: f.querySelector('text').textContent, nodes: inside };
	  });
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "machines")
	place := l.Spec().Cluster.Nodes
	t.Logf("placement %v; frames %+v", place, frames)
	if len(frames) != 2 {
		t.Fatalf("frames %+v, want one per machine (2)", frames)
	}
	// the links' counters are read through the machines' workers: their
	// real states, none drawn down or remote
	var states []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		states, _ = chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#links tbody tr td:last-child')].map(td => td.textContent)`))
		if len(states) == 5 && !slices.ContainsFunc(states, func(s string) bool { return s != "up" }) || time.Now().After(deadline) {
			break
		}
	}
	downs, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#topo .link.down, #topo .link.remote').length`))
	if len(states) != 5 || slices.ContainsFunc(states, func(s string) bool { return s != "up" }) {
		t.Errorf("the links' states on the page: %q (want up: read through the machines' workers)", states)
	}
	if downs != 0 {
		t.Errorf("%d links drawn down or remote", downs)
	}

	// the cut link s3 - s2 under a flow h3 -> h1 (its a->b): the page
	// shows its rate as read on s3's machine, as the one-shot counters
	// (emu.Counters, each machine's worker asked once) and the flow say
	const cut = 4
	if c := l.Spec().Cluster.CutOf(cut); c == nil {
		t.Fatalf("link %d is not cut: %+v", cut, l.Spec().Cluster.Cuts)
	}
	type run struct {
		shown      []float64 // Mbit/s
		once, flow float64   // Mbit/s on the wire
	}
	wire := func(c emu.LinkCounters) uint64 {
		if c.Engine != nil {
			return c.Engine.AToB.OutBytes
		}
		return c.AtoB.Bytes
	}
	r := testutil.RetryStarved(t, "a cut link's rate on the page", true, func() run {
		done := make(chan error, 1)
		var res *lab.Result
		go func() {
			var err error
			res, err = l.Traffic(context.Background(), lab.Flow{Client: "h3", Server: "h1", Duration: 5 * time.Second})
			done <- err
		}()
		time.Sleep(2500 * time.Millisecond) // past slow start
		var out run
		_, c0, err0 := emu.Counters(l.Name())
		for range 4 {
			ab, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(fmt.Sprintf(`#ab-%d`, cut))))
			if err != nil {
				t.Fatal(err)
			}
			out.shown = append(out.shown, mbit(ab))
			time.Sleep(250 * time.Millisecond)
		}
		_, c1, err1 := emu.Counters(l.Name())
		if err := errors.Join(err0, err1, <-done); err != nil {
			t.Fatal(err)
		}
		if dt := c1[cut].At.Sub(c0[cut].At).Seconds(); dt > 0 {
			out.once = float64(wire(c1[cut])-wire(c0[cut])) * 8 / dt / 1e6
		}
		out.flow = res.Summary[0].SteadyGoodputBps * 1514 / 1448 / 1e6
		return out
	})
	screenshot(t, ctx, "machines-under-traffic")
	sort.Float64s(r.shown)
	med := r.shown[len(r.shown)/2]
	t.Logf("link %d (cut, a->b) on the page: %v Mbit/s; one-shot counters over the same second %.3f Mbit/s; the flow %.3f Mbit/s on the wire", cut, r.shown, r.once, r.flow)
	if med < 0.9*r.once || med > 1.1*r.once || med < 0.9*r.flow || med > 1.1*r.flow || med > 10.3 {
		t.Errorf("link %d a->b on the page: %v Mbit/s, want within 10 %% of the one-shot counters' %.3f and the flow's %.3f Mbit/s on the wire (and at most the link's 10)", cut, r.shown, r.once, r.flow)
	}
	for _, f := range frames {
		var want []string
		for n, m := range place {
			if m == f.Name {
				want = append(want, n)
			}
		}
		sort.Strings(want)
		if !slices.Equal(f.Nodes, want) || f.Label != "machine "+f.Name+" (local)" {
			t.Errorf("frame %s (%q) holds %v, want %v", f.Name, f.Label, f.Nodes, want)
		}
	}
}

// TestUIBrowserLargeLab: a lab of 129 nodes (a core switch, 8 edge
// switches, 15 hosts on each): the page draws each edge switch's hosts as
// one group node (15 hosts), so 17 nodes and 16 wires instead of 129 and
// 128 (the table keeps every link); a click on a group draws its hosts one by one; the wheel zooms
// around the pointer and a double click on the background fits the
// drawing again.
func TestUIBrowserLargeLab(t *testing.T) {
	testutil.NeedRoot(t)
	ctx := browser(t)
	topo := lab.NewTopology("tuibig").Switch("core")
	for s := 1; s <= 8; s++ {
		sw := fmt.Sprintf("e%d", s)
		topo.Switch(sw).Link(sw, "core")
		for h := 1; h <= 15; h++ {
			name := fmt.Sprintf("h%d_%d", s, h)
			topo.Host(name).Link(name, sw)
		}
	}
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Up(cctx, topo, lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Down(); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	s := serve(t, ui.Options{Lab: l.Name()})
	t0 := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS(`#topo .group`))); err != nil {
		t.Fatal(err)
	}
	drawn := time.Since(t0)
	count := func(sel string) int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('`+sel+`').length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	nodes, groups, wires, rows := count(`#topo .node`), count(`#topo .group`), count(`#topo line.wire`), count(`#links tbody tr`)
	label, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#topo .group[data-group="e3"] text:last-of-type').textContent`))
	t.Logf("drawn in %v: %d nodes (%d groups), %d wires; the table %d links; e3's group: %q", drawn.Round(time.Millisecond), nodes, groups, wires, rows, label)
	if nodes != 17 || groups != 8 || wires != 16 || rows != 128 || label != "15 hosts on e3" {
		t.Errorf("drawn: %d nodes, %d groups, %d wires, %d table rows, label %q; want 17, 8, 16, 128, \"15 hosts on e3\"", nodes, groups, wires, rows, label)
	}
	// open one group
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#topo .group[data-group="e3"]`)), chromedp.WaitVisible(chromedp.CSS(`#topo .node[data-node="h3_15"]`))); err != nil {
		t.Fatal(err)
	}
	if n, g := count(`#topo .node`), count(`#topo .group`); n != 17-1+15 || g != 7 {
		t.Errorf("after opening e3's group: %d nodes, %d groups; want 31, 7", n, g)
	}
	screenshot(t, ctx, "large-lab")
	// zoom in around the middle, then fit again
	vb := func() []float64 {
		v, _ := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`document.getElementById('topo').getAttribute('viewBox').split(' ').map(Number)`))
		return v
	}
	before := vb()
	chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.getElementById('topo'), r = s.getBoundingClientRect();
	  s.dispatchEvent(new WheelEvent('wheel', { deltaY: -100, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true, cancelable: true })); return true })()`))
	zoomed := vb()
	chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.getElementById('topo'); s.dispatchEvent(new MouseEvent('dblclick', { bubbles: true })); return true })()`))
	fitted := vb()
	t.Logf("viewBox %v → zoomed %v → fitted %v", before, zoomed, fitted)
	if len(zoomed) != 4 || math.Abs(zoomed[2]-before[2]/1.25) > 0.01*before[2] || !slices.Equal(fitted, before) {
		t.Errorf("zoom: %v → %v → %v; want the width / 1.25, then back", before, zoomed, fitted)
	}
}
