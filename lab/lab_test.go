package lab_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/units"
)

// capacity is the best TCP goodput through an R bit/s link that counts
// Ethernet frames: R × 1448/1514.
func capacity(r units.BitRate) float64 { return float64(r) * 1448 / 1514 }

// up builds t and takes it down when the test ends.
func up(t *testing.T, src lab.Source) *lab.Lab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := lab.Up(ctx, src, lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Down(); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	return l
}

// minRTT is the smallest of n pings from -> to.
func minRTT(t *testing.T, l *lab.Lab, from, to string, n int) time.Duration {
	t.Helper()
	var best time.Duration
	for range n {
		rtt, err := l.Ping(context.Background(), from, to)
		if err != nil {
			t.Fatal(err)
		}
		if best == 0 || rtt < best {
			best = rtt
		}
		time.Sleep(20 * time.Millisecond)
	}
	return best
}

// goodput runs one TCP flow h1 -> h2 and returns its steady goodput
// (made once more when the machine lacked CPU meanwhile).
func goodput(t *testing.T, l *lab.Lab, d time.Duration) float64 {
	t.Helper()
	// timed: a run that lacked CPU is made again, never judged
	return testutil.RetryStarved(t, "TCP h1 -> h2", false, func() float64 {
		res, err := l.Traffic(context.Background(), lab.Flow{Client: "h1", Server: "h2", Duration: d})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Summary) != 1 {
			t.Fatalf("%d flow summaries, want 1", len(res.Summary))
		}
		return res.Summary[0].SteadyGoodputBps
	})
}

// A lab built from the builder does what its links say: TCP goodput at
// R × 1448/1514, an RTT floor of 2 × the delay, changes at run time, a
// cable pulled and plugged back; commands run inside the nodes.
func TestLabPhysics(t *testing.T) {
	testutil.NeedRoot(t)
	const rate = 10 * units.Mbit
	const delay = 5 * time.Millisecond
	l := up(t, lab.NewTopology("tlab1").
		Host("h1").Host("h2").Switch("s1").
		Link("h1", "s1", lab.Rate(rate), lab.Delay(delay)).
		Link("h2", "s1"))
	ctx := context.Background()

	if got := l.Nodes(); !slices.Equal(got, []string{"h1", "h2", "s1"}) {
		t.Errorf("Nodes = %v", got)
	}
	rtt := minRTT(t, l, "h1", "h2", 10)
	t.Logf("RTT floor h1 -> h2: %v (2 × delay = %v)", rtt, 2*delay)
	if rtt < 2*delay || rtt > 2*delay+2*time.Millisecond {
		t.Errorf("RTT floor %v, want in [%v, %v]", rtt, 2*delay, 2*delay+2*time.Millisecond)
	}

	g := goodput(t, l, 6*time.Second)
	t.Logf("goodput at %v: %.3f Mbit/s = %.3f × capacity %.3f Mbit/s", rate, g/1e6, g/capacity(rate), capacity(rate)/1e6)
	if r := g / capacity(rate); r < 0.95 || r > 1.02 {
		t.Errorf("goodput %.3f Mbit/s is %.3f × capacity, want [0.95, 1.02]", g/1e6, r)
	}

	// faster, and longer one way, while the lab runs
	const rate2 = 20 * units.Mbit
	if err := l.SetLink("h1-s1", lab.Rate(rate2), lab.AtoB(lab.Delay(20*time.Millisecond))); err != nil {
		t.Fatal(err)
	}
	links, err := l.Links()
	if err != nil || len(links) != 2 {
		t.Fatalf("Links: %v, %v", links, err)
	}
	if d := links[0]; d.AtoB.Rate != rate2 || d.BtoA.Rate != rate2 || d.AtoB.Delay != 20*time.Millisecond || d.BtoA.Delay != delay {
		t.Errorf("link 0 after SetLink: a->b %v, b->a %v", d.AtoB, d.BtoA)
	}
	rtt2 := minRTT(t, l, "h1", "h2", 10)
	t.Logf("RTT floor after a->b delay 20ms: %v", rtt2)
	if want := 20*time.Millisecond + delay; rtt2 < want || rtt2 > want+2*time.Millisecond {
		t.Errorf("RTT floor %v, want in [%v, %v]", rtt2, want, want+2*time.Millisecond)
	}
	g2 := goodput(t, l, 6*time.Second)
	t.Logf("goodput at %v: %.3f Mbit/s = %.3f × capacity %.3f Mbit/s", rate2, g2/1e6, g2/capacity(rate2), capacity(rate2)/1e6)
	if r := g2 / capacity(rate2); r < 0.95 || r > 1.02 {
		t.Errorf("goodput %.3f Mbit/s is %.3f × capacity, want [0.95, 1.02]", g2/1e6, r)
	}

	// what only a new lab can take is refused, and nothing changes
	if err := l.SetLink("h1-s1", lab.Rate(units.Mbit), lab.MTU(9000)); err == nil || !strings.Contains(err.Error(), `MTU(9000)): cannot change while the lab runs`) {
		t.Errorf("SetLink with MTU: %v", err)
	}
	if links, err := l.Links(); err != nil || links[0].AtoB.Rate != rate2 {
		t.Errorf("after a refused SetLink: %v, %v", links, err)
	}
	if err := l.SetLink("h1-s9", lab.Rate(units.Mbit)); err == nil || !strings.Contains(err.Error(), `no link "h1-s9"`) {
		t.Errorf("SetLink of an unknown link: %v", err)
	}

	// pull the cable, plug it back
	if err := l.LinkDown("h1-s1"); err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	if _, err := l.Ping(pctx, "h1", "h2"); err == nil {
		t.Error("ping crossed a link that is down")
	}
	cancel()
	if err := l.LinkUp("h1-s1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := l.Ping(ctx, "h1", "h2"); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no ping after LinkUp: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// the links measure what they say
	res, err := l.Verify(ctx, lab.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Logf("verify link %d %s: rate %v (want %v), min delay %v (want %v)", r.Link, r.Dir, r.Rate, r.WantRate, r.MinDelay, r.WantDelay)
		if !r.OK() {
			t.Errorf("verify link %d %s: %v", r.Link, r.Dir, r.Problems)
		}
	}
}

// Commands run inside the nodes; failures come back as values.
func TestLabExec(t *testing.T) {
	testutil.NeedRoot(t)
	l := up(t, lab.NewTopology("tlab2").Host("h1", lab.Env("GREETING", "hi")).Host("h2").Link("h1", "h2"))
	ctx := context.Background()
	out, err := l.Output(ctx, "h1", "hostname")
	if err != nil || strings.TrimSpace(string(out)) != "h1" {
		t.Errorf("hostname in h1: %q, %v", out, err)
	}
	out, err = l.Exec(ctx, "h1", "sh", "-c", "echo $GREETING; echo oops >&2; exit 7")
	var ee *lab.ExitError
	if !errors.As(err, &ee) || ee.Code != 7 || !strings.Contains(string(out), "hi") || !strings.Contains(string(out), "oops") {
		t.Errorf("exit 7: out %q, err %v", out, err)
	}
	if _, err := l.Output(ctx, "h2", "no-such-command-xyz"); !errors.As(err, &ee) || ee.Code != 127 {
		t.Errorf("missing command: %v, want exit status 127", err)
	}
	if _, err := l.Exec(ctx, "h3", "true"); err == nil || !strings.Contains(err.Error(), `no node "h3" (nodes: h1, h2; did you mean "h1"?)`) {
		t.Errorf("unknown node: %v", err)
	}
	// names resolve through the lab's hosts file
	addr, err := l.Addr("h2")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := l.Output(ctx, "h1", "getent", "hosts", "h2"); err != nil || !strings.Contains(string(out), addr.String()) {
		t.Errorf("getent hosts h2 in h1: %q, %v", out, err)
	}
	// a context kills the command
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if _, err := l.Exec(cctx, "h1", "sleep", "10"); err == nil || time.Since(t0) > 5*time.Second {
		t.Errorf("sleep under a 200 ms context: %v after %v", err, time.Since(t0))
	}
}

// Open finds a running lab; after Down it is gone, and Down again is fine.
func TestLabOpenDown(t *testing.T) {
	testutil.NeedRoot(t)
	l, err := lab.Up(context.Background(), lab.YAML("tlab3.yaml", []byte("nodes: {h1: {}, h2: {}}\nlinks: [{endpoints: [h1, h2]}]\n")), lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Down()
	if l.Name() != "tlab3" {
		t.Errorf("Name = %q", l.Name())
	}
	o, err := lab.Open("tlab3")
	if err != nil {
		t.Fatal(err)
	}
	if rtt, err := o.Ping(context.Background(), "h2", "h1"); err != nil || rtt <= 0 {
		t.Errorf("ping through an opened lab: %v, %v", rtt, err)
	}
	if _, err := lab.Open("tlab33"); !errors.Is(err, emu.ErrNoLab) || !strings.Contains(err.Error(), `did you mean "tlab3"?`) {
		t.Errorf("Open of a lab that does not run: %v", err)
	}
	if err := o.Down(); err != nil {
		t.Fatal(err)
	}
	if _, err := lab.Open("tlab3"); !errors.Is(err, emu.ErrNoLab) {
		t.Errorf("Open after Down: %v", err)
	}
	if err := l.Down(); err != nil {
		t.Errorf("second Down: %v", err)
	}
}

// A failed Up leaves nothing, and says why.
func TestLabUpFails(t *testing.T) {
	_, err := lab.Up(context.Background(), lab.NewTopology("tlab4").Host("h1").Link("h1", "h9"), lab.Options{})
	if err == nil || !strings.Contains(err.Error(), `Link("h1", "h9"): links[0].endpoints[1]: unknown node "h9"`) {
		t.Errorf("Up of a bad topology: %v", err)
	}
	if _, err := lab.Up(context.Background(), nil, lab.Options{}); err == nil {
		t.Error("Up of nothing succeeded")
	}
	if _, err := lab.Up(context.Background(), lab.File("no/such/file.yaml"), lab.Options{}); err == nil {
		t.Error("Up of a missing file succeeded")
	}
}
