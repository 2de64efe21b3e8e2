package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
)

// TestTestCLI runs `emuctl test` as a user types it: --list, validate on
// suite files, a tiny suite end to end, a bad suite file, and Ctrl-C.
func TestTestCLI(t *testing.T) {
	r := must(t, run(t, "", "test", "--list"))
	for _, s := range []string{"asym-mptcp", "bufferbloat", "cc-mlo", "sack-reno", "tack", "wifi-physics"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("--list lacks %s:\n%s", s, r.stdout)
		}
	}
	files, _ := filepath.Glob("../../topologies/suites/*.yaml")
	args := []string{"validate"}
	for _, f := range files {
		rel, _ := filepath.Rel("../..", f)
		args = append(args, rel)
	}
	r = must(t, run(t, "", args...))
	if strings.Count(r.stdout, ": ok (suite ") != len(files) || len(files) < 5 {
		t.Errorf("validate suites:\n%s", r.stdout)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("suite: tsu-bad\ntopology: {nodes: {h1: {}, h2: {}}, links: [{endpoints: [h1, h2]}]}\nflows: [{from: h1, to: h3}]\nchecks: []\n"), 0o644)
	for _, cmd := range [][]string{{"validate", bad}, {"test", bad}} {
		if r = run(t, "", cmd...); r.code != 1 || !strings.Contains(r.stderr, bad+":3:9: flows[0]") {
			t.Errorf("%v: exit %d\n%s", cmd, r.code, r.stderr)
		}
	}
	if r = run(t, "", "test", "sack-renoo"); r.code == 0 || !strings.Contains(r.stderr, `did you mean "sack-reno"`) {
		t.Errorf("unknown suite: exit %d\n%s", r.code, r.stderr)
	}

	needRoot(t)
	out := t.TempDir()
	r = must(t, run(t, "", "test", "suite/testdata/good/tiny.yaml", "--quick", "--out", out, "--seed", "3"))
	for _, want := range []string{"tsu-tiny — tiny test suite", "PASS  C1", "ref   R1", "verdict: PASS", "report: " + out} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "[2/2] rate=") {
		t.Errorf("no progress lines on stderr:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "tsu-tiny", "latest", "report.md")); err != nil {
		t.Errorf("results: %v", err)
	}
	reportUI(t, filepath.Join(out, "tsu-tiny", "latest"))
	if r = run(t, "", "test", "suite/testdata/good/tiny.yaml", "--quick", "--port", "8080"); r.code != 1 || !strings.Contains(r.stderr, "give them with --ui") {
		t.Errorf("--port without --ui: exit %d\n%s", r.code, r.stderr)
	}
	testUI(t, out) // and --json

	// Ctrl-C in the middle of a run: exit 130, nothing left behind.
	long := filepath.Join(t.TempDir(), "long.yaml")
	b, _ := os.ReadFile("../../suite/testdata/good/tiny.yaml")
	os.WriteFile(long, bytes.Replace(b, []byte("duration: 3s, warmup: 1s"), []byte("duration: 60s, warmup: 1s"), 1), 0o644)
	cmd := exec.Command(bin, "test", long, "--out", out)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("Ctrl-C: %v\nstdout: %s\nstderr: %s", err, o.String(), e.String())
	}
	if !strings.Contains(e.String(), "stopping") || !strings.Contains(o.String(), "verdict: INTERRUPTED") {
		t.Errorf("Ctrl-C output:\n%s\n%s", o.String(), e.String())
	}
	for _, l := range emu.Leaks() {
		if strings.Contains(l, "tsu-tiny-") {
			t.Errorf("left behind after Ctrl-C: %s", l)
		}
	}
}

// testUI: emuctl test --ui --json prints the suite's page's URL on stderr
// (stdout carries the outcome), serves the suite's status as it runs and
// its report once it ends, and stays up until SIGINT, then exits with the
// suite's verdict.
func testUI(t *testing.T, out string) {
	t.Helper()
	cmd := exec.Command(bin, "test", "suite/testdata/good/tiny.yaml", "--quick", "--out", out, "--json", "--ui")
	cmd.Dir = "../.."
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var o bytes.Buffer
	cmd.Stdout = &o
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	url := ""
	for url == "" && sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "http://127.0.0.1:") {
			url = l
		}
	}
	if url == "" {
		t.Fatal("test --ui printed no URL")
	}
	go io.Copy(io.Discard, stderr)
	base, _, _ := strings.Cut(url, "/?token=")
	tok := url[strings.Index(url, "?"):]
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/api/suite"); code != http.StatusForbidden {
		t.Errorf("api/suite without the token: %d", code)
	}
	phases := map[string]bool{}
	var st struct {
		Phase, Verdict, Report, Lab string
		Done, Runs                  int
	}
	for deadline := time.Now().Add(90 * time.Second); st.Phase != "finished" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		code, body := get("/api/suite" + tok)
		if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
			t.Fatalf("api/suite: %d %s", code, body)
		}
		phases[st.Phase] = true
	}
	if st.Phase != "finished" || st.Verdict != "pass" || st.Done != 2 || st.Runs != 2 || !strings.HasPrefix(st.Lab, "tsu-tiny-") || !phases["running"] {
		t.Errorf("the suite's status: %+v; phases seen %v", st, phases)
	}
	if code, page := get("/" + tok); code != 200 || !strings.Contains(page, `id="suite"`) {
		t.Errorf("the page: %d", code)
	}
	if code, rep := get("/suite-report" + tok); code != 200 || !strings.Contains(rep, "tsu-tiny") || !strings.Contains(rep, "<strong>Verdict: PASS</strong>") {
		t.Errorf("the report in the page: %d %.300s", code, rep)
	}
	time.Sleep(300 * time.Millisecond) // the page stays up after the suite
	if code, _ := get("/api/suite" + tok); code != 200 {
		t.Errorf("the page after the suite: %d", code)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("test --ui after SIGINT: %v", err)
	}
	if !strings.Contains(o.String(), `"verdict": "pass"`) || !strings.Contains(o.String(), `"checks": [`) {
		t.Errorf("--json:\n%.400s", o.String())
	}
	t.Logf("test --ui: phases %v; %d runs", phases, st.Done)
}

// reportUI: emuctl report DIR --ui on a suite's results serves the suite's
// report as its front page behind the printed URL's token (nothing
// without it), its plots and the analysis report it wrote, until SIGINT.
func reportUI(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command(bin, "report", dir, "--ui")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	url := ""
	for url == "" && sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "http://127.0.0.1:") {
			url = l
		}
	}
	if url == "" {
		t.Fatalf("report --ui printed no URL; stderr: %s", e.String())
	}
	go io.Copy(io.Discard, stdout)
	get := func(u string) (int, string, string) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	base, _, _ := strings.Cut(url, "/?token=")
	if code, _, _ := get(base + "/"); code != http.StatusForbidden {
		t.Errorf("GET / without the token: %d", code)
	}
	code, _, page := get(url)
	if code != 200 || !strings.Contains(page, "tsu-tiny") || !strings.Contains(page, "<strong>Verdict: PASS</strong>") ||
		!strings.Contains(page, "<th>result</th>") || !strings.Contains(page, `href="/report/report/report.html"`) {
		t.Errorf("front page (%d):\n%.1500s", code, page)
	}
	tok := url[strings.Index(url, "?"):]
	code, _, analysis := get(base + "/report/report/report.html" + tok)
	if code != 200 || !strings.Contains(analysis, "<table>") {
		t.Errorf("analysis report: %d", code)
	}
	// every plot either report shows is served (the suite's are under
	// /report/, the analysis report's relative to it)
	var imgs []string
	for _, m := range regexp.MustCompile(`<img src="(/report/[^"]+)"`).FindAllStringSubmatch(page, -1) {
		imgs = append(imgs, m[1])
	}
	for _, m := range regexp.MustCompile(`<img src="(plots/[^"]+)"`).FindAllStringSubmatch(analysis, -1) {
		imgs = append(imgs, "/report/report/"+m[1])
	}
	if len(imgs) == 0 {
		t.Fatalf("no plot in either report")
	}
	for _, p := range imgs {
		if code, ct, body := get(base + p + tok); code != 200 || !strings.HasPrefix(ct, "image/") || len(body) < 100 {
			t.Errorf("plot %s: %d %s, %d bytes", p, code, ct, len(body))
		}
	}
	t.Logf("report --ui: front page %d bytes, analysis report %d bytes, %d plots served", len(page), len(analysis), len(imgs))
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("report --ui after SIGINT: %v; stderr: %s", err, e.String())
	}
}
