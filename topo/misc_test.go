package topo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func errorsAs(err error, target **Error) bool { return errors.As(err, target) }

var suiteKey = regexp.MustCompile(`(?m)^suite:`)

// TestTopologies loads every example in topologies/ (files with a
// top-level suite: key are experiment suites, loaded elsewhere).
func TestTopologies(t *testing.T) {
	files, err := filepath.Glob("../topologies/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no topologies: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if suiteKey.Match(data) {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			s := mustLoad(t, file)
			checkSpec(t, s)
		})
	}
}

// TestExamplesMatchGenerators: the example files are the generators'
// topologies written out.
func TestExamplesMatchGenerators(t *testing.T) {
	for file, gen := range map[string]string{"linear3.yaml": "linear,3", "tree.yaml": "tree,2,2", "dumbbell.yaml": "dumbbell,2"} {
		s := mustLoad(t, "../topologies/"+file)
		g, err := Generate(gen, GenOptions{Name: s.Name})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Links) != len(g.Links) {
			t.Fatalf("%s has %d links, %s %d", file, len(s.Links), gen, len(g.Links))
		}
		for i := range s.Links {
			s.Links[i].Pos, g.Links[i].Pos = "", ""
		}
		g.Source = s.Source
		if a, b := dump(s), dump(g); a != b {
			t.Errorf("%s differs from %s:\n%s\n%s", file, gen, a, b)
		}
	}
}

// TestSchemaDocs keeps SCHEMA.md, doc.go and testdata/good/complete.yaml
// showing the same complete example.
func TestSchemaDocs(t *testing.T) {
	md, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindSubmatch(md)
	if m == nil {
		t.Fatal("SCHEMA.md has no yaml block")
	}
	example, err := os.ReadFile("testdata/good/complete.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(m[1]) != string(example) {
		t.Errorf("the SCHEMA.md example differs from testdata/good/complete.yaml")
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(example), "\n"), "\n") {
		if l == "" {
			lines = append(lines, "//")
		} else {
			lines = append(lines, "//\t"+l)
		}
	}
	if !strings.Contains(string(doc), strings.Join(lines, "\n")) {
		t.Errorf("doc.go does not contain the example of testdata/good/complete.yaml")
	}
	mustLoad(t, "testdata/good/complete.yaml")
}

// TestAutoRoutingCap: automatic routing is quadratic; a chain of 1001
// routers would need about a million routes and is refused with advice.
func TestAutoRoutingCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("nodes:\n")
	for i := 0; i <= 1000; i++ {
		fmt.Fprintf(&b, "  r%d: {kind: router}\n", i)
	}
	b.WriteString("links:\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "  - endpoints: [r%d, r%d]\n", i, i+1)
	}
	_, err := Load("chain.yaml", []byte(b.String()))
	want := "chain.yaml: routing: automatic routing over 1001 nodes and 1000 L2 segments could create up to 1001000 routes (limit 1000000): use routing: none and explicit routes, or fewer segments"
	if err == nil || err.Error() != want {
		t.Errorf("got %v", err)
	}
	s, err := Load("chain.yaml", []byte("routing: none\n"+b.String()))
	if err != nil || len(s.Nodes[0].Routes) != 0 {
		t.Errorf("routing: none: %v", err)
	}
}

func TestLoadFileMissing(t *testing.T) {
	if _, err := LoadFile("testdata/does-not-exist.yaml"); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v", err)
	}
}

func TestTooLarge(t *testing.T) {
	_, err := Load("big.yaml", make([]byte, MaxFileSize+1))
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("got %v", err)
	}
}
