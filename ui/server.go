package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/emuctl/emuctl/api"
)

//go:embed static
var static embed.FS

// Options configure a Server.
type Options struct {
	// Lab is the lab the page shows (resolved by the caller).
	Lab string
	// Listen is the address to serve on; "" is 127.0.0.1 on a free port.
	Listen string
	// AllowChanges lets the page change links (link.set, link.up,
	// link.down) and move Wi-Fi nodes (wifi.move); without it the page
	// is read-only.
	AllowChanges bool
	// Token is the secret every request must carry; "" makes a random one.
	Token string
	// Interval is how often counters are sent (default 250 ms: 4 per second).
	Interval time.Duration
	// MaxClients bounds the pages watching at once, and the terminals
	// open at once (default 8 each).
	MaxClients int
	// Log receives the server's own messages (default: discarded).
	Log *slog.Logger
	// Report is a results directory served read-only under /report/
	// (emuctl report DIR --ui); without a Lab its report is the front
	// page (report.go). ReportHTML is its analysis report, relative to
	// it (e.g. report/report.html), linked from the front page.
	Report, ReportHTML string
	// Suite, when set, is a suite running (emuctl test --ui): the page
	// shows its progress from it, Lab is the name each run's lab takes
	// (up only while a run is made) and Report the results directory the
	// suite writes, whose report the page shows when the suite ends.
	Suite *SuiteFeed
}

// readMethods are the API methods every page may call; changeMethods
// need AllowChanges. Anything else (exec, shells, up, down, node and link
// add/del, traffic, capture, test) is refused: a page shows a lab and
// changes its links, nothing more.
var (
	readMethods   = map[string]bool{"nodes": true, "links": true, "machines": true, "topology": true, "wifi.show": true}
	changeMethods = map[string]bool{"link.set": true, "link.up": true, "link.down": true, "wifi.move": true}
)

// Server serves one lab's page.
type Server struct {
	opt    Options
	ln     net.Listener
	srv    *http.Server
	slots  chan struct{}  // one per page watching events
	shells chan struct{}  // one per terminal open
	active sync.WaitGroup // terminals (hijacked: Shutdown does not wait for them)
	hub    hub            // the pages' one subscription (events.go)
}

// CookieName is the cookie that keeps the token: one per port, since a
// browser sends a host's cookies to every port of it (two servers on one
// machine would otherwise overwrite each other's).
func (s *Server) CookieName() string {
	_, port, _ := net.SplitHostPort(s.ln.Addr().String())
	return "emuctl_ui_token_" + port
}

// New listens (nothing is served until Serve).
func New(opt Options) (*Server, error) {
	if opt.Lab == "" && opt.Report == "" {
		return nil, errors.New("ui: no lab and no report to serve")
	}
	if opt.Suite != nil && (opt.Lab == "" || opt.Report == "") {
		return nil, errors.New("ui: a suite's page needs its lab's name and its results directory")
	}
	if opt.Report != "" {
		if fi, err := os.Stat(opt.Report); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("ui: %s is not a results directory", opt.Report)
		}
	}
	if opt.Listen == "" {
		opt.Listen = "127.0.0.1:0"
	}
	if opt.Token == "" {
		b := make([]byte, 24)
		rand.Read(b)
		opt.Token = hex.EncodeToString(b)
	}
	if opt.Interval == 0 {
		opt.Interval = 250 * time.Millisecond
	}
	if opt.MaxClients == 0 {
		opt.MaxClients = 8
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", opt.Listen)
	if err != nil {
		return nil, fmt.Errorf("ui: listen on %s: %w", opt.Listen, err)
	}
	s := &Server{opt: opt, ln: ln, slots: make(chan struct{}, opt.MaxClients), shells: make(chan struct{}, opt.MaxClients)}
	s.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	return s, nil
}

// Addr is the address served on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Loopback tells whether the server listens on loopback only.
func (s *Server) Loopback() bool {
	host, _, _ := net.SplitHostPort(s.opt.Listen)
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL is the page's address with its token, to open in a browser: the
// host as given to Listen (the machine's name for an unspecified one,
// 0.0.0.0 or ::), the port as bound.
func (s *Server) URL() string {
	host, _, _ := net.SplitHostPort(s.opt.Listen)
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	_, port, _ := net.SplitHostPort(s.ln.Addr().String())
	return "http://" + net.JoinHostPort(host, port) + "/?token=" + url.QueryEscape(s.opt.Token)
}

// Serve serves until ctx is done, then closes every page's stream.
func (s *Server) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.srv.BaseContext = func(net.Listener) context.Context { return ctx }
	go func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 2*time.Second)
		defer c()
		s.srv.Shutdown(sctx)
	}()
	err := s.srv.Serve(s.ln)
	cancel()
	s.active.Wait() // every terminal's shell closed
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	if s.opt.Report != "" {
		mux.Handle("GET /report/", s.reportFiles())
	}
	if s.opt.Lab == "" {
		mux.HandleFunc("GET /", s.reportIndex) // a report, no lab: nothing else is served
		return s.auth(mux)
	}
	sub, _ := fs.Sub(static, "static")
	files := http.FileServerFS(sub)
	mux.Handle("GET /", files)
	mux.HandleFunc("GET /api/info", s.info)
	mux.HandleFunc("POST /api/call", s.call)
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("GET /api/tty", s.terminal)
	if s.opt.Suite != nil {
		mux.HandleFunc("GET /api/suite", s.suiteStatus)
		mux.HandleFunc("GET /suite-report", s.suiteReport)
	}
	return s.auth(mux)
}

// auth refuses (403) every request without the token, in its query (the
// URL printed; it is then kept in a cookie for the page's own requests)
// or in the cookie; the comparison takes constant time.
func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		tok := r.URL.Query().Get("token")
		fromQuery := tok != ""
		if !fromQuery {
			if c, err := r.Cookie(s.CookieName()); err == nil {
				tok = c.Value
			}
		}
		if subtle.ConstantTimeCompare([]byte(tok), []byte(s.opt.Token)) != 1 {
			http.Error(w, "403 forbidden: open the URL emuctl printed (it carries the token)", http.StatusForbidden)
			return
		}
		// a change must come from the page itself: a browser sends Origin
		// with every POST, and another site's Origin is refused
		if r.Method != http.MethodGet && r.Header.Get("Origin") != "" && r.Header.Get("Origin") != "http://"+r.Host {
			http.Error(w, "403 forbidden: cross-origin request", http.StatusForbidden)
			return
		}
		if fromQuery {
			http.SetCookie(w, &http.Cookie{Name: s.CookieName(), Value: s.opt.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"lab": s.opt.Lab, "allow_changes": s.opt.AllowChanges, "interval_ms": s.opt.Interval.Milliseconds(),
		"suite": s.opt.Suite != nil,
	})
}

// callRequest is what the page posts: one API method and its params.
type callRequest struct {
	Method string                     `json:"method"`
	Params map[string]json.RawMessage `json:"params"`
}

// call runs one API method for the page, on the server's lab, through
// the API's own table (package api), and answers {"result": ...} or
// {"error": {code, message, data}} as the API does.
func (s *Server) call(w http.ResponseWriter, r *http.Request) {
	var req callRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": api.CodeParse, "message": "not a call: " + err.Error()}})
		return
	}
	switch {
	case readMethods[req.Method]:
	case changeMethods[req.Method] && s.opt.AllowChanges:
	case changeMethods[req.Method]:
		writeJSON(w, http.StatusForbidden, map[string]any{"error": map[string]any{"code": api.CodeNotSupported,
			"message": req.Method + ": the page is read-only (start emuctl ui with --allow-changes to change links from it)"}})
		return
	default:
		writeJSON(w, http.StatusForbidden, map[string]any{"error": map[string]any{"code": api.CodeNoMethod,
			"message": fmt.Sprintf("%q is not served to the page", req.Method)}})
		return
	}
	if req.Params == nil {
		req.Params = map[string]json.RawMessage{}
	}
	lab, _ := json.Marshal(s.opt.Lab)
	req.Params["lab"] = lab // the page acts on its lab only
	params, _ := json.Marshal(req.Params)
	c := api.NewClient(r.Context(), api.Options{Lab: s.opt.Lab}, nil)
	defer c.Close()
	res, aerr := c.Call(r.Context(), req.Method, params)
	if aerr != nil {
		s.opt.Log.Info("page call failed", "method", req.Method, "err", aerr.Message)
		writeJSON(w, http.StatusOK, map[string]any{"error": aerr})
		return
	}
	if changeMethods[req.Method] {
		s.opt.Log.Info("page changed the lab", "method", req.Method, "params", string(params))
	}
	writeJSON(w, http.StatusOK, map[string]any{"result": res})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	w.Write(b)
}
