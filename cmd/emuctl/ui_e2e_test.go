package main

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startUI runs emuctl ui with args and returns its URL line, its stderr
// so far, and a stop that ends it (SIGTERM to its pid) and checks it
// exited 0.
func startUI(t *testing.T, args ...string) (url string, stderr *strings.Builder, stop func()) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"ui"}, args...)...)
	cmd.Dir = "../.."
	out, _ := cmd.StdoutPipe()
	stderr = &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("emuctl ui %v: %v\n%s", args, err, stderr)
		}
	}
	t.Cleanup(stop)
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, out)
	}()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("emuctl ui %v ended without a URL: %s", args, stderr)
			}
			if u := strings.TrimSpace(l); strings.HasPrefix(u, "http://") {
				return u, stderr, stop
			}
		case <-deadline:
			t.Fatalf("emuctl ui %v printed no URL in 10 s: %s", args, stderr)
		}
	}
}

func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// emuctl ui serves the lab's page on loopback with a token, warns beyond
// loopback, and stops on SIGTERM.
func TestUICommand(t *testing.T) {
	needRoot(t)
	must(t, run(t, "", "up", "--topo", "single,2", "--name", "tuie2e"))
	t.Cleanup(func() { run(t, "", "down", "tuie2e") })

	url, stderr, stop := startUI(t, "-l", "tuie2e")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Errorf("URL %q", url)
	}
	base := url[:strings.Index(url, "/?token=")]
	if c := status(t, base+"/"); c != http.StatusForbidden {
		t.Errorf("without the token: %d", c)
	}
	if c := status(t, url); c != http.StatusOK {
		t.Errorf("with the token: %d", c)
	}
	stop()
	if strings.Contains(stderr.String(), "warning") {
		t.Errorf("a warning on loopback: %s", stderr)
	}

	url, stderr, stop = startUI(t, "-l", "tuie2e", "--listen", "0.0.0.0:0", "--allow-changes")
	stop()
	if strings.Contains(url, "0.0.0.0") || strings.Contains(url, "[::]") {
		t.Errorf("URL %q: not an address to browse to", url)
	}
	if s := stderr.String(); !strings.Contains(s, "\033[1;31mwarning: serving on ") || !strings.Contains(s, "can change its links") {
		t.Errorf("--listen 0.0.0.0:0 without the red warning: %q", s)
	}

	if r := run(t, "", "ui", "-l", "tnolab"); r.code != 1 || !strings.Contains(r.stderr, `no lab "tnolab" is running`) {
		t.Errorf("ui of a lab that does not run: %d %s", r.code, r.stderr)
	}
}
