package topo

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A lab whose traces were named relative to its file, edited and written
// out, names every trace file by the path it was resolved to: the
// document loads again from anywhere and replays the same traces; a
// traced link added by an edit is checked as the file's links are.
func TestTopologyPinsTraces(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for ms := 1; ms <= 100; ms++ {
		b.WriteString(strconv.Itoa(ms) + "\n")
	}
	for _, f := range []string{"up.trace", "down.trace"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "lab.yaml")
	os.WriteFile(file, []byte(`name: pt
nodes: {h1: {}, h2: {}, h3: {}, s1: {kind: switch}}
links:
  - endpoints: [h1, s1]
    link: {trace: up.trace, queue: 50}
  - endpoints: [h2, s1]
    link: {a->b: {trace: {file: up.trace, loop: false}}, b->a: {trace: {synthetic: "lte seed=1 mean=5mbit length=2s"}}}
  - endpoints: [h3, s1]
    link: {mahimahi: "mm-delay 5 mm-link up.trace down.trace --uplink-queue=droptail --uplink-queue-args=packets=20"}
`), 0o644)
	s, err := LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err = AddLink(s, LinkRequest{A: "h1", B: "h2", Entry: "{link: {b->a: {trace: " + filepath.Join(dir, "down.trace") + "}}}"})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Topology(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"trace: " + dir + "/up.trace", "file: " + dir + "/up.trace", "mm-link " + dir + "/up.trace " + dir + "/down.trace", `synthetic: "lte seed=1`} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("the written topology lacks %q:\n%s", want, doc)
		}
	}
	back, err := Load(filepath.Join(t.TempDir(), "elsewhere.yaml"), doc)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	for i, l := range back.Links {
		for _, aToB := range []bool{true, false} {
			was, now := s.Links[i].Params.Dir(aToB).Trace, l.Params.Dir(aToB).Trace
			if (was == nil) != (now == nil) || was != nil && (was.File != now.File || was.Loop != now.Loop || len(was.Ms) != len(now.Ms)) {
				t.Errorf("link %d a->b %v: %+v, was %+v", i, aToB, now, was)
			}
		}
	}
	// an added trace that is not one is refused at its own line
	bad := filepath.Join(dir, "bad.trace")
	os.WriteFile(bad, []byte("7\n2\n"), 0o644)
	if _, err := AddLink(s, LinkRequest{A: "h3", B: "h2", Entry: "{link: {trace: " + bad + "}}"}); err == nil || !strings.Contains(err.Error(), bad+":2:1") {
		t.Errorf("a bad trace added: %v", err)
	}
}
