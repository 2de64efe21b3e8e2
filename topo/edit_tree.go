package topo

import (
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"
)

// A process that edits one lab again and again (emuctl api, package lab)
// would parse the document each edit made once more at the next edit,
// though the edit has the tree it encoded. The trees of the last few
// edited documents are kept by their text; the next edit of a document
// takes its tree (no one else gets it: an edit changes it, and a failed
// edit leaves nothing kept, so the edit after it parses the text).

const keptTrees = 8

var docTrees = struct {
	sync.Mutex
	order []string
	m     map[string]*yaml.Node
}{m: map[string]*yaml.Node{}}

// keepTree records root, the tree of the top-level mapping parsed from data.
func keepTree(data []byte, root *yaml.Node) {
	if root == nil || root.Kind != yaml.MappingNode {
		return
	}
	docTrees.Lock()
	defer docTrees.Unlock()
	if _, ok := docTrees.m[string(data)]; ok {
		return
	}
	key := string(data)
	docTrees.m[key] = root
	docTrees.order = append(docTrees.order, key)
	if len(docTrees.order) > keptTrees {
		delete(docTrees.m, docTrees.order[0])
		docTrees.order = docTrees.order[1:]
	}
}

// treeOf takes the tree kept for data, or nil.
func treeOf(data []byte) *yaml.Node {
	docTrees.Lock()
	defer docTrees.Unlock()
	root := docTrees.m[string(data)]
	if root != nil {
		delete(docTrees.m, string(data))
		docTrees.order = slices.DeleteFunc(docTrees.order, func(k string) bool { return k == string(data) })
	}
	return root
}

// resolveTags gives the scalars an edit made without a tag the tag the
// parser resolves for their text (what reading the encoded document back
// would give them: the decoder tells !!int, !!bool and !!null by tag).
func resolveTags(n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "" {
		n.Tag = n.ShortTag()
	}
	for _, c := range n.Content {
		resolveTags(c)
	}
}

// noPositions clears the lines and columns of a tree parsed from text
// other than the document's.
func noPositions(n *yaml.Node) {
	if n == nil {
		return
	}
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		noPositions(c)
	}
}
