package ui_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/ui"
	"github.com/emuctl/emuctl/units"
)

// upLab builds h1 - s1 - h2 with h1-s1 at 10 Mbit/s and takes it down
// when the test ends.
func upLab(t *testing.T, name string) *lab.Lab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := lab.Up(ctx, lab.NewTopology(name).
		Host("h1").Host("h2").Switch("s1").
		Link("h1", "s1", lab.Rate(10*units.Mbit), lab.Delay(2*time.Millisecond)).
		Link("h2", "s1"), lab.Options{})
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

// serve starts a page server for the lab; it stops when the test ends.
func serve(t *testing.T, opt ui.Options) *ui.Server {
	t.Helper()
	s, err := ui.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s
}

// client is an HTTP client of one page server.
type client struct {
	t      *testing.T
	base   string // http://addr
	token  string
	cookie string // the token's cookie's name
}

func newClient(t *testing.T, s *ui.Server) *client {
	u := s.URL()
	i := strings.Index(u, "/?token=")
	return &client{t: t, base: u[:i], token: u[i+len("/?token="):], cookie: s.CookieName()}
}

// call posts one API method with the token's cookie; it returns the HTTP
// status and the decoded answer.
func (c *client) call(method string, params any) (int, map[string]json.RawMessage) {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"method": method, "params": params})
	req, _ := http.NewRequest("POST", c.base+"/api/call", bytes.NewReader(body))
	req.AddCookie(&http.Cookie{Name: c.cookie, Value: c.token})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	return resp.StatusCode, out
}

// event is what the page's stream sends (the API's event params).
type event struct {
	Type  string `json:"type"`
	Link  *int   `json:"link"`
	Links []struct {
		Index   int     `json:"index"`
		StateA  string  `json:"state_a"`
		AtoBbps float64 `json:"a_to_b_bps"`
		BtoAbps float64 `json:"b_to_a_bps"`
	} `json:"links"`
	at time.Time
}

// stream reads the page's event stream until the test ends.
type stream struct {
	mu     sync.Mutex
	events []event
}

func (c *client) stream(ctx context.Context) *stream {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.base+"/api/events?token="+c.token, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		c.t.Fatalf("events: %s, %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	st := &stream{}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<16), 1<<22)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev event
			if json.Unmarshal([]byte(data), &ev) == nil {
				ev.at = time.Now()
				st.mu.Lock()
				st.events = append(st.events, ev)
				st.mu.Unlock()
			}
		}
	}()
	return st
}

// since are the events received after t.
func (s *stream) since(t time.Time) []event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []event
	for _, e := range s.events {
		if e.at.After(t) {
			out = append(out, e)
		}
	}
	return out
}

// waitFor waits up to d for an event of type typ after t.
func (s *stream) waitFor(typ string, t time.Time, d time.Duration) (event, bool) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, e := range s.since(t) {
			if e.Type == typ {
				return e, true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return event{}, false
}
