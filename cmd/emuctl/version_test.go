package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/internal/buildinfo"
)

// execRoot runs the root command in process with args and returns stdout.
func execRoot(t *testing.T, args ...string) string {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatalf("emuctl %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

// checkVersionText: the version (a revision or "dev") and the Go version.
func checkVersionText(t *testing.T, what, out string) {
	t.Helper()
	i := buildinfo.Read()
	if !strings.HasPrefix(out, "emuctl "+i.Version+"\n") {
		t.Errorf("%s: first line is not %q:\n%s", what, "emuctl "+i.Version, out)
	}
	if i.Revision != "" && !strings.Contains(out, i.Revision) || i.Revision == "" && !strings.Contains(out, "dev") {
		t.Errorf("%s: names neither the revision nor a dev build:\n%s", what, out)
	}
	if !strings.Contains(out, "go:       "+runtime.Version()+"\n") {
		t.Errorf("%s: no Go version %s:\n%s", what, runtime.Version(), out)
	}
	if !strings.Contains(out, "platform: "+runtime.GOOS+"/"+runtime.GOARCH+"\n") {
		t.Errorf("%s: no platform:\n%s", what, out)
	}
}

func TestVersionCommand(t *testing.T) {
	out := execRoot(t, "version")
	checkVersionText(t, "emuctl version", out)
	if flag := execRoot(t, "--version"); flag != out {
		t.Errorf("--version differs from version:\n%s---\n%s", flag, out)
	}

	var got buildinfo.Info
	js := execRoot(t, "version", "--json")
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, js)
	}
	if got != buildinfo.Read() || got.GoVersion != runtime.Version() || got.Version == "" {
		t.Errorf("--json: got %+v, want %+v", got, buildinfo.Read())
	}
}

var revisionLine = regexp.MustCompile(`(?m)^revision: [0-9a-f]{40}\b`)

// TestVersionBinary: the built emuctl (TestMain's `go build`) answers
// without root and without touching the host.
func TestVersionBinary(t *testing.T) {
	r := must(t, run(t, "", "version"), "version")
	if !strings.HasPrefix(r.stdout, "emuctl ") || !strings.Contains(r.stdout, "go:       "+runtime.Version()+"\n") {
		t.Errorf("emuctl version:\n%s", r.stdout)
	}
	// Built in this checkout: Go stamps the commit, unless -buildvcs is
	// off, and then the build is a dev one.
	if !revisionLine.MatchString(r.stdout) && !strings.HasPrefix(r.stdout, "emuctl dev\n") {
		t.Errorf("emuctl version names neither a revision nor a dev build:\n%s", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// TestReleaseBuild: `make release` builds a stripped binary (no symbol
// table, no DWARF, smaller than the test's own build) that still reports
// the version and commit make stamps into it. Needs git and make.
func TestReleaseBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds emuctl again")
	}
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not installed")
		}
	}
	head, err := exec.Command("git", "-C", "../..", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout")
	}
	out := filepath.Join(t.TempDir(), "emuctl")
	mk := exec.Command("make", "-s", "release", "RELEASE_BIN="+out, "VERSION=v0.0.0-releasetest")
	mk.Dir = "../.."
	if b, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, b)
	}
	v, err := exec.Command(out, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(v), "emuctl v0.0.0-releasetest\nrevision: "+strings.TrimSpace(string(head))) {
		t.Errorf("the release binary's version:\n%s", v)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range []string{".symtab", ".debug_info"} {
		if f.Section(s) != nil {
			t.Errorf("the release binary has %s: not stripped", s)
		}
	}
	rel, _ := os.Stat(out)
	dev, _ := os.Stat(bin)
	if rel.Size() >= dev.Size() {
		t.Errorf("release %d bytes, not smaller than the unstripped build's %d", rel.Size(), dev.Size())
	}
	t.Logf("release binary %.1f MB, unstripped %.1f MB", float64(rel.Size())/1e6, float64(dev.Size())/1e6)
}
