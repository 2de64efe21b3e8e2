package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/emuctl/emuctl/api"
	"golang.org/x/net/websocket"
)

// shellMsg is one WebSocket message of a node's terminal. The page sends
// {"type": "line", "text": "ping -c1 h2"} or {"type": "interrupt"}; the
// server answers {"type": "open", "text": ...} once, then per line
// {"type": "output", "text": ..., "code": N}, or {"type": "error", ...}.
type shellMsg struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	Code *int   `json:"code,omitempty"`
}

// shell serves a node's shell to the page over a WebSocket: the API's
// persistent shell (shell.open, shell.cmd, shell.interrupt) — one command
// line per message, its output and exit status back, the shell's state
// (directory, variables) kept between lines; it is closed when the page
// closes the socket. Only with AllowChanges (a shell can change anything
// in the node), and only from the page's own origin.
func (s *Server) shell(w http.ResponseWriter, r *http.Request) {
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
	node := r.URL.Query().Get("node")
	websocket.Server{
		Handshake: func(cfg *websocket.Config, req *http.Request) error {
			o, err := websocket.Origin(cfg, req)
			if err != nil || o == nil || o.String() != "http://"+req.Host {
				return errors.New("a WebSocket from another origin (or none)")
			}
			cfg.Origin = o
			return nil
		},
		Handler: func(ws *websocket.Conn) { s.runShell(r.Context(), ws, node) },
	}.ServeHTTP(w, r)
}

func (s *Server) runShell(ctx context.Context, ws *websocket.Conn, node string) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done() // the server stops, or the page went: the socket closes
		ws.Close()
	}()
	var mu sync.Mutex
	send := func(m shellMsg) {
		mu.Lock()
		defer mu.Unlock()
		websocket.JSON.Send(ws, m)
	}
	c := api.NewClient(ctx, api.Options{Lab: s.opt.Lab}, nil)
	defer c.Close() // closes the shell
	p, _ := json.Marshal(map[string]string{"lab": s.opt.Lab, "node": node})
	res, aerr := c.Call(ctx, "shell.open", p)
	if aerr != nil {
		send(shellMsg{Type: "error", Text: aerr.Message})
		return
	}
	var sh struct {
		Shell string `json:"shell"`
		Pid   int    `json:"pid"`
	}
	json.Unmarshal(res, &sh)
	s.opt.Log.Info("page opened a shell", "node", node, "pid", sh.Pid)
	send(shellMsg{Type: "open", Text: fmt.Sprintf("shell in %s (lab %s, pid %d): one command line at a time", node, s.opt.Lab, sh.Pid)})
	shellID, _ := json.Marshal(sh.Shell)

	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		defer cancel() // the page closed the socket: the command running is interrupted
		for {
			var m shellMsg
			if err := websocket.JSON.Receive(ws, &m); err != nil {
				return
			}
			switch m.Type {
			case "interrupt":
				c.Call(ctx, "shell.interrupt", json.RawMessage(`{"shell":`+string(shellID)+`}`))
			case "line":
				select {
				case lines <- m.Text:
				default:
					send(shellMsg{Type: "error", Text: "16 lines wait already: wait or interrupt"})
				}
			}
		}
	}()
	for line := range lines {
		p, _ := json.Marshal(map[string]any{"shell": sh.Shell, "line": line})
		res, aerr := c.Call(ctx, "shell.cmd", p)
		if aerr != nil {
			send(shellMsg{Type: "error", Text: aerr.Message})
			continue
		}
		var out struct {
			Output string `json:"output"`
			Code   int    `json:"code"`
		}
		json.Unmarshal(res, &out)
		send(shellMsg{Type: "output", Text: out.Output, Code: &out.Code})
	}
}
