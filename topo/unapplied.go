package topo

import (
	"fmt"
	"sort"
)

// unapplied lists the settings this version parses and validates but
// cannot apply yet, one "file:line:col: what (...)" entry each. When a
// feature lands, delete its case here.
func unapplied(doc *rawDoc, spec *Spec, rawOf []*rawLink) []string {
	type item struct {
		l    loc
		text string
	}
	var items []item
	add := func(l loc, what, needs string) {
		if l.line == 0 {
			l = loc{} // generated: the source alone; what names the object
		}
		items = append(items, item{l, fmt.Sprintf("%s: %s (parsed; applying it needs %s support, not in this version)", posString(spec.Source, l), what, needs)})
	}
	// Link parameters are applied by package tc (emu's shaping phase).
	_ = add
	// tcp: and mptcp: are applied by package netcfg (emu's netcfg phase).
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].l.line != items[j].l.line {
			return items[i].l.line < items[j].l.line
		}
		return items[i].l.col < items[j].l.col
	})
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.text
	}
	return out
}
