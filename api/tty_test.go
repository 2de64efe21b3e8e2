package api

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
)

// ttyScreen is what a session's terminal printed, read from its "tty"
// notifications.
type ttyScreen struct {
	c      *client
	id     string
	out    strings.Builder
	ended  bool
	code   float64
	chunks int
}

// until reads notifications until what the terminal printed since the
// last match holds want (or, with want "", until it ended).
func (s *ttyScreen) until(want string, d time.Duration) {
	s.c.t.Helper()
	deadline := time.After(d)
	for {
		all := s.out.String()
		if want != "" {
			if i := strings.Index(all, want); i >= 0 {
				rest := all[i+len(want):]
				s.out.Reset()
				s.out.WriteString(rest)
				return
			}
		} else if s.ended {
			return
		}
		select {
		case ev := <-s.c.evs:
			if ev["method"] != "tty" || ev["tty"] != s.id {
				continue
			}
			if ev["ended"] == true {
				s.ended, s.code = true, ev["code"].(float64)
				continue
			}
			s.chunks++
			s.out.WriteString(ev["data"].(string))
		case <-deadline:
			s.c.t.Fatalf("terminal %s: no %q in %v; it printed:\n%s", s.id, want, d, all)
		}
	}
}

// A terminal over the API: bash on a pseudo-terminal in a node, its
// output as notifications as it is printed, keys typed, a new size, an
// exit status, bad requests refused; the session's end hangs it up.
func TestAPITerminal(t *testing.T) {
	testutil.NeedRoot(t)
	c := newClient(t)
	c.must("up", map[string]any{"document": "name: tapit\nnodes: {h1: {}, h2: {}, s1: {kind: switch}}\nlinks:\n  - endpoints: [h1, s1]\n  - endpoints: [h2, s1]\n"}, nil)
	defer c.call("down", nil)

	var open struct {
		TTY  string `json:"tty"`
		Pid  int    `json:"pid"`
		Rows int    `json:"rows"`
		Cols int    `json:"cols"`
		Term string `json:"term"`
	}
	c.must("tty.open", map[string]any{"node": "h1", "rows": 20, "cols": 70}, &open)
	if open.TTY == "" || open.Pid == 0 || open.Rows != 20 || open.Cols != 70 || open.Term != "xterm" {
		t.Fatalf("tty.open: %+v", open)
	}
	s := &ttyScreen{c: c, id: open.TTY}
	s.until("(tapit)]", 5*time.Second)
	c.must("tty.write", map[string]any{"tty": open.TTY, "data": "stty size; echo $TERM; ping -c 3 -i 0.5 h2\r"}, nil)
	s.until("20 70\r\nxterm", 5*time.Second)
	before := s.chunks
	s.until("icmp_seq=1", 5*time.Second)
	s.until("icmp_seq=3", 5*time.Second)
	s.until("3 received", 5*time.Second)
	if n := s.chunks - before; n < 3 {
		t.Errorf("ping's 1.5 s of output came in %d notification(s): not as it was printed", n)
	}
	c.must("tty.resize", map[string]any{"tty": open.TTY, "rows": 33, "cols": 101}, nil)
	c.must("tty.write", map[string]any{"tty": open.TTY, "data": "stty size; echo é€😀\r"}, nil)
	s.until("33 101\r\né€😀", 5*time.Second) // whole characters, however the reads cut them

	// bad requests change nothing
	for _, e := range []struct {
		method string
		params any
		code   int
		want   string
	}{
		{"tty.open", map[string]any{"node": "h9"}, CodeNotFound, `no node "h9"`},
		{"tty.open", map[string]any{}, CodeInvalidParams, "give node"},
		{"tty.open", map[string]any{"node": "h1", "rows": 1}, CodeInvalidParams, "2-500 rows"},
		{"tty.resize", map[string]any{"tty": open.TTY, "rows": 20, "cols": 5}, CodeInvalidParams, "10-1000 columns"},
		{"tty.write", map[string]any{"tty": "tty99", "data": "x"}, CodeNotFound, "no terminal"},
		{"tty.write", map[string]any{"tty": open.TTY, "keys": "x"}, CodeInvalidParams, "unknown field"},
	} {
		_, err := c.call(e.method, e.params)
		if err == nil || !strings.Contains(err.Message, e.want) {
			t.Errorf("%s %v: %+v, want %q", e.method, e.params, err, e.want)
		} else if err.Code != e.code {
			t.Errorf("%s %v: code %d (%s), want %d", e.method, e.params, err.Code, err.Message, e.code)
		}
	}

	// exit: the end comes as a notification with bash's status, and the
	// terminal is forgotten
	c.must("tty.write", map[string]any{"tty": open.TTY, "data": "exit 7\r"}, nil)
	s.until("", 5*time.Second)
	if s.code != 7 {
		t.Errorf("exit 7: ended with code %v", s.code)
	}
	if _, err := c.call("tty.write", map[string]any{"tty": open.TTY, "data": "x"}); err == nil || err.Code != CodeNotFound {
		t.Errorf("tty.write after the end: %+v", err)
	}

	// the session's end hangs its terminals up
	c2 := newClient(t)
	var o2 struct {
		TTY string `json:"tty"`
		Pid int    `json:"pid"`
	}
	c2.must("tty.open", map[string]any{"lab": "tapit", "node": "h2"}, &o2)
	c2.in.Close() // its cleanup waits for Serve to return
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := syscall.Kill(o2.Pid, 0); errors.Is(err, syscall.ESRCH) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("bash (pid %d) of a session that ended still runs: %v", o2.Pid, err)
		}
	}
}
