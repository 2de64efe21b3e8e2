package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/ui"
	"golang.org/x/net/websocket"
)

// get fetches url, with the token's cookie (name=value) unless "".
func get(t *testing.T, url string, cookie string) (int, string, *http.Response) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

// The page's server of a real lab: the token guards every request; the
// API methods it serves answer with the lab's real nodes and links; the
// event stream's counters measure what a real TCP flow carries.
func TestUIServer(t *testing.T) {
	testutil.NeedRoot(t)
	l := upLab(t, "tui1")
	s := serve(t, ui.Options{Lab: l.Name()})
	c := newClient(t, s)
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %s: want loopback", s.URL())
	}

	// no token, a wrong one, a wrong cookie: 403 for every path
	for _, u := range []string{"/", "/app.js", "/api/info", "/api/events", "/?token=x" + c.token[1:]} {
		if code, _, _ := get(t, c.base+u, ""); code != http.StatusForbidden {
			t.Errorf("GET %s without the token: %d, want 403", u, code)
		}
	}
	if code, _, _ := get(t, c.base+"/api/info", c.cookie+"=nope"); code != http.StatusForbidden {
		t.Errorf("GET /api/info with a wrong cookie: %d, want 403", code)
	}
	// the token under another port's cookie name (another server's) is not this one's
	if code, _, _ := get(t, c.base+"/api/info", "emuctl_ui_token_1="+c.token); code != http.StatusForbidden {
		t.Errorf("GET /api/info with another port's cookie: %d, want 403", code)
	}
	resp, err := http.Post(c.base+"/api/call", "application/json", strings.NewReader(`{"method":"nodes"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /api/call without the token: %d, want 403", resp.StatusCode)
	}

	// the token in the query: the page, and a cookie for the rest
	code, body, resp := get(t, s.URL(), "")
	if code != 200 || !strings.Contains(body, "<title>emuctl ui</title>") {
		t.Fatalf("GET %s: %d %.80q", s.URL(), code, body)
	}
	if cs := resp.Cookies(); len(cs) != 1 || cs[0].Name != c.cookie || cs[0].Value != c.token || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("cookies after the token: %v", cs)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	if code, body, _ := get(t, c.base+"/api/info", c.cookie+"="+c.token); code != 200 || !strings.Contains(body, `"lab":"tui1"`) || !strings.Contains(body, `"allow_changes":false`) {
		t.Errorf("GET /api/info: %d %s", code, body)
	}

	// the lab's nodes and links, from the API
	code, out := c.call("nodes", nil)
	var nodes []struct{ Name string }
	json.Unmarshal(out["result"], &nodes)
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	if code != 200 || !slices.Equal(names, []string{"h1", "h2", "s1"}) {
		t.Errorf("nodes: %d %v (%s)", code, names, out["error"])
	}
	code, out = c.call("links", nil)
	var links []struct {
		A, B string
		AtoB struct{ Rate float64 } `json:"a_to_b"`
	}
	json.Unmarshal(out["result"], &links)
	if code != 200 || len(links) != 2 || links[0].A != "h1:h1-eth0" || links[0].AtoB.Rate != 10e6 {
		t.Errorf("links: %d %+v (%s)", code, links, out["error"])
	}

	// read-only: no change, no method beyond the page's
	if code, out := c.call("link.down", map[string]any{"link": "0"}); code != http.StatusForbidden || !strings.Contains(string(out["error"]), "read-only") {
		t.Errorf("link.down on a read-only page: %d %s", code, out["error"])
	}
	if code, out := c.call("wifi.move", map[string]any{"node": "h1", "pos": []float64{1, 2, 0}}); code != http.StatusForbidden || !strings.Contains(string(out["error"]), "read-only") {
		t.Errorf("wifi.move on a read-only page: %d %s", code, out["error"])
	}
	if code, _, _ := get(t, c.base+"/api/tty?node=h1", c.cookie+"="+c.token); code != http.StatusForbidden {
		t.Errorf("a terminal from a read-only page: %d", code)
	}
	if code, out := c.call("exec", map[string]any{"node": "h1", "argv": []string{"true"}}); code != http.StatusForbidden {
		t.Errorf("exec from the page: %d %s", code, out["error"])
	}
	// another site's page cannot post, even with the cookie a browser would add
	req, _ := http.NewRequest("POST", c.base+"/api/call", strings.NewReader(`{"method":"nodes"}`))
	req.AddCookie(&http.Cookie{Name: c.cookie, Value: c.token})
	req.Header.Set("Origin", "http://evil.example")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin POST: %v %v", resp.Status, err)
	} else {
		resp.Body.Close()
	}

	// live counters under a real flow: the link's a->b rate is what the
	// flow's goodput puts on the wire (frames of 1514 bytes carry 1448)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := c.stream(ctx)
	start := time.Now()
	res, err := l.Traffic(context.Background(), lab.Flow{Client: "h1", Server: "h2", Duration: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	g := res.Summary[0].SteadyGoodputBps
	var rates []float64
	n := 0
	for _, e := range ev.since(start) {
		if e.Type != "counters" || e.at.After(end) {
			continue
		}
		n++
		if e.at.After(start.Add(2*time.Second)) && e.at.Before(end.Add(-500*time.Millisecond)) && len(e.Links) == 2 {
			rates = append(rates, e.Links[0].AtoBbps)
		}
	}
	perSec := float64(n) / end.Sub(start).Seconds()
	sort.Float64s(rates)
	if len(rates) < 5 {
		t.Fatalf("%d counter samples during the flow's steady part (%.1f updates/s)", len(rates), perSec)
	}
	med := rates[len(rates)/2]
	wire := g * 1514 / 1448
	t.Logf("updates: %.1f/s; link h1-s1 a->b on the page: median %.3f Mbit/s of %d samples (%.3f..%.3f); flow goodput %.3f Mbit/s = %.3f Mbit/s of frames; ratio %.3f",
		perSec, med/1e6, len(rates), rates[0]/1e6, rates[len(rates)-1]/1e6, g/1e6, wire/1e6, med/wire)
	if perSec < 2 {
		t.Errorf("%.1f updates/s, want ≥ 2", perSec)
	}
	if r := med / wire; r < 0.97 || r > 1.03 {
		t.Errorf("page rate %.3f Mbit/s is %.3f × the flow's %.3f Mbit/s on the wire, want within 3 %%", med/1e6, r, wire/1e6)
	}
	if r := med / 10e6; r < 0.97 || r > 1.03 {
		t.Errorf("page rate %.3f Mbit/s on a 10 Mbit/s link: %.3f × the rate", med/1e6, r)
	}

	// a change by the CLI's code shows in the stream within 1 s
	t0 := time.Now()
	if _, err := l.SetLinkKeys("h1-s1", "", map[string]string{"rate": "20mbit"}); err != nil {
		t.Fatal(err)
	}
	if e, ok := ev.waitFor("link-changed", t0, time.Second); !ok || e.Link == nil || *e.Link != 0 {
		t.Errorf("no link-changed event for link 0 within 1 s of link set: %+v", e)
	} else {
		t.Logf("link-changed on the stream %v after link set", e.at.Sub(t0).Round(time.Millisecond))
	}
}

// With --allow-changes the page sets, pulls and plugs a link through the
// API (package lab's code); the result or the error comes back.
func TestUIChanges(t *testing.T) {
	testutil.NeedRoot(t)
	l := upLab(t, "tui2")
	s := serve(t, ui.Options{Lab: l.Name(), AllowChanges: true, MaxClients: 1})
	c := newClient(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := c.stream(ctx)
	// one page watches: a second is refused, not queued
	if code, body, _ := get(t, c.base+"/api/events", c.cookie+"="+c.token); code != http.StatusServiceUnavailable {
		t.Errorf("a second stream with MaxClients 1: %d %s", code, body)
	}

	if code, out := c.call("link.set", map[string]any{"link": "0", "set": map[string]string{"delay": "7ms"}}); code != 200 || out["error"] != nil {
		t.Fatalf("link.set: %d %s", code, out["error"])
	}
	links, err := l.Links()
	if err != nil || links[0].AtoB.Delay != 7*time.Millisecond || links[0].BtoA.Delay != 7*time.Millisecond {
		t.Errorf("after link.set from the page: %+v %v", links, err)
	}
	if code, out := c.call("link.set", map[string]any{"link": "0", "set": map[string]string{"rate": "fast"}}); code != 200 || !strings.Contains(string(out["error"]), `rate \"fast\"`) {
		t.Errorf("link.set with a bad rate: %d %s", code, out["error"])
	}
	// the page acts on its own lab only, whatever it sends
	if code, out := c.call("link.set", map[string]any{"lab": "other", "link": "0", "set": map[string]string{"delay": "3ms"}}); code != 200 || out["error"] != nil {
		t.Errorf("link.set naming another lab: %d %s", code, out["error"])
	}

	t0 := time.Now()
	if code, out := c.call("link.down", map[string]any{"link": "h1-s1"}); code != 200 || out["error"] != nil {
		t.Fatalf("link.down: %d %s", code, out["error"])
	}
	pctx, pc := context.WithTimeout(context.Background(), 300*time.Millisecond)
	if _, err := l.Ping(pctx, "h1", "h2"); err == nil {
		t.Error("a ping crossed the link the page pulled down")
	}
	pc()
	if e, ok := ev.waitFor("link-state", t0, 2*time.Second); !ok {
		t.Error("no link-state event after link.down")
	} else {
		t.Logf("link-state %v after link.down", e.at.Sub(t0).Round(time.Millisecond))
	}
	if code, out := c.call("link.up", map[string]any{"link": "h1-s1"}); code != 200 || out["error"] != nil {
		t.Fatalf("link.up: %d %s", code, out["error"])
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := l.Ping(context.Background(), "h1", "h2"); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no ping after link.up from the page: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// a terminal: bash on a pseudo-terminal in the node, over a WebSocket
	wsURL := "ws" + strings.TrimPrefix(c.base, "http") + "/api/tty?node=h1&rows=30&cols=90"
	cfg, _ := websocket.NewConfig(wsURL, c.base)
	cfg.Header.Set("Cookie", c.cookie+"="+c.token)
	ws, err := websocket.DialConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	type msg struct {
		Type, Text, Data string
		Rows, Cols       int
		Code             *int
	}
	var printed strings.Builder
	// until wants what the terminal printed (since the last match) to hold
	until := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(printed.String(), want) {
			var m msg
			ws.SetReadDeadline(deadline)
			if err := websocket.JSON.Receive(ws, &m); err != nil {
				t.Fatalf("waiting for %q: %v; the terminal printed:\n%s", want, err, printed.String())
			}
			if m.Type != "output" {
				t.Fatalf("waiting for %q: %+v", want, m)
			}
			printed.WriteString(m.Data)
		}
		rest := printed.String()
		rest = rest[strings.Index(rest, want)+len(want):]
		printed.Reset()
		printed.WriteString(rest)
	}
	keys := func(k string) { websocket.JSON.Send(ws, msg{Type: "input", Data: k}) }
	var first msg
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := websocket.JSON.Receive(ws, &first); err != nil || first.Type != "open" || first.Rows != 30 || first.Cols != 90 || !strings.Contains(first.Text, "terminal in h1") {
		t.Errorf("terminal's first message: %+v, %v", first, err)
	}
	until("(tui2)]") // the prompt names node and lab
	keys("cd /tmp; hostname; stty size\r")
	until("h1\r\n30 90")
	websocket.JSON.Send(ws, msg{Type: "resize", Rows: 12, Cols: 40})
	keys("pwd; stty size\r")
	until("/tmp\r\n12 40") // the shell kept its directory; the new size
	keys("sleep 30\r")
	time.Sleep(300 * time.Millisecond)
	keys("\x03echo rc=$?\r") // Ctrl-C through the line discipline
	until("rc=130")
	keys("exit 4\r")
	for {
		var m msg
		ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := websocket.JSON.Receive(ws, &m); err != nil {
			t.Fatalf("no end after exit 4: %v", err)
		}
		if m.Type == "ended" {
			if m.Code == nil || *m.Code != 4 {
				t.Errorf("ended: %+v, want code 4", m)
			}
			break
		}
	}
	ws.Close()
	cfg.Origin, _ = url.Parse("http://evil.example")
	if ws, err := websocket.DialConfig(cfg); err == nil {
		ws.Close()
		t.Error("a WebSocket from another origin was accepted")
	}

	// the lab going down ends the stream with lab-down
	t1 := time.Now()
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	if _, ok := ev.waitFor("lab-down", t1, 2*time.Second); !ok {
		t.Error("no lab-down event after down")
	}
}
