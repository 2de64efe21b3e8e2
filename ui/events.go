package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/emuctl/emuctl/api"
)

// events streams the lab's events to one page as server-sent events.
// Every page shares one subscription of the API's (events.subscribe,
// counters every Interval, through an in-process client: the hub below),
// so three pages cost the lab what one does; each notification's params
// are one "data:" line. At most MaxClients pages watch at once (503
// beyond); a page that reads too slowly for its buffer is dropped rather
// than slowing the others, and its EventSource reconnects.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		http.Error(w, fmt.Sprintf("503: %d pages already watch this lab", cap(s.slots)), http.StatusServiceUnavailable)
		return
	}
	ctx := r.Context()
	queue, leave, aerr := s.hub.join(s.opt.Lab, s.opt.Interval)
	if aerr != nil {
		http.Error(w, aerr.Message, http.StatusNotFound)
		return
	}
	defer leave()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n\n")
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-keep.C:
			rc.SetWriteDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprint(w, ": keep-alive\n\n")
		case ev, ok := <-queue:
			if !ok {
				s.opt.Log.Info("a page read too slowly, or the lab went down: its stream ends (it reconnects)")
				return
			}
			// a page that takes more than 5 s to take one event is gone
			rc.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := fmt.Fprintf(w, "data: %s\n\n", ev); err != nil {
				return
			}
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// hub is the one subscription every page shares: made when the first
// page comes, ended when the last leaves or the lab goes down (the next
// page subscribes again: a suite's next run).
type hub struct {
	sub    sync.Mutex // held while the subscription is made or ended
	client *api.Client
	cancel context.CancelFunc

	mu    sync.Mutex // the pages; the subscription's goroutine takes only this
	pages map[chan json.RawMessage]bool
	down  bool // the lab went down: the subscription has ended
}

// join adds a page: its queue of events, and leave to call when it goes.
func (h *hub) join(lab string, every time.Duration) (chan json.RawMessage, func(), *api.Error) {
	h.sub.Lock()
	defer h.sub.Unlock()
	h.mu.Lock()
	down := h.down
	h.down = false
	h.mu.Unlock()
	if h.client != nil && down { // its subscription ended with the lab
		h.client.Close()
		h.cancel()
		h.client, h.cancel = nil, nil
	}
	if h.client == nil {
		ctx, cancel := context.WithCancel(context.Background())
		c := api.NewClient(ctx, api.Options{Lab: lab}, func(method string, params json.RawMessage) {
			if method == "event" {
				h.broadcast(params)
			}
		})
		p, _ := json.Marshal(map[string]any{"lab": lab, "interval_ms": every.Milliseconds()})
		if _, aerr := c.Call(ctx, "events.subscribe", p); aerr != nil {
			c.Close()
			cancel()
			return nil, nil, aerr
		}
		h.client, h.cancel = c, cancel
	}
	q := make(chan json.RawMessage, 64)
	h.mu.Lock()
	if h.pages == nil {
		h.pages = map[chan json.RawMessage]bool{}
	}
	h.pages[q] = true
	h.mu.Unlock()
	return q, func() { h.leave(q) }, nil
}

// leave removes a page; the last one ends the subscription.
func (h *hub) leave(q chan json.RawMessage) {
	h.mu.Lock()
	if h.pages[q] {
		delete(h.pages, q)
		close(q)
	}
	last := len(h.pages) == 0
	h.mu.Unlock()
	if last {
		h.end()
	}
}

// end closes the subscription when no page watches (one may have joined
// since the last one left); the next page makes a new one.
func (h *hub) end() {
	h.sub.Lock()
	defer h.sub.Unlock()
	h.mu.Lock()
	idle := len(h.pages) == 0
	h.mu.Unlock()
	if h.client != nil && idle {
		h.client.Close()
		h.cancel()
		h.client, h.cancel = nil, nil
	}
}

// broadcast hands an event to every page; a page whose queue is full is
// dropped (its stream ends, it reconnects). After lab-down every page's
// stream ends, and the next page to come subscribes again.
func (h *hub) broadcast(params json.RawMessage) {
	var ev struct {
		Type string `json:"type"`
	}
	json.Unmarshal(params, &ev)
	h.mu.Lock()
	for q := range h.pages {
		select {
		case q <- params:
		default:
			delete(h.pages, q)
			close(q)
		}
	}
	if ev.Type == "lab-down" {
		for q := range h.pages {
			delete(h.pages, q)
			close(q)
		}
		h.down = true
	}
	h.mu.Unlock()
}
