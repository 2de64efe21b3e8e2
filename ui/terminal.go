package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/emuctl/emuctl/api"
	"golang.org/x/net/websocket"
)

// termMsg is one WebSocket message of a node's terminal. The page sends
// {"type": "input", "data": keys} (as a terminal sends them: "\r" for
// Enter, "\u0003" for Ctrl-C) and {"type": "resize", "rows": R, "cols":
// C}; the server answers {"type": "open", "text": ..., "rows", "cols"}
// once, then {"type": "output", "data": ...} as the terminal prints, and
// {"type": "ended", "code": N} when bash ends, or {"type": "error", ...}.
type termMsg struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	Data string `json:"data,omitempty"`
	Rows int    `json:"rows,omitempty"`
	Cols int    `json:"cols,omitempty"`
	Code *int   `json:"code,omitempty"`
}

// terminal serves a node's terminal to the page over a WebSocket: the
// API's tty (tty.open, tty.write, tty.resize; its output notifications)
// — bash on a pseudo-terminal in the node, bytes both ways, for the
// page's terminal emulator; hung up when the page closes the socket. Only
// with AllowChanges (a shell can change anything in the node), and only
// from the page's own origin.
func (s *Server) terminal(w http.ResponseWriter, r *http.Request) {
	if !s.opt.AllowChanges {
		http.Error(w, "403: the page is read-only (start emuctl ui with --allow-changes for terminals)", http.StatusForbidden)
		return
	}
	select {
	case s.shells <- struct{}{}:
		s.active.Add(1)
		defer func() { <-s.shells; s.active.Done() }()
	default:
		http.Error(w, fmt.Sprintf("503: %d terminals are open", cap(s.shells)), http.StatusServiceUnavailable)
		return
	}
	q := r.URL.Query()
	node := q.Get("node")
	rows, _ := strconv.Atoi(q.Get("rows"))
	cols, _ := strconv.Atoi(q.Get("cols"))
	websocket.Server{
		Handshake: func(cfg *websocket.Config, req *http.Request) error {
			o, err := websocket.Origin(cfg, req)
			if err != nil || o == nil || o.String() != "http://"+req.Host {
				return errors.New("a WebSocket from another origin (or none)")
			}
			cfg.Origin = o
			return nil
		},
		Handler: func(ws *websocket.Conn) { s.runTerminal(r.Context(), ws, node, rows, cols) },
	}.ServeHTTP(w, r)
}

func (s *Server) runTerminal(ctx context.Context, ws *websocket.Conn, node string, rows, cols int) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done() // the server stops, or the page went: the socket closes
		ws.Close()
	}()
	var mu sync.Mutex
	send := func(m termMsg) {
		mu.Lock()
		defer mu.Unlock()
		websocket.JSON.Send(ws, m)
	}
	ended := make(chan struct{})
	var once sync.Once
	var id string
	var idMu sync.Mutex
	c := api.NewClient(ctx, api.Options{Lab: s.opt.Lab}, func(method string, params json.RawMessage) {
		if method != "tty" {
			return
		}
		var o struct {
			TTY   string `json:"tty"`
			Data  string `json:"data"`
			Ended bool   `json:"ended"`
			Code  *int   `json:"code"`
		}
		if json.Unmarshal(params, &o) != nil {
			return
		}
		idMu.Lock()
		mine := o.TTY == id
		idMu.Unlock()
		switch {
		case !mine:
		case o.Ended:
			send(termMsg{Type: "ended", Code: o.Code})
			once.Do(func() { close(ended) })
		default:
			send(termMsg{Type: "output", Data: o.Data})
		}
	})
	defer c.Close() // hangs the terminal up
	p, _ := json.Marshal(map[string]any{"lab": s.opt.Lab, "node": node, "rows": rows, "cols": cols})
	// output waits (on idMu) until the id is known and "open" was sent:
	// the page gets "open" first
	idMu.Lock()
	res, aerr := c.Call(ctx, "tty.open", p)
	if aerr != nil {
		idMu.Unlock()
		send(termMsg{Type: "error", Text: aerr.Message})
		return
	}
	var t struct {
		TTY  string `json:"tty"`
		Pid  int    `json:"pid"`
		Rows int    `json:"rows"`
		Cols int    `json:"cols"`
	}
	json.Unmarshal(res, &t)
	id = t.TTY
	s.opt.Log.Info("page opened a terminal", "node", node, "pid", t.Pid)
	send(termMsg{Type: "open", Text: fmt.Sprintf("terminal in %s (lab %s, bash pid %d)", node, s.opt.Lab, t.Pid), Rows: t.Rows, Cols: t.Cols})
	idMu.Unlock()
	ref, _ := json.Marshal(t.TTY)

	go func() {
		defer cancel() // the page closed the socket: the terminal is hung up
		for {
			var m termMsg
			if err := websocket.JSON.Receive(ws, &m); err != nil {
				return
			}
			switch m.Type {
			case "input":
				d, _ := json.Marshal(m.Data)
				if _, aerr := c.Call(ctx, "tty.write", json.RawMessage(`{"tty":`+string(ref)+`,"data":`+string(d)+`}`)); aerr != nil {
					send(termMsg{Type: "error", Text: aerr.Message})
				}
			case "resize":
				p, _ := json.Marshal(map[string]any{"tty": t.TTY, "rows": m.Rows, "cols": m.Cols})
				if _, aerr := c.Call(ctx, "tty.resize", p); aerr != nil {
					send(termMsg{Type: "error", Text: aerr.Message})
				}
			}
		}
	}()
	select {
	case <-ended:
	case <-ctx.Done():
	}
}
