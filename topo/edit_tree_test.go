package topo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestEditKeptTree: an edit starts from the tree the previous edit
// loaded — the document's tree (anchors and aliases included), taken so
// no other edit changes it — and edits from it write the same documents,
// and give the same Specs, as edits from text.
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
	enc := func(root *yaml.Node) string {
		b, err := encodeDoc(root)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if enc(fresh(s2.Document)) != string(s2.Document) {
		t.Fatal("the document does not encode to itself") // what the checks below compare
	}
	kept := treeOf(s2.Document)
	if kept == nil {
		t.Fatal("the edit kept no tree for its document")
	}
	if enc(kept) != string(s2.Document) {
		t.Fatal("the kept tree is not the document's")
	}
	if treeOf(s2.Document) != nil {
		t.Fatal("a tree taken is still kept")
	}
	keepTree(s2.Document, kept) // back, for the edit below
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

// TestEditLoadsAsText: what an edit loads from its tree is what loading
// the document it wrote gives (positions aside), for every good file and
// edits of each kind: nodes with keys and positions, links with
// parameters, flow keys, addresses and MTUs, removals.
func TestEditLoadsAsText(t *testing.T) {
	files, _ := filepath.Glob("testdata/good/*.yaml")
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			s := mustLoad(t, file)
			check := func(what string, edit func() (*Spec, error)) *Spec {
				t.Helper()
				ns, err := edit()
				if err != nil {
					t.Logf("%s: refused: %v", what, err) // some files cannot take every edit
					return nil
				}
				back, err := Load(s.Source, ns.Document)
				if err != nil {
					t.Fatalf("%s: the document written does not load: %v", what, err)
				}
				back.Source = ns.Source
				if ns.MACName != "" {
					back.Name, back.MACName = ns.Name, ns.MACName
				}
				if a, b := specJSON(t, ns), specJSON(t, back); a != b {
					t.Errorf("%s: the Spec loaded from the tree differs from its document's\n--- tree:\n%s\n--- text:\n%s", what, a, b)
				}
				return ns
			}
			pos := [3]float64{1.5, 2, 0}
			for _, n := range s.Nodes {
				if n.AP != nil {
					check("station add", func() (*Spec, error) {
						return AddNode(s, NodeRequest{Name: "zz0", Kind: "station", AP: n.Name, Position: &pos})
					})
					break
				}
			}
			s1 := check("node add", func() (*Spec, error) {
				return AddNode(s, NodeRequest{Name: "zz1", Entry: "{sysctls: {net.ipv4.tcp_ecn: 1}, tcp: {congestion_control: reno, sack: false}}"})
			})
			if s1 == nil {
				t.Fatal("a host with keys cannot be added")
			}
			s2 := check("node add router", func() (*Spec, error) { return AddNode(s1, NodeRequest{Name: "zz2", Kind: KindRouter}) })
			if s2 == nil {
				return
			}
			s3 := check("link add", func() (*Spec, error) {
				return AddLink(s2, LinkRequest{A: "zz1", B: "zz2", Params: "rate=10mbit,delay=5ms,loss=1%", MTU: 9000, Entry: "{link: {b->a: {delay: 20ms}}}"})
			})
			if s3 == nil {
				return
			}
			s4 := check("link add with addresses", func() (*Spec, error) {
				return AddLink(s3, LinkRequest{A: "zz2", B: "zz1", IP: map[string][]string{"zz1": {"10.250.0.1/30"}, "zz2": {"10.250.0.2/30"}}})
			})
			if s4 != nil {
				check("link del", func() (*Spec, error) { return RemoveLink(s4, len(s4.Links)-1) })
			}
			check("node del", func() (*Spec, error) { return RemoveNode(s3, "zz1") })
		})
	}
}

// TestEditDocumentLater: edits whose document is written meanwhile
// (DocumentLater, as run-time changes make them) give the documents and
// Specs of edits that write it at once, for every good file.
func TestEditDocumentLater(t *testing.T) {
	files, _ := filepath.Glob("testdata/good/*.yaml")
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			s := mustLoad(t, file)
			chain := func(opts ...EditOption) (docs [][]byte, specs []string) {
				cur := s
				for _, e := range []func(*Spec) (*Spec, error){
					func(s *Spec) (*Spec, error) {
						return AddNode(s, NodeRequest{Name: "zz1", Entry: "{tcp: {congestion_control: reno}}"}, opts...)
					},
					func(s *Spec) (*Spec, error) { return AddNode(s, NodeRequest{Name: "zz2", Kind: KindRouter}, opts...) },
					func(s *Spec) (*Spec, error) {
						return AddLink(s, LinkRequest{A: "zz1", B: "zz2", Params: "rate=10mbit,delay=5ms"}, opts...)
					},
					func(s *Spec) (*Spec, error) { return RemoveLink(s, len(s.Links)-1, opts...) },
					func(s *Spec) (*Spec, error) { return RemoveNode(s, "zz1", opts...) },
				} {
					ns, err := e(cur)
					if err != nil {
						docs = append(docs, []byte("refused: "+err.Error()))
						return
					}
					if err := ns.WaitDocument(); err != nil {
						t.Fatal(err)
					}
					docs, specs = append(docs, ns.Document), append(specs, specJSON(t, ns))
					cur = ns
				}
				return
			}
			ld, ls := chain(DocumentLater)
			nd, ns := chain()
			if len(ld) != len(nd) {
				t.Fatalf("%d edits later, %d at once", len(ld), len(nd))
			}
			for i := range nd {
				if string(ld[i]) != string(nd[i]) {
					t.Errorf("edit %d: the document written later differs:\n--- later:\n%s\n--- at once:\n%s", i, ld[i], nd[i])
				}
			}
			if strings.Join(ls, "\n") != strings.Join(ns, "\n") {
				t.Errorf("the Specs differ")
			}
			if len(nd) < 2 {
				t.Logf("refused early: %s", nd[len(nd)-1])
			}
		})
	}
}

// TestAddAloneAsWhole: a node added without links or keys of its own
// (loaded alone, addAlone) gives the Spec and document that loading the
// whole edited document gives, and the same refusals, for every good file.
func TestAddAloneAsWhole(t *testing.T) {
	files, _ := filepath.Glob("testdata/good/*.yaml")
	reqs := []NodeRequest{
		{Name: "zz1"},
		{Name: "zz2", Kind: KindRouter},
		{Name: "zz3", Kind: KindSwitch},
		{Name: "zz4", Kind: KindSwitch, SwitchType: SwitchLinuxBridge},
		{Name: "zz5", Kind: KindHost},
		{Name: "this-name-is-far-too-long-for-an-interface"},
		{Name: "bad name"},
	}
	add := func(s *Spec, req NodeRequest, alone bool) (string, string) {
		loadAlone = alone
		defer func() { loadAlone = true }()
		ns, err := AddNode(s, req)
		if err != nil {
			return "refused: " + err.Error(), ""
		}
		return specJSON(t, ns), string(ns.Document)
	}
	// a generated lab (written out by Export) is loaded alone too
	g, err := Generate("linear,3", GenOptions{Name: "zzgen"})
	if err != nil {
		t.Fatal(err)
	}
	root, err := g.pinned()
	if err != nil {
		t.Fatal(err)
	}
	if nodes := mapValue(root, "nodes"); nodes != nil {
		nodes.Content = append(nodes.Content, strNode("zz0"), &yaml.Node{Kind: yaml.MappingNode})
	}
	resolveTags(root)
	if _, ok, err := addAlone(g, root, "zz0"); !ok || err != nil {
		t.Fatalf("a host added to a generated lab is not loaded alone (ok %v, err %v)", ok, err)
	}
	for _, file := range append(files, "generated") {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			s := g
			if file != "generated" {
				s = mustLoad(t, file)
			}
			for _, req := range reqs {
				wholeSpec, wholeDoc := add(s, req, false)
				aloneSpec, aloneDoc := add(s, req, true)
				if wholeSpec != aloneSpec {
					t.Errorf("node add %s: alone\n%s\nwhole\n%s", req.Name, aloneSpec, wholeSpec)
				}
				if wholeDoc != aloneDoc {
					t.Errorf("node add %s: the documents differ", req.Name)
				}
			}
			// and a chain: nodes added alone, then a link to them, loaded whole
			s1, err := AddNode(s, NodeRequest{Name: "zz1"})
			if err != nil {
				t.Skipf("no node can be added: %v", err)
			}
			s2, err := AddNode(s1, NodeRequest{Name: "zz2", Kind: KindRouter})
			if err != nil {
				t.Fatal(err)
			}
			s3, err := AddLink(s2, LinkRequest{A: "zz1", B: "zz2"})
			if err != nil {
				t.Logf("link add refused: %v", err)
				return
			}
			back, err := Load(s.Source, s3.Document)
			if err != nil {
				t.Fatal(err)
			}
			back.Source = s3.Source
			if s3.MACName != "" {
				back.Name, back.MACName = s3.Name, s3.MACName
			}
			if a, b := specJSON(t, s3), specJSON(t, back); a != b {
				t.Errorf("after nodes added alone and a link, the Spec differs from its document's\n%s\n%s", a, b)
			}
		})
	}
}
