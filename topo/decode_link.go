package topo

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Per-direction keys of a link: block; a is endpoints[0], b endpoints[1].
const (
	keyAtoB = "a->b"
	keyBtoA = "b->a"
)

func (d *dec) links(n *yaml.Node, doc *rawDoc) {
	for i, item := range d.list(n, "links", false) {
		doc.links = append(doc.links, d.link(item, idx("links", i)))
	}
}

func (d *dec) link(n *yaml.Node, path string) *rawLink {
	l := &rawLink{loc: at(n, path)}
	if deref(n).Kind != yaml.MappingNode {
		d.errorf(l.loc, "a link must be a mapping such as {endpoints: [h1, s1]}, got %s", describe(n))
		l.bad = true
		return l
	}
	var ipV *yaml.Node
	hasEnds := false
	for _, e := range d.fields(n, path, linkKeys) {
		p := joinPath(path, e.key)
		switch e.key {
		case "endpoints":
			hasEnds = true
			l.bad = !d.endpoints(e.v, p, l)
		case "ip":
			ipV = e.v
		case "mtu":
			if v, ok := d.integer(e.v, p, 68, 65535); ok {
				l.mtu, l.mtuLoc = int(v), at(e.v, p)
			}
		case "link":
			l.params, l.dirs, l.dirLocs = d.linkBlock(e.v, p, true)
			l.paramsLoc = at(e.k, p)
		}
	}
	if !hasEnds {
		d.errorf(l.loc, "missing endpoints: a link joins two nodes (e.g. endpoints: [h1, s1] or [\"h1:eth0\", s1])")
		l.bad = true
	}
	d.broken = d.broken || l.bad
	if ipV != nil {
		p := path + ".ip"
		for _, e := range d.entries(ipV, p) {
			ip := rawIP{node: e.key, loc: at(e.k, joinPath(p, keyPath(e.key)))}
			ip.addrs = d.addrs(e.v, ip.loc.path)
			l.ips = append(l.ips, ip)
		}
	}
	return l
}

// endpoints decodes exactly two "node" or "node:iface" strings.
func (d *dec) endpoints(n *yaml.Node, path string, l *rawLink) bool {
	v := deref(n)
	if v == nil || v.Kind != yaml.SequenceNode || len(v.Content) != 2 {
		got := describe(n)
		if v != nil && v.Kind == yaml.SequenceNode {
			got = "a list of " + strconv.Itoa(len(v.Content))
		}
		d.errorf(at(n, path), "must be a list of two endpoints such as [h1, s1] or [\"h1:eth0\", s1], got %s", got)
		return false
	}
	ok := true
	for j, item := range v.Content {
		p := idx(path, j)
		s, good := d.str(item, p, `"node" or "node:interface"`)
		if !good {
			ok = false
			continue
		}
		node, iface, hasIface := strings.Cut(s, ":")
		if node == "" || hasIface && iface == "" {
			d.errorf(at(item, p), "endpoint %q is not \"node\" or \"node:interface\"", clip(s))
			ok = false
			continue
		}
		l.ends[j] = rawEnd{node: node, iface: iface, loc: at(item, p)}
	}
	return ok
}

// linkBlock decodes link parameters: a mapping of rate, delay, jitter, loss,
// queue (plus a->b and b->a mappings when dirs is true), or one string in
// --link syntax ("rate=10mbit,delay=5ms").
func (d *dec) linkBlock(n *yaml.Node, path string, dirs bool) (lp, [2]*lp, [2]loc) {
	var p lp
	var ds [2]*lp
	var dls [2]loc
	v := deref(n)
	if v != nil && v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
		var msgs []string
		p, msgs = parseLinkString(v.Value)
		for _, m := range msgs {
			d.errorf(at(v, path), "%s", m)
		}
		return p, ds, dls
	}
	valid := linkParamKeys
	if dirs {
		valid = append(append([]string(nil), linkParamKeys...), keyAtoB, keyBtoA)
	}
	for _, e := range d.entries(n, path) {
		kp := joinPath(path, keyPath(e.key))
		switch {
		case e.key == keyAtoB || e.key == keyBtoA:
			if !dirs {
				d.errorf(at(e.k, kp), "per-direction keys (a->b, b->a) are only valid on a link's own link: block")
				continue
			}
			j := 0
			if e.key == keyBtoA {
				j = 1
			}
			sub, _, _ := d.linkBlock(e.v, kp, false)
			ds[j], dls[j] = &sub, at(e.k, kp)
		case contains(linkParamKeys, e.key):
			s, ok := d.scalar(e.v, kp, "a value such as 10mbit, 5ms, 1% or 100")
			if !ok {
				continue
			}
			if msg := p.set(e.key, s); msg != "" {
				d.errorf(at(e.v, kp), "%s", msg)
			}
		default:
			d.errorf(at(e.k, kp), "unknown key %q %s", clip(e.key), choices("valid", e.key, valid))
		}
	}
	return p, ds, dls
}
