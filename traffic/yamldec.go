package traffic

import (
	"math"
	"time"

	"github.com/emuctl/emuctl/internal/yamlpos"
	"github.com/emuctl/emuctl/topo"
	"go.yaml.in/yaml/v3"
)

// flowDec collects every problem with its position (internal/yamlpos's
// rules, the same as topology and suite files).
type flowDec struct {
	errs topo.Errors
	y    *yamlpos.Decoder
}

func newFlowDec(file string) *flowDec {
	d := &flowDec{}
	d.y = yamlpos.New(func(line, col int, path, msg string) {
		d.errs = append(d.errs, &topo.Error{File: file, Line: line, Col: col, Path: path, Msg: msg})
	})
	return d
}

func (d *flowDec) errorf(n *yaml.Node, path, format string, args ...any) {
	d.y.Errorf(n, path, format, args...)
}

func (d *flowDec) result() error {
	if len(d.errs) == 0 {
		return nil
	}
	return topo.SortErrors(d.errs)
}

func (d *flowDec) parse(data []byte) *yaml.Node {
	return d.y.Parse(data, yamlpos.Doc{Kind: "flows file", Needs: "a flows: list", Keys: flowsDocKeys})
}

var (
	joinPath     = yamlpos.JoinPath
	describeNode = yamlpos.Describe
)

func (d *flowDec) mapping(n *yaml.Node, path string) []yamlpos.Entry { return d.y.Entries(n, path) }

func (d *flowDec) unknownKey(k *yaml.Node, path string, valid []string) {
	d.y.UnknownKey(k, path, valid)
}

func (d *flowDec) scalar(n *yaml.Node, path, want string) (string, bool) {
	return d.y.Str(n, path, want)
}

func (d *flowDec) str(n *yaml.Node, path string) (string, bool) { return d.y.Str(n, path, "a name") }

func (d *flowDec) integer(n *yaml.Node, path string, lo, hi int) (int, bool) {
	v, ok := d.y.Int(n, path, int64(lo), int64(hi))
	return int(v), ok
}

func (d *flowDec) boolean(n *yaml.Node, path string) (bool, bool) { return d.y.Bool(n, path) }

func (d *flowDec) duration(n *yaml.Node, path string) (time.Duration, bool) {
	return d.y.Duration(n, path, math.MinInt64, math.MaxInt64)
}

func (d *flowDec) oneOf(n *yaml.Node, path string, valid []string) (string, bool) {
	return d.y.OneOf(n, path, "value", valid)
}
