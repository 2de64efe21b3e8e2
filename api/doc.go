// Package api is `emuctl api`: every operation of package lab for
// programs in any language — the Python package and the web page among
// them — as JSON-RPC 2.0 over a pipe (one message per line). schema.json,
// embedded and served by the method "schema", describes each method, its
// params and result, the error codes and the notifications; a test holds
// it to the methods served.
//
// What it owns: the wire (rpc.go), a client's session (session.go: its
// default lab, shells, subscriptions), the method table (methods.go), the
// event stream (events.go), and a session held in-process (client.go:
// the web page's server, package ui, is a client like any other). Every method calls package lab (or emu's read
// side for counters): it never reaches the host another way, so the CLI,
// a Go program and an API client change a lab through one code path.
//
// No network listener: a process that can start `emuctl api` as root
// already is root. (`emuctl ui` serves a page over HTTP, behind a token,
// with the few methods a page may call: package ui.)
package api

import _ "embed"

// Schema is schema.json.
//
//go:embed schema.json
var Schema []byte
