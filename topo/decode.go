package topo

import (
	"fmt"
	"io"
	"os"

	"github.com/emuctl/emuctl/internal/yamlpos"
	"go.yaml.in/yaml/v3"
)

// MaxFileSize bounds topology files; anything bigger is not a topology.
const MaxFileSize = 8 << 20

// maxExpanded bounds the number of YAML nodes after alias expansion, which
// defeats "billion laughs" documents while leaving room for large labs.
const maxExpanded = 2_000_000

// LoadFile reads and loads a topology file. See Load.
func LoadFile(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("topo: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("topo: %w", err)
	}
	return Load(path, data)
}

// Load decodes, validates and resolves a topology. filename is used in
// messages, in Link.Pos and for the default lab name. On any problem it
// returns Errors holding every problem found, sorted by position.
func Load(filename string, data []byte) (*Spec, error) {
	s, _, err := load(filename, data)
	return s, err
}

// load is Load, also returning the document's parsed tree (nil when it
// did not parse), which decoding reads and never changes.
func load(filename string, data []byte) (*Spec, *yaml.Node, error) {
	d := newDec(&diag{file: filename})
	if len(data) > MaxFileSize {
		d.errorf(loc{}, "file is larger than %d MiB: not a topology", MaxFileSize>>20)
		return nil, nil, d.result()
	}
	root := d.parse(data)
	if root == nil {
		return nil, nil, d.result()
	}
	return loadRoot(d, filename, data, root)
}

// loadTree is load of the document data whose tree root the caller has
// already (an edit: the tree it encoded to data), without parsing data.
func loadTree(filename string, data []byte, root *yaml.Node) (*Spec, error) {
	d := newDec(&diag{file: filename})
	if len(data) > MaxFileSize {
		d.errorf(loc{}, "file is larger than %d MiB: not a topology", MaxFileSize>>20)
		return nil, d.result()
	}
	if root = d.y.Tree(root, docDesc()); root == nil {
		return nil, d.result()
	}
	s, _, err := loadRoot(d, filename, data, root)
	return s, err
}

func loadRoot(d *dec, filename string, data []byte, root *yaml.Node) (*Spec, *yaml.Node, error) {
	doc := d.document(root)
	doc.source = filename
	s, err := resolve(d.diag, doc)
	if s != nil {
		s.Document = data
	}
	return s, root, err
}

// docDesc is a topology for yamlpos's messages (docKeys grows in init).
func docDesc() yamlpos.Doc {
	return yamlpos.Doc{Kind: "topology", Needs: "at least a nodes: mapping", Keys: docKeys, MaxExpanded: maxExpanded}
}

// parse turns data into the root mapping node, or reports why it cannot
// (yamlpos.Decoder.Parse: syntax errors at their line, aliases checked).
func (d *dec) parse(data []byte) *yaml.Node {
	return d.y.Parse(data, docDesc())
}
