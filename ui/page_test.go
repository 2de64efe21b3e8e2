package ui_test

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/ui"
)

// The page writes every name the lab holds as text: no markup is built
// from strings anywhere in its code.
func TestPageWritesTextOnly(t *testing.T) {
	js, err := os.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function`).FindAll(js, -1); len(m) > 0 {
		t.Errorf("app.js builds markup or code from strings: %q", m)
	}
	html, _ := os.ReadFile("static/index.html")
	if regexp.MustCompile(`<script>|<script [^>]*src="http|<link [^>]*href="http|\son[a-z]+=`).Match(html) {
		t.Error("index.html has inline script, an event attribute or a file from elsewhere")
	}
}

// The token guards every path before any lab is read (no root needed:
// the server of a lab that does not exist answers the same).
func TestToken(t *testing.T) {
	s := serve(t, ui.Options{Lab: "tuinone", Token: "s3cret"})
	c := newClient(t, s)
	if c.token != "s3cret" || !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || !s.Loopback() {
		t.Errorf("URL %s", s.URL())
	}
	for _, u := range []string{"/", "/index.html", "/app.js", "/api/info", "/api/events", "/api/tty", "/nope", "/?token=s3creT", "/?token="} {
		resp, err := http.Get(c.base + u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || strings.Contains(string(b), "emuctl ui</title>") {
			t.Errorf("GET %s without the token: %d", u, resp.StatusCode)
		}
	}
	for _, u := range []string{"/?token=s3cret", "/app.js?token=s3cret", "/app.css?token=s3cret"} {
		resp, err := http.Get(c.base + u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET %s: %d, CORS %q", u, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	if s2 := serve(t, ui.Options{Lab: "tuinone", Listen: "0.0.0.0:0"}); s2.Loopback() || strings.Contains(s2.URL(), "0.0.0.0") {
		t.Errorf("0.0.0.0: loopback %v, URL %s", s2.Loopback(), s2.URL())
	}
}
