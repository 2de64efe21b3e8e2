package topo

import (
	"sync"

	"go.yaml.in/yaml/v3"
)

// A process that edits one lab again and again (emuctl api, package lab)
// would parse the document each edit made once more at the next edit:
// load has just parsed it. The trees of the last few edited documents are
// kept by their text, and an edit starts from a copy (aliases and anchors
// kept as they are), so the tree kept is never changed.

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

// treeOf is a copy of the tree kept for data, or nil.
func treeOf(data []byte) *yaml.Node {
	docTrees.Lock()
	root := docTrees.m[string(data)]
	docTrees.Unlock()
	if root == nil {
		return nil
	}
	return copyTree(root, map[*yaml.Node]*yaml.Node{})
}

// copyTree copies n; an alias in the copy points at the copy of its
// anchor's node (deepCopy, by contrast, expands aliases).
func copyTree(n *yaml.Node, done map[*yaml.Node]*yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if c, ok := done[n]; ok {
		return c
	}
	c := new(yaml.Node)
	*c = *n
	done[n] = c
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			c.Content[i] = copyTree(k, done)
		}
	}
	if n.Alias != nil {
		c.Alias = copyTree(n.Alias, done)
	}
	return c
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
