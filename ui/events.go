package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/emuctl/emuctl/api"
)

// events streams the lab's events to one page as server-sent events: the
// API's own subscription (events.subscribe, counters every Interval)
// through an in-process client, each notification's params one "data:"
// line. At most MaxClients pages watch at once (503 beyond); a page that
// reads too slowly for its buffer is dropped rather than slowing the
// subscription, and its EventSource reconnects.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		http.Error(w, fmt.Sprintf("503: %d pages already watch this lab", cap(s.slots)), http.StatusServiceUnavailable)
		return
	}
	ctx := r.Context()
	queue := make(chan json.RawMessage, 64)
	slow := make(chan struct{})
	dropped := false
	c := api.NewClient(ctx, api.Options{Lab: s.opt.Lab}, func(method string, params json.RawMessage) {
		if method != "event" || dropped {
			return
		}
		select {
		case queue <- params:
		default:
			dropped = true // runs on the subscription's goroutine only
			close(slow)
		}
	})
	defer c.Close()
	p, _ := json.Marshal(map[string]any{"lab": s.opt.Lab, "interval_ms": s.opt.Interval.Milliseconds()})
	if _, aerr := c.Call(ctx, "events.subscribe", p); aerr != nil {
		http.Error(w, aerr.Message, http.StatusNotFound)
		return
	}
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
		case <-slow:
			s.opt.Log.Info("a page read too slowly: dropped (it reconnects)")
			return
		case <-keep.C:
			rc.SetWriteDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprint(w, ": keep-alive\n\n")
		case ev := <-queue:
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
