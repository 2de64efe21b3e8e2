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
	for i, l := range spec.Links {
		if l.Params == nil {
			continue
		}
		where := rawOf[i].paramsLoc
		if where.line == 0 {
			where = rawOf[i].loc
		}
		add(where, fmt.Sprintf("links[%d] %s -- %s: link parameters %s", i, l.A, l.B, l.Params), "link shaping")
	}
	if doc.defTCP != nil {
		add(doc.defTCPLoc, "defaults.tcp: TCP profile", "TCP profiles")
	}
	for _, n := range doc.nodes {
		if n.tcp != nil {
			add(n.tcpLoc, "nodes."+n.name+".tcp: TCP profile", "TCP profiles")
		}
		if n.mptcp != nil {
			add(n.mptcpLoc, "nodes."+n.name+".mptcp: MPTCP settings", "MPTCP")
		}
	}
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
