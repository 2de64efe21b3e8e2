package emu

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/emuctl/emuctl/topo"
)

// TestStateSpecBytes: a state written with its Spec encoded beforehand is
// byte for byte the state written whole.
func TestStateSpecBytes(t *testing.T) {
	t.Setenv("EMUCTL_RUN_DIR", t.TempDir())
	spec, err := topo.Generate("linear,3", topo.GenOptions{Name: "stb"})
	if err != nil {
		t.Fatal(err)
	}
	st := &State{Lab: "stb", Status: StatusUp, Namespaces: []string{"stb.h1"}, Created: time.Unix(1, 0), Spec: spec,
		NodeEnv: map[string][]topo.KV{"s1": {{Key: "A", Value: "b"}}}}
	if err := writeState(st); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(statePath("stb"))
	sj, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeStateSpec(st, sj); err != nil {
		t.Fatal(err)
	}
	given, _ := os.ReadFile(statePath("stb"))
	if string(whole) != string(given) {
		t.Errorf("the state differs:\n%s\n---\n%s", whole, given)
	}
}

// TestChangeCacheStamp: a change takes the state this process committed
// only while the state file is the one it wrote; it takes it once; labs
// with records this cache does not copy are never kept.
func TestChangeCacheStamp(t *testing.T) {
	t.Setenv("EMUCTL_RUN_DIR", t.TempDir())
	spec, err := topo.Generate("linear,2", topo.GenOptions{Name: "stc"})
	if err != nil {
		t.Fatal(err)
	}
	spec.Document = []byte("name: stc\n")
	st := &State{Lab: "stc", Status: StatusUp, Spec: spec, Namespaces: []string{"stc.h1"}}
	if err := writeState(st); err != nil {
		t.Fatal(err)
	}
	keepCommitted(st)
	st.Namespaces[0] = "changed by the caller" // the kept copy has its own
	got, err := readStateForChange("stc")
	if err != nil {
		t.Fatal(err)
	}
	if got == st || got.Spec != spec || got.Namespaces[0] != "stc.h1" {
		t.Fatalf("the kept state: %p (%v), want a copy of %p with its Spec", got, got.Namespaces, st)
	}
	if again, _ := readStateForChange("stc"); again == got {
		t.Error("a kept state was taken twice")
	}
	// another writer: the file has a new identity, the copy is not used
	keepCommitted(got)
	other := *got
	other.Namespaces = []string{"stc.h1", "stc.h2"}
	if err := writeState(&other); err != nil {
		t.Fatal(err)
	}
	fresh, err := readStateForChange("stc")
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh.Namespaces) != 2 {
		t.Errorf("read %v after another writer, want the file's two namespaces", fresh.Namespaces)
	}
	// OVS labs are not kept
	fresh.OVS = &OVSState{}
	if err := writeState(fresh); err != nil {
		t.Fatal(err)
	}
	keepCommitted(fresh)
	if got, _ := readStateForChange("stc"); got == fresh || got.Spec == fresh.Spec {
		t.Error("an OVS lab's state was kept")
	}
}

// TestDocSumMismatch: a lab's document is taken only when it is the one
// its state's commit wrote (a kill between the commit's writes leaves
// another change's); a state without a checksum takes any.
func TestDocSumMismatch(t *testing.T) {
	t.Setenv("EMUCTL_RUN_DIR", t.TempDir())
	doc := []byte("name: dsm\nnodes: {h1: {}, h2: {}}\nlinks: [{endpoints: [h1, h2]}]\n")
	spec, err := topo.Load("dsm.yaml", doc)
	if err != nil {
		t.Fatal(err)
	}
	st := &State{Lab: "dsm", Status: StatusUp, Spec: spec, DocSum: docSum(doc)}
	if err := writeState(st); err != nil {
		t.Fatal(err)
	}
	read := func(file []byte) []byte {
		t.Helper()
		if err := os.WriteFile(topologyFile("dsm"), file, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadState("dsm")
		if err != nil {
			t.Fatal(err)
		}
		withDocument(got)
		return got.Spec.Document
	}
	if got := read(doc); string(got) != string(doc) {
		t.Errorf("the committed document was not taken: %q", got)
	}
	other := append([]byte("# another change's\n"), doc...)
	if got := read(other); got != nil {
		t.Errorf("a document that is not the commit's was taken: %q", got)
	}
	// without it, the lab's document is the Spec written out
	if out, err := Topology("dsm"); err != nil || len(out) == 0 {
		t.Errorf("Topology with no document: %q, %v", out, err)
	}
	st.DocSum = "" // a state of before the checksum
	if err := writeState(st); err != nil {
		t.Fatal(err)
	}
	if got := read(other); string(got) != string(other) {
		t.Errorf("a state without a checksum did not take the document: %q", got)
	}
}

// TestWriteAtomic: a file replaced by writeAtomic is read whole, old or
// new, by a reader at any instant (the swap is one step, as the rename
// it replaces was); the first write, with nothing to swap with, makes
// the file; no temporary file is left beside it.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/state.json"
	a, b := make([]byte, 200_000), make([]byte, 150_000)
	for i := range a {
		a[i] = 'a'
	}
	for i := range b {
		b[i] = 'b'
	}
	if err := writeAtomic(path, a); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	reads := make(chan int)
	go func() {
		n := 0
		defer func() { reads <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("read %d: %v", n, err)
				return
			}
			if !(len(got) == len(a) && got[0] == 'a' && got[len(got)-1] == 'a') && !(len(got) == len(b) && got[0] == 'b' && got[len(got)-1] == 'b') {
				t.Errorf("read %d: %d bytes starting %q: neither file whole", n, len(got), got[:1])
				return
			}
			n++
		}
	}()
	for i := range 300 {
		if err := writeAtomic(path, [][]byte{a, b}[i%2]); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	t.Logf("%d reads while 300 writes replaced the file", <-reads)
	if got, _ := os.ReadFile(path); len(got) != len(b) || got[0] != 'b' {
		t.Errorf("after the writes: %d bytes, want the last one written (%d of b)", len(got), len(b))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %v, want state.json alone", names)
	}
}
