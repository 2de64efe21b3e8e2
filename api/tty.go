package api

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/emuctl/emuctl/lab"
)

// A terminal (tty.*): bash in a node on a pseudo-terminal, for a terminal
// emulator — the web page's, or a program's own. What it prints comes as
// notifications (method "tty": {tty, data}), in order, as it is printed;
// its end as one more ({tty, ended: true, code}). Keys go in with
// tty.write, as a terminal sends them ("\r" for Enter, "\u0003" for
// Ctrl-C). The session's end hangs its terminals up.

type ttyOpenParams struct {
	onLab
	Node string `json:"node"`
	Rows int    `json:"rows,omitempty"`
	Cols int    `json:"cols,omitempty"`
}

type ttyRef struct {
	TTY string `json:"tty"`
}

type ttyWriteParams struct {
	TTY  string `json:"tty"`
	Data string `json:"data"`
}

type ttyResizeParams struct {
	TTY  string `json:"tty"`
	Rows int    `json:"rows"`
	Cols int    `json:"cols"`
}

// ttyOutput is one notification of a terminal's output or end.
type ttyOutput struct {
	TTY   string `json:"tty"`
	Data  string `json:"data,omitempty"`
	Ended bool   `json:"ended,omitempty"`
	Code  *int   `json:"code,omitempty"`
}

func ttyOpen(ctx context.Context, s *session, p ttyOpenParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	if p.Node == "" {
		return nil, newError(CodeInvalidParams, "tty.open: give node")
	}
	rows, cols := p.Rows, p.Cols
	if rows == 0 {
		rows = 24
	}
	if cols == 0 {
		cols = 80
	}
	if err := lab.CheckTerminalSize(rows, cols); err != nil {
		return nil, newError(CodeInvalidParams, "tty.open: %v", err)
	}
	t, err := l.Terminal(ctx, p.Node, rows, cols)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	id := s.id("tty")
	s.ttys[id] = t
	s.mu.Unlock()
	go s.pumpTTY(id, t)
	return map[string]any{"tty": id, "pid": t.Pid(), "node": p.Node, "rows": rows, "cols": cols, "term": lab.TerminalTERM}, nil
}

// pumpTTY sends what t prints as notifications, whole UTF-8 characters
// only (a character split between two reads waits for its rest), then
// its end.
func (s *session) pumpTTY(id string, t *lab.Terminal) {
	buf := make([]byte, 32<<10)
	carry := 0
	for {
		n, err := t.Read(buf[carry:])
		n += carry
		cut := n
		// a UTF-8 sequence cut at the end waits (at most 3 bytes)
		for i := n - 1; i >= 0 && i >= n-3; i-- {
			if utf8.RuneStart(buf[i]) {
				if !utf8.FullRune(buf[i:n]) {
					cut = i
				}
				break
			}
		}
		if err != nil {
			cut = n
		}
		if cut > 0 {
			s.notify("tty", ttyOutput{TTY: id, Data: string(buf[:cut])})
		}
		carry = copy(buf, buf[cut:n])
		if err != nil {
			break
		}
	}
	code := t.ExitCode()
	s.mu.Lock()
	delete(s.ttys, id)
	s.mu.Unlock()
	t.Close()
	s.notify("tty", ttyOutput{TTY: id, Ended: true, Code: &code})
}

func (s *session) tty(id string) (*lab.Terminal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.ttys[id]
	if t == nil {
		return nil, newError(CodeNotFound, "no terminal %q in this session (ended, or never opened)", id)
	}
	return t, nil
}

func ttyWrite(ctx context.Context, s *session, p ttyWriteParams) (any, error) {
	t, err := s.tty(p.TTY)
	if err != nil {
		return nil, err
	}
	if _, err := t.Write([]byte(p.Data)); err != nil {
		return nil, fmt.Errorf("tty.write: %w", err)
	}
	return nil, nil
}

func ttyResize(ctx context.Context, s *session, p ttyResizeParams) (any, error) {
	t, err := s.tty(p.TTY)
	if err != nil {
		return nil, err
	}
	if err := t.Resize(p.Rows, p.Cols); err != nil {
		return nil, newError(CodeInvalidParams, "tty.resize: %v", err)
	}
	return nil, nil
}

func ttyClose(ctx context.Context, s *session, p ttyRef) (any, error) {
	t, err := s.tty(p.TTY)
	if err != nil {
		return nil, err
	}
	// the pump sees the end, forgets it and says so
	return nil, t.Close()
}
