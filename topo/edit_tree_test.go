package topo

import (
	"os"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestEditKeptTree: an edit starts from the tree the previous edit's load
// parsed — a copy equal to parsing the document again (anchors and
// aliases included), which the edit may change without touching the tree
// kept — and edits from it write the same documents as edits from text.
func TestEditKeptTree(t *testing.T) {
	data, err := os.ReadFile("testdata/good/anchors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load("anchors.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := AddNode(s, NodeRequest{Name: "x1"})
	if err != nil {
		t.Fatal(err)
	}
	fresh := func(data []byte) *yaml.Node {
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Content[0]
	}
	kept := treeOf(s2.Document)
	if kept == nil {
		t.Fatal("the edit kept no tree for its document")
	}
	if !reflect.DeepEqual(kept, fresh(s2.Document)) {
		t.Fatal("the kept tree differs from the document parsed again")
	}
	kept.Content = nil // a copy: the next edit still finds the whole tree
	if again := treeOf(s2.Document); again == nil || !reflect.DeepEqual(again, fresh(s2.Document)) {
		t.Fatal("changing a copy changed the tree kept")
	}
	viaTree, err := RemoveNode(s2, "x1")
	if err != nil {
		t.Fatal(err)
	}
	s2text := *s2
	s2text.Document = append([]byte(nil), s2.Document...)
	s2text.Document = append(s2text.Document, '\n') // other text: no tree kept for it
	if treeOf(s2text.Document) != nil {
		t.Fatal("a tree kept for a document never loaded")
	}
	viaText, err := RemoveNode(&s2text, "x1")
	if err != nil {
		t.Fatal(err)
	}
	if string(viaTree.Document) != string(viaText.Document) {
		t.Errorf("edits from the kept tree and from the text differ:\n%s\n---\n%s", viaTree.Document, viaText.Document)
	}
	if specJSON(t, viaTree) != specJSON(t, viaText) {
		t.Error("edits from the kept tree and from the text give different Specs")
	}
}
