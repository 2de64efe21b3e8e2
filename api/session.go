package api

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/lab"
)

// session is one client's connection: its default lab, its shells and
// its event subscriptions.
type session struct {
	ctx context.Context
	opt Options

	wmu sync.Mutex
	out func(v any) // writes one message (one line on the pipe)

	mu     sync.Mutex
	lab    string
	next   int
	shells map[string]*lab.Shell
	ttys   map[string]*lab.Terminal
	subs   map[string]context.CancelFunc
}

func newSession(ctx context.Context, w io.Writer, opt Options) *session {
	s := &session{ctx: ctx, opt: opt, lab: opt.Lab, shells: map[string]*lab.Shell{}, ttys: map[string]*lab.Terminal{}, subs: map[string]context.CancelFunc{}}
	if w != nil {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		s.out = func(v any) { enc.Encode(v) }
	}
	return s
}

// send writes one message as one line.
func (s *session) send(v any) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.out(v)
}

// notify sends a notification.
func (s *session) notify(method string, params any) {
	s.send(notification{JSONRPC: "2.0", Method: method, Params: params})
}

func (s *session) id(prefix string) string {
	s.next++
	return prefix + strconv.Itoa(s.next)
}

// open is the lab a request acts on: the one it names, else the
// session's, else the only one running.
func (s *session) open(name string) (*lab.Lab, error) {
	if name == "" {
		s.mu.Lock()
		name = s.lab
		s.mu.Unlock()
	}
	if name == "" {
		labs, err := emu.Labs()
		if err != nil {
			return nil, err
		}
		switch len(labs) {
		case 0:
			return nil, newError(CodeNotFound, "no lab is running: bring one up (method up)")
		case 1:
			name = labs[0].Lab
		default:
			var names []string
			for _, l := range labs {
				names = append(names, l.Lab)
			}
			return nil, newError(CodeInvalidParams, "%d labs are running (%v): name one (\"lab\")", len(labs), names)
		}
	}
	return lab.Open(name)
}

func (s *session) use(name string) {
	s.mu.Lock()
	s.lab = name
	s.mu.Unlock()
}

func (s *session) shell(id string) (*lab.Shell, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.shells[id]
	if sh == nil {
		return nil, newError(CodeNotFound, "no shell %q in this session", id)
	}
	return sh, nil
}

// close ends the session's shells, terminals and subscriptions.
func (s *session) close() {
	s.mu.Lock()
	shells, ttys, subs := s.shells, s.ttys, s.subs
	s.shells, s.ttys, s.subs = map[string]*lab.Shell{}, map[string]*lab.Terminal{}, map[string]context.CancelFunc{}
	s.mu.Unlock()
	for _, c := range subs {
		c()
	}
	var wg sync.WaitGroup
	for _, sh := range shells {
		wg.Add(1)
		go func() { defer wg.Done(); sh.Close() }()
	}
	for _, t := range ttys {
		wg.Add(1)
		go func() { defer wg.Done(); t.Close() }()
	}
	wg.Wait()
}
