package ui

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
)

// SuiteFeed hands a running suite's status to the pages (emuctl test
// --ui): the runner sets it after every change, each page reads it twice
// a second (GET api/suite).
type SuiteFeed struct {
	mu  sync.Mutex
	js  []byte
	ver int
}

// Set replaces the status (any value that encodes as JSON: a
// suite.Status).
func (f *SuiteFeed) Set(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	f.mu.Lock()
	f.js = b
	f.ver++
	f.mu.Unlock()
}

// current is the last status and its version (0: none yet).
func (f *SuiteFeed) current() ([]byte, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.js, f.ver
}

// suiteStatus answers the suite's last status, {"phase": "starting"}
// before the first; X-Version counts the changes.
func (s *Server) suiteStatus(w http.ResponseWriter, r *http.Request) {
	b, ver := s.opt.Suite.current()
	if b == nil {
		b = []byte(`{"phase":"starting"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Version", strconv.Itoa(ver))
	w.Write(b)
}
