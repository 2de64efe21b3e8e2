package api

import (
	"context"
	"encoding/json"
)

// Client is a session of the API held in-process: a Go program — the web
// page's server (package ui) — calls the same methods through the same
// table as a client over the pipe, and receives the same notifications,
// without a second path into the lab.
type Client struct {
	s      *session
	cancel context.CancelFunc
}

// NewClient opens a session. notify receives each notification (method
// "event": a subscription's events) as its params, encoded as on the
// wire; it runs on the subscription's goroutine and must not block long.
func NewClient(ctx context.Context, opt Options, notify func(method string, params json.RawMessage)) *Client {
	ctx, cancel := context.WithCancel(ctx)
	s := newSession(ctx, nil, opt)
	s.out = func(v any) {
		n, ok := v.(notification)
		if !ok || notify == nil {
			return
		}
		b, err := json.Marshal(n.Params)
		if err == nil {
			notify(n.Method, b)
		}
	}
	return &Client{s: s, cancel: cancel}
}

// Call runs one method with its params (JSON, as on the wire) and returns
// its result encoded as on the wire, or an *Error.
func (c *Client) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *Error) {
	res, err := c.s.call(ctx, method, params)
	if err != nil {
		return nil, asError(err)
	}
	if res == nil {
		res = struct{}{}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, asError(err)
	}
	return b, nil
}

// Close ends the session's shells and subscriptions.
func (c *Client) Close() {
	c.cancel()
	c.s.close()
}
