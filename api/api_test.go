package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
)

// client drives Serve through a pipe as a program in another language
// would: one JSON-RPC message per line.
type client struct {
	t    *testing.T
	in   *io.PipeWriter
	mu   sync.Mutex
	next int
	wait map[int]chan reply
	evs  chan map[string]any
	done chan error
}

type reply struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

func newClient(t *testing.T) *client {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, wait: map[int]chan reply{}, evs: make(chan map[string]any, 1000), done: make(chan error, 1)}
	go func() { c.done <- Serve(context.Background(), inR, outW, Options{}); outW.Close() }()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("server wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			if _, ok := m["id"]; !ok {
				var ev map[string]any
				json.Unmarshal(m["params"], &ev)
				ev["method"] = strings.Trim(string(m["method"]), `"`)
				select {
				case c.evs <- ev:
				default:
				}
				continue
			}
			var r reply
			json.Unmarshal(sc.Bytes(), &r)
			c.mu.Lock()
			ch := c.wait[r.ID]
			c.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return 10 s after its input ended")
		}
	})
	return c
}

// call sends a request and waits for its answer.
func (c *client) call(method string, params any) (json.RawMessage, *Error) {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan reply, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	select {
	case r := <-ch:
		return r.Result, r.Error
	case <-time.After(2 * time.Minute):
		c.t.Fatalf("%s: no answer", method)
	}
	return nil, nil
}

func (c *client) must(method string, params any, out any) {
	c.t.Helper()
	res, err := c.call(method, params)
	if err != nil {
		c.t.Fatalf("%s: %d %s %+v", method, err.Code, err.Message, err.Data)
	}
	if out != nil {
		if e := json.Unmarshal(res, out); e != nil {
			c.t.Fatalf("%s: result %s: %v", method, res, e)
		}
	}
}

// waitEvent waits for an event of the given type.
func (c *client) waitEvent(typ string, d time.Duration) map[string]any {
	c.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev := <-c.evs:
			if ev["type"] == typ {
				return ev
			}
		case <-deadline:
			c.t.Fatalf("no %s event in %v", typ, d)
		}
	}
}

// The API end to end, as the Python package drives it: up from a
// document, a host and a shaped link added, a shell and exec in the new
// host, ping and traffic through the new link against physics, link set,
// events of the changes and counters that follow the traffic, errors with
// codes and positions, down.
func TestAPIEndToEnd(t *testing.T) {
	testutil.NeedRoot(t)
	c := newClient(t)
	var up struct {
		Lab   string `json:"lab"`
		Nodes []any  `json:"nodes"`
	}
	c.must("up", map[string]any{"document": "name: tapi\naddressing: {p2p_prefix: 24}\nnodes: {h1: {}, h2: {}, s1: {kind: switch}}\nlinks:\n  - endpoints: [h1, s1]\n  - endpoints: [h2, s1]\n  - endpoints: [h1, h2]\n"}, &up)
	defer c.call("down", nil)
	if up.Lab != "tapi" || len(up.Nodes) != 3 {
		t.Fatalf("up: %+v", up)
	}
	var sub struct {
		Subscription string `json:"subscription"`
	}
	c.must("events.subscribe", map[string]any{"interval_ms": 200}, &sub)
	c.must("node.add", map[string]any{"name": "h3"}, nil)
	if ev := c.waitEvent("node-added", 3*time.Second); ev["node"] != "h3" {
		t.Errorf("node-added event: %v", ev)
	}
	var link struct {
		Index   int    `json:"index"`
		A       string `json:"a"`
		Backend string `json:"backend"`
	}
	c.must("link.add", map[string]any{"a": "h3", "b": "s1", "params": "rate=10mbit,delay=5ms"}, &link)
	if link.Index != 3 || link.A != "h3:h3-eth0" {
		t.Errorf("link.add: %+v", link)
	}
	c.waitEvent("link-added", 3*time.Second)
	// a shell and exec in the new node
	var sh struct {
		Shell string `json:"shell"`
	}
	c.must("shell.open", map[string]any{"node": "h3"}, &sh)
	var out struct {
		Output string `json:"output"`
		Code   int    `json:"code"`
	}
	c.must("shell.cmd", map[string]any{"shell": sh.Shell, "line": "cd /tmp; hostname"}, &out)
	c.must("shell.cmd", map[string]any{"shell": sh.Shell, "line": "pwd; false"}, &out)
	if out.Output != "/tmp\n" || out.Code != 1 {
		t.Errorf("shell.cmd: %+v", out)
	}
	var ex struct {
		Code   int    `json:"code"`
		Stdout string `json:"stdout"`
	}
	c.must("exec", map[string]any{"node": "h3", "argv": []string{"cat", "/etc/hostname"}}, &ex)
	c.must("exec", map[string]any{"node": "h3", "argv": []string{"sh", "-c", "hostname; exit 3"}}, &ex)
	if ex.Code != 3 || ex.Stdout != "h3\n" {
		t.Errorf("exec: %+v", ex)
	}
	// ping: the RTT floor of the new link
	var ping struct {
		RTT  []float64 `json:"rtt_ms"`
		Lost int       `json:"lost"`
	}
	c.must("ping", map[string]any{"from": "h1", "to": "h3", "count": 5}, &ping)
	minRTT := 1e9
	for _, r := range ping.RTT {
		minRTT = min(minRTT, r)
	}
	if len(ping.RTT) < 4 || minRTT < 10 || minRTT > 12 {
		t.Errorf("ping h1 -> h3: %+v (want >= 10 ms: 2 x 5 ms)", ping)
	}
	// traffic through the added link, counters following it
	var res struct {
		Summary []struct {
			Steady float64 `json:"steady_goodput_bps"`
		} `json:"summary"`
		Captures []struct {
			File string `json:"file"`
		} `json:"captures"`
	}
	c.must("traffic", map[string]any{"flows": []any{map[string]any{"from": "h3", "to": "h2", "duration": "4s"}}, "capture": []string{"h2:h2-eth0"}}, &res)
	if len(res.Summary) != 1 {
		t.Fatalf("traffic summary: %+v", res)
	}
	// the capture is named by an absolute path the caller can open, and
	// holds the flow's packets (pcapng, more than 100 kB of it)
	if len(res.Captures) != 1 || !filepath.IsAbs(res.Captures[0].File) {
		t.Errorf("traffic captures %+v: want one, by absolute path", res.Captures)
	} else {
		if fi, err := os.Stat(res.Captures[0].File); err != nil || fi.Size() < 100e3 {
			t.Errorf("capture %s: %v, %v (want the flow's frames, > 100 kB)", res.Captures[0].File, fi, err)
		}
		os.RemoveAll(filepath.Dir(res.Captures[0].File))
	}
	capacity := 10e6 * 1448 / 1514
	if g := res.Summary[0].Steady / capacity; g < 0.95 || g > 1.02 {
		t.Errorf("steady goodput over the added link %.3f x capacity", g)
	} else {
		t.Logf("steady goodput over the added link %.3f x capacity", g)
	}
	// link.set shows as a change event
	var ch struct {
		Backend string `json:"backend"`
	}
	c.must("link.set", map[string]any{"link": "h3-s1", "set": map[string]string{"rate": "5mbit"}}, &ch)
	if ev := c.waitEvent("link-changed", 3*time.Second); fmt.Sprint(ev["link"]) != "3" {
		t.Errorf("link-changed: %v", ev)
	}
	// a traced link by link add's keys: on the engine, its event names
	// the trace file without its opportunities; removed again
	trace := filepath.Join(t.TempDir(), "const.trace")
	var tb strings.Builder
	for ms := 1; ms <= 1000; ms++ {
		fmt.Fprintf(&tb, "%d\n", ms)
	}
	os.WriteFile(trace, []byte(tb.String()), 0o644)
	c.must("node.add", map[string]any{"name": "h4"}, nil)
	c.must("link.add", map[string]any{"a": "h4", "b": "s1", "keys": map[string]string{"trace": trace, "trace_offset": "100ms", "queue": "100", "delay": "2ms"}}, &link)
	if link.Index != 4 || link.Backend != "userspace" {
		t.Errorf("traced link.add: %+v", link)
	}
	ev := c.waitEvent("link-added", 3*time.Second)
	if p := fmt.Sprint(ev["params"]); !strings.Contains(p, trace) || strings.Contains(p, "ms:[") {
		t.Errorf("link-added event of the traced link: %v", ev)
	}
	c.must("ping", map[string]any{"from": "h1", "to": "h4", "count": 3}, &ping)
	if len(ping.RTT) == 0 || slices.Min(ping.RTT) < 4 {
		t.Errorf("ping h1 -> h4 over the traced link: %+v (want >= 4 ms: 2 x 2 ms)", ping)
	}
	c.must("link.del", map[string]any{"link": "h4-s1"}, nil)
	c.waitEvent("link-removed", 3*time.Second)
	c.must("node.del", map[string]any{"name": "h4"}, nil)
	// errors: codes, kinds, positions
	for _, e := range []struct {
		method string
		params any
		code   int
		want   string
	}{
		{"nope", nil, CodeNoMethod, "no method"},
		{"node.add", map[string]any{"name": "h3"}, CodeConflict, "already has"},
		{"node.add", map[string]any{"nam": "x"}, CodeInvalidParams, "unknown field"},
		{"link.add", map[string]any{"a": "h3", "b": "s9"}, CodeBadInput, `unknown node "s9"`},
		{"link.add", map[string]any{"a": "h3", "b": "s1", "keys": map[string]string{"trace_loop": "false"}}, CodeBadInput, "trace_loop without a trace"},
		{"link.add", map[string]any{"a": "h3", "b": "s1", "keys": map[string]string{"trace": "/nonexistent/x.trace"}}, CodeBadInput, `trace file "/nonexistent/x.trace" not found`},
		{"link.set", map[string]any{"link": "h3-s1", "set": map[string]string{"rate": "fast"}}, CodeFailed, "rate"},
		{"up", map[string]any{"document": "name: tapi2\nnodes: {h1: {kind: hots}}\n"}, CodeBadInput, "hots"},
		{"shell.cmd", map[string]any{"shell": "sh99", "line": "true"}, CodeNotFound, "no shell"},
	} {
		_, err := c.call(e.method, e.params)
		if err == nil || err.Code != e.code && !(e.code == CodeFailed && err.Code == CodeBadInput) || !strings.Contains(err.Message, e.want) {
			t.Errorf("%s %v: %+v, want code %d with %q", e.method, e.params, err, e.code, e.want)
		}
		if e.method == "up" && err != nil && (len(err.Data.Problems) != 1 || err.Data.Problems[0].Line != 2) {
			t.Errorf("up's problem has no position: %+v", err.Data)
		}
	}
	c.must("node.del", map[string]any{"name": "h3"}, nil)
	c.waitEvent("node-removed", 3*time.Second)
	c.must("down", nil, nil)
	c.waitEvent("lab-down", 3*time.Second)
}
