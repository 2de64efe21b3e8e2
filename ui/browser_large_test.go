package ui_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/ui"
)

// upLarge brings a generated lab up (routing none: these labs are for the
// page's drawing) and takes it down when the test ends.
func upLarge(t *testing.T, topo *lab.Topology) *lab.Lab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t0 := time.Now()
	l, err := lab.Up(ctx, topo.Routing("none"), lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d nodes up in %v", len(l.Nodes()), time.Since(t0).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := l.Down(); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	return l
}

// drawing is what the page drew, measured in the browser: the drawing's
// units for distances, the screen for what the view shows.
type drawing struct {
	Nodes    []string   `json:"nodes"`    // nodes drawn as themselves
	Clusters [][]string `json:"clusters"` // each cluster node's members (its tooltip)
	Wires    []int      `json:"wires"`    // links per aggregated wire (its tooltip)
	Links    int        `json:"links"`    // wires of one link each
	Rows     int        `json:"rows"`     // the table's links
	MinDist  float64    `json:"minDist"`  // the least distance between two drawn nodes' centres
	Symbol   float64    `json:"symbol"`   // the largest drawn node symbol (width or height)
	Outside  []string   `json:"outside"`  // drawn nodes not wholly inside the view
	WireMed  float64    `json:"wireMed"`  // median wire length
	WireMax  float64    `json:"wireMax"`
	LayoutMs float64    `json:"layoutMs"` // the page's last layout
	Layouts  int        `json:"layouts"`  // layouts the page made
	Updates  int        `json:"updates"`  // counters events it painted
}

const measureJS = `(() => {
  const svg = document.getElementById('topo'), view = svg.getBoundingClientRect();
  const gs = [...svg.querySelectorAll('.node')];
  const c = gs.map(g => { const m = g.transform.baseVal.consolidate().matrix; return [m.e, m.f]; });
  let minDist = Infinity, symbol = 0;
  for (let i = 0; i < c.length; i++) for (let j = i + 1; j < c.length; j++) minDist = Math.min(minDist, Math.hypot(c[i][0] - c[j][0], c[i][1] - c[j][1]));
  const outside = [];
  for (const g of gs) {
    const b = g.firstChild.getBBox(), r = g.firstChild.getBoundingClientRect();
    symbol = Math.max(symbol, b.width, b.height);
    if (r.left < view.left || r.right > view.right || r.top < view.top || r.bottom > view.bottom) outside.push(g.dataset.node || g.dataset.group || g.dataset.cluster);
  }
  const lens = [...svg.querySelectorAll('line.wire')].map(l => Math.hypot(l.x2.baseVal.value - l.x1.baseVal.value, l.y2.baseVal.value - l.y1.baseVal.value)).sort((a, b) => a - b);
  return {
    nodes: gs.filter(g => g.dataset.node).map(g => g.dataset.node),
    clusters: [...svg.querySelectorAll('.cluster title')].map(t => t.textContent.replace(/ \(click.*$/, '').split(', ')),
    wires: [...svg.querySelectorAll('.agg title')].map(t => parseInt(t.textContent)),
    links: svg.querySelectorAll('.link').length,
    rows: document.querySelectorAll('#links tbody tr').length,
    minDist: c.length > 1 ? minDist : 0, symbol, outside,
    wireMed: lens.length ? lens[lens.length >> 1] : 0, wireMax: lens.length ? lens[lens.length - 1] : 0,
    layoutMs: +svg.dataset.layoutMs, layouts: +svg.dataset.layouts, updates: +document.getElementById('updates').textContent,
  };
})()`

func measure(t *testing.T, ctx context.Context) drawing {
	t.Helper()
	d, err := chromedp.Run(ctx, chromedp.Evaluate[drawing](measureJS))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkGeometry: no two drawn node symbols overlap and every one is inside
// the view.
func checkGeometry(t *testing.T, d drawing) {
	t.Helper()
	if d.MinDist < d.Symbol {
		t.Errorf("two drawn nodes %.1f apart, nearer than a symbol's size %.0f: they overlap", d.MinDist, d.Symbol)
	}
	if len(d.Outside) > 0 {
		t.Errorf("drawn nodes outside the fitted view: %v", d.Outside)
	}
}

// TestUIBrowserLargeMesh: a 14 × 14 grid of routers (196 nodes, 364
// links, none a leaf) is drawn node by node by the page's stress layout:
// every node drawn, no two symbols overlapping, all inside the fitted
// view, the longest wire at most 6 × the median (a grid's wires are all
// one hop), the page ready within 10 s; the counters' ticks (4 a second)
// paint without laying the drawing out again.
func TestUIBrowserLargeMesh(t *testing.T) {
	testutil.NeedRoot(t)
	const side = 14
	topo := lab.NewTopology("tuimesh")
	name := func(i, j int) string { return fmt.Sprintf("r%d_%d", i, j) }
	for i := range side {
		for j := range side {
			topo.Router(name(i, j))
			if j > 0 {
				topo.Link(name(i, j-1), name(i, j))
			}
			if i > 0 {
				topo.Link(name(i-1, j), name(i, j))
			}
		}
	}
	l := upLarge(t, topo)
	s := serve(t, ui.Options{Lab: l.Name()})
	ctx := browser(t)
	t0 := time.Now()
	last := name(side-1, side-1)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS(`#topo .node[data-node="`+last+`"]`))); err != nil {
		t.Fatal(err)
	}
	ready := time.Since(t0)
	d := measure(t, ctx)
	t.Logf("ready in %v: layout %.1f ms; %d nodes drawn, %d clusters, %d wires (median %.1f, max %.1f units), min centre distance %.1f (symbol %.0f), %d table rows",
		ready.Round(time.Millisecond), d.LayoutMs, len(d.Nodes), len(d.Clusters), d.Links, d.WireMed, d.WireMax, d.MinDist, d.Symbol, d.Rows)
	screenshotTopo(t, ctx, "large-mesh")
	want := l.Nodes()
	sort.Strings(want)
	sort.Strings(d.Nodes)
	if !slices.Equal(d.Nodes, want) || len(d.Clusters) != 0 || d.Links != 364 || d.Rows != 364 {
		t.Errorf("drawn: %d nodes, %d clusters, %d wires, %d table rows; want all %d nodes, no cluster, 364 wires and rows", len(d.Nodes), len(d.Clusters), d.Links, d.Rows, len(want))
	}
	checkGeometry(t, d)
	if d.WireMax > 6*d.WireMed {
		t.Errorf("the longest wire %.1f units, %.1f × the median %.1f (want ≤ 6)", d.WireMax, d.WireMax/d.WireMed, d.WireMed)
	}
	if ready > 10*time.Second {
		t.Errorf("the page drew the lab in %v, want < 10 s", ready)
	}
	// the counters' ticks repaint, they do not lay out again
	time.Sleep(time.Second)
	d2 := measure(t, ctx)
	t.Logf("in 1 s: %d updates, layouts %d → %d", d2.Updates-d.Updates, d.Layouts, d2.Layouts)
	if d2.Updates-d.Updates < 2 || d2.Layouts != d.Layouts {
		t.Errorf("in 1 s: %d updates and %d layouts (want ≥ 2 updates, no layout)", d2.Updates-d.Updates, d2.Layouts-d.Layouts)
	}
}

// TestUIBrowserLargeClusters: a ring of 20 trees of routers (each a root,
// 4 children, 16 grandchildren: 420 nodes, 420 links) is more than the
// page draws node by node (200): it draws clusters of nodes as one node
// each and the links between two of them as one wire. Every node is drawn
// or in a cluster, every link is drawn, inside a cluster or counted on one
// wire, the table keeps every link, no two symbols overlap, all are inside
// the view; a click on a cluster draws its nodes one by one.
func TestUIBrowserLargeClusters(t *testing.T) {
	testutil.NeedRoot(t)
	topo := lab.NewTopology("tuiclus")
	const pods = 20
	for p := range pods {
		root := fmt.Sprintf("t%d", p)
		topo.Router(root)
		for a := range 4 {
			mid := fmt.Sprintf("t%da%d", p, a)
			topo.Router(mid).Link(root, mid)
			for b := range 4 {
				leaf := fmt.Sprintf("t%da%db%d", p, a, b)
				topo.Router(leaf).Link(mid, leaf)
			}
		}
		if p > 0 {
			topo.Link(fmt.Sprintf("t%d", p-1), root)
		}
	}
	topo.Link(fmt.Sprintf("t%d", pods-1), "t0")
	l := upLarge(t, topo)
	links, err := l.Links()
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, ui.Options{Lab: l.Name()})
	ctx := browser(t)
	t0 := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS(`#topo .cluster`))); err != nil {
		t.Fatal(err)
	}
	ready := time.Since(t0)
	d := measure(t, ctx)
	drawn := len(d.Nodes) + len(d.Clusters)
	t.Logf("ready in %v: layout %.1f ms (clustering included); %d drawn: %d nodes, %d clusters; %d one-link wires, %d wires for %v links; min centre distance %.1f (symbol %.0f); %d table rows",
		ready.Round(time.Millisecond), d.LayoutMs, drawn, len(d.Nodes), len(d.Clusters), d.Links, len(d.Wires), sum(d.Wires), d.MinDist, d.Symbol, d.Rows)
	screenshotTopo(t, ctx, "large-clusters")
	accounted(t, d, l.Nodes(), links)
	if drawn > 200 || len(d.Clusters) == 0 || d.Rows != len(links) {
		t.Errorf("drawn: %d (%d clusters), %d table rows; want at most 200, clusters, %d rows", drawn, len(d.Clusters), d.Rows, len(links))
	}
	checkGeometry(t, d)
	if ready > 15*time.Second {
		t.Errorf("the page drew the lab in %v, want < 15 s", ready)
	}

	// open the largest cluster
	big := 0
	for i, c := range d.Clusters {
		if len(c) > len(d.Clusters[big]) {
			big = i
		}
	}
	members := d.Clusters[big]
	seed, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelectorAll('#topo .cluster')[%d].dataset.cluster`, big)))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#topo .cluster[data-cluster="`+seed+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#topo .node[data-node="`+members[len(members)-1]+`"]`))); err != nil {
		t.Fatal(err)
	}
	d2 := measure(t, ctx)
	t.Logf("%s's cluster (%d nodes) opened: layout %.1f ms; %d nodes, %d clusters drawn; min centre distance %.1f", seed, len(members), d2.LayoutMs, len(d2.Nodes), len(d2.Clusters), d2.MinDist)
	screenshotTopo(t, ctx, "large-clusters-opened")
	if len(d2.Clusters) != len(d.Clusters)-1 || len(d2.Nodes) != len(d.Nodes)+len(members) || d2.Rows != len(links) {
		t.Errorf("after opening a cluster of %d: %d nodes, %d clusters, %d rows; want %d, %d, %d", len(members), len(d2.Nodes), len(d2.Clusters), d2.Rows,
			len(d.Nodes)+len(members), len(d.Clusters)-1, len(links))
	}
	accounted(t, d2, l.Nodes(), links)
	checkGeometry(t, d2)
}

// screenshotTopo keeps the drawing alone as a PNG with the test's
// artifacts (the full page of a large lab is mostly its table).
func screenshotTopo(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	keepShot(t, ctx, name, chromedp.Screenshot(chromedp.CSS(`#topo`)))
}

func sum(v []int) int {
	n := 0
	for _, x := range v {
		n += x
	}
	return n
}

// accounted: every node is drawn or in exactly one cluster, and every link
// is a wire of its own, inside a cluster, or counted on one aggregated wire.
func accounted(t *testing.T, d drawing, nodes []string, links []emu.LinkInfo) {
	t.Helper()
	in := map[string]int{} // node -> its cluster (-1: drawn itself)
	for _, n := range d.Nodes {
		in[n] = -1
	}
	for i, c := range d.Clusters {
		for _, n := range c {
			if _, dup := in[n]; dup {
				t.Errorf("%s drawn twice (cluster %d)", n, i)
			}
			in[n] = i
		}
	}
	for _, n := range nodes {
		if _, ok := in[n]; !ok {
			t.Errorf("%s is neither drawn nor in a cluster", n)
		}
	}
	if len(in) != len(nodes) {
		t.Errorf("%d nodes drawn or in clusters, the lab has %d", len(in), len(nodes))
	}
	inside := 0
	for _, k := range links {
		a, b := strings.Split(k.A, ":")[0], strings.Split(k.B, ":")[0]
		if in[a] >= 0 && in[a] == in[b] {
			inside++
		}
	}
	if got := d.Links + inside + sum(d.Wires); got != len(links) {
		t.Errorf("links: %d wires of their own + %d inside clusters + %d on aggregated wires = %d, the lab has %d", d.Links, inside, sum(d.Wires), got, len(links))
	}
}
