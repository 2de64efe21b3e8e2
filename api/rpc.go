package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
)

// The wire: JSON-RPC 2.0, one message per line (UTF-8 JSON with no raw
// newline inside; a line is one request, notification or response).
// Requests run concurrently and are answered as they finish, by id; the
// server's own notifications (method "event") carry subscriptions'
// events. schema.json describes every method.

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// Error is a JSON-RPC error object: a code (schema.json lists them), a
// message a person can act on, and data — the kind, and for bad input
// every problem with its file, line, column and path where there is one.
type Error struct {
	Code    int        `json:"code"`
	Message string     `json:"message"`
	Data    *ErrorData `json:"data,omitempty"`
}

// ErrorData details an Error.
type ErrorData struct {
	Kind     string    `json:"kind"`
	Problems []Problem `json:"problems,omitempty"`
}

// Problem is one problem of bad input.
type Problem struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// Error codes: JSON-RPC's own, then emuctl's.
const (
	CodeParse          = -32700
	CodeInvalidRequest = -32600
	CodeNoMethod       = -32601
	CodeInvalidParams  = -32602
	CodeNotFound       = 1000 // no such lab, node, link, shell
	CodeBadInput       = 1001 // a topology, link keys or flows that are not valid
	CodeConflict       = 1002 // the lab exists, or another process changes it
	CodeNotSupported   = 1003 // refused here: the backend, kernel or lab cannot do it
	CodeFailed         = 1004 // a host operation failed
	CodeNeedsRoot      = 1005
)

var codeKinds = map[int]string{
	CodeParse: "parse", CodeInvalidRequest: "invalid-request", CodeNoMethod: "no-method", CodeInvalidParams: "invalid-params",
	CodeNotFound: "not-found", CodeBadInput: "bad-input", CodeConflict: "conflict", CodeNotSupported: "not-supported",
	CodeFailed: "failed", CodeNeedsRoot: "needs-root",
}

func newError(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Data: &ErrorData{Kind: codeKinds[code]}}
}

// asError classifies an error of the library for the wire.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	msg := err.Error()
	code := CodeFailed
	var tes topo.Errors
	switch {
	case errors.As(err, &tes):
		code = CodeBadInput
	case errors.Is(err, emu.ErrNoLab) || strings.Contains(msg, "has no node") || strings.Contains(msg, "no link ") || strings.Contains(msg, "does not exist"):
		code = CodeNotFound
	case errors.Is(err, emu.ErrExists) || strings.Contains(msg, "being changed by another") || strings.Contains(msg, "already has"):
		code = CodeConflict
	case strings.Contains(msg, "not supported") || strings.Contains(msg, "cannot be") || strings.Contains(msg, "cannot join") || strings.Contains(msg, "cannot leave"):
		code = CodeNotSupported
	case strings.Contains(msg, "needs root"):
		code = CodeNeedsRoot
	case strings.Contains(msg, "is not valid") || strings.Contains(msg, "unknown key") || strings.Contains(msg, "outside the lab's plan"):
		code = CodeBadInput
	}
	out := &Error{Code: code, Message: msg, Data: &ErrorData{Kind: codeKinds[code]}}
	for _, te := range tes {
		out.Data.Problems = append(out.Data.Problems, Problem{File: te.File, Line: te.Line, Col: te.Col, Path: te.Path, Message: te.Msg})
	}
	return out
}

// Options tune Serve.
type Options struct {
	// Lab is the lab a request acts on when it names none (else: the one
	// the session brought up or opened last, else the only one running).
	Lab string
	// LabOptions are used by up.
	LabOptions lab.Options
}

// Serve answers requests read from r on w until r ends (requests still
// running are answered first) or ctx is done; then it closes the
// session's shells and subscriptions (labs it brought
// up stay up: down takes them down). It returns r's error, if any.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opt Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := newSession(ctx, w, opt)
	defer s.close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 64<<20)
	var wg sync.WaitGroup
	for sc.Scan() {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			s.send(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: newError(CodeParse, "not a JSON-RPC 2.0 message: %v", err)})
			continue
		}
		if req.JSONRPC != "2.0" || req.Method == "" {
			s.send(response{JSONRPC: "2.0", ID: idOrNull(req.ID), Error: newError(CodeInvalidRequest, `a request needs "jsonrpc": "2.0" and a "method"`)})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.call(ctx, req.Method, req.Params)
			if req.ID == nil {
				return // a notification: no answer
			}
			resp := response{JSONRPC: "2.0", ID: req.ID}
			if err != nil {
				resp.Error = asError(err)
			} else {
				if res == nil {
					res = struct{}{}
				}
				resp.Result = res
			}
			s.send(resp)
		}()
	}
	// the input ended: what is running finishes and is answered (a
	// pipe of requests gets every answer); the caller's ctx still stops it
	wg.Wait()
	return sc.Err()
}

func idOrNull(id json.RawMessage) json.RawMessage {
	if id == nil {
		return json.RawMessage("null")
	}
	return id
}

// call runs one method.
func (s *session) call(ctx context.Context, method string, params json.RawMessage) (any, error) {
	m, ok := methods[method]
	if !ok {
		return nil, newError(CodeNoMethod, "no method %q (methods: %s)", method, strings.Join(MethodNames(), ", "))
	}
	return m.run(ctx, s, params)
}

// decode reads a method's params strictly: unknown keys are errors.
func decode[T any](method string, raw json.RawMessage) (T, error) {
	var p T
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, newError(CodeInvalidParams, "%s: params: %v (schema.json lists each method's params)", method, err)
	}
	return p, nil
}
