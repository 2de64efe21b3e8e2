package report

import "github.com/emuctl/emuctl/analysis"

// A document is a flat list of blocks both renderers understand.
type block interface{ isBlock() }

type heading struct {
	level int
	text  string
}

type para struct{ text string }

// tableBlock is a table whose CSV and JSON copies live at tables/name.*.
type tableBlock struct {
	name string
	t    *analysis.Table
}

// figure is a plot saved as plots/name.{svg,png}.
type figure struct {
	name, caption string
}

func (heading) isBlock()    {}
func (para) isBlock()       {}
func (tableBlock) isBlock() {}
func (figure) isBlock()     {}

type document struct {
	title  string
	blocks []block
}

func (d *document) h(level int, text string) { d.blocks = append(d.blocks, heading{level, text}) }
func (d *document) p(text string)            { d.blocks = append(d.blocks, para{text}) }
func (d *document) table(name string, t *analysis.Table) {
	if len(t.Rows) > 0 {
		d.blocks = append(d.blocks, tableBlock{name, t})
	}
}
func (d *document) fig(name, caption string) { d.blocks = append(d.blocks, figure{name, caption}) }
