package topo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/units"
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
		p := joinPath(path, e.Key)
		switch e.Key {
		case "name":
			if s, ok := d.str(e.V, p, "a link name such as ue-enb"); ok {
				l.name, l.nameLoc = s, at(e.V, p)
			}
		case "endpoints":
			hasEnds = true
			l.bad = !d.endpoints(e.V, p, l)
		case "ip":
			ipV = e.V
		case "mtu":
			if v, ok := d.integer(e.V, p, 68, 65535); ok {
				l.mtu, l.mtuLoc = int(v), at(e.V, p)
			}
		case "link":
			l.params, l.dirs, l.dirLocs = d.linkBlock(e.V, p, true)
			l.paramsLoc = at(e.K, p)
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
			ip := rawIP{node: e.Key, loc: at(e.K, joinPath(p, keyPath(e.Key)))}
			ip.addrs = d.addrs(e.V, ip.loc.path)
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

// linkLevel is where a block of link parameters sits.
type linkLevel int

const (
	levelDefaults linkLevel = iota // defaults.link
	levelLink                      // a link's own link: block
	levelDir                       // a->b or b->a inside it
)

// linkBlock decodes link parameters: a mapping of the linkParamKeys (plus
// a->b and b->a mappings when dirs is true: a link's own block), or one
// string in --link syntax ("rate=10mbit,delay=5ms"). With dirs false it
// decodes defaults.link.
func (d *dec) linkBlock(n *yaml.Node, path string, dirs bool) (lp, [2]*lp, [2]loc) {
	if dirs {
		return d.linkParams(n, path, levelLink)
	}
	return d.linkParams(n, path, levelDefaults)
}

func (d *dec) linkParams(n *yaml.Node, path string, lvl linkLevel) (lp, [2]*lp, [2]loc) {
	var p lp
	var ds [2]*lp
	var dls [2]loc
	v := deref(n)
	if v != nil && v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
		var msgs []string
		p, msgs = parseLinkString(v.Value)
		if lvl == levelDir && p.backend != nil {
			msgs = append(msgs, backendPerLink)
		}
		for _, m := range msgs {
			d.errorf(at(v, path), "%s", m)
		}
		return p.soften(lvl, ds), ds, dls
	}
	valid := linkParamKeys
	switch lvl {
	case levelLink:
		valid = append(append([]string(nil), linkParamKeys...), "trace", "mahimahi", keyAtoB, keyBtoA)
	case levelDir:
		valid = append(append([]string(nil), dirParamKeys...), "trace")
	}
	var geLoc loc
	var mmV *yaml.Node
	var mmLoc loc
	for _, e := range d.entries(n, path) {
		kp := joinPath(path, keyPath(e.Key))
		switch {
		case e.Key == keyAtoB || e.Key == keyBtoA:
			if lvl != levelLink {
				d.errorf(at(e.K, kp), "per-direction keys (a->b, b->a) are only valid on a link's own link: block")
				continue
			}
			j := 0
			if e.Key == keyBtoA {
				j = 1
			}
			sub, _, _ := d.linkParams(e.V, kp, levelDir)
			ds[j], dls[j] = &sub, at(e.K, kp)
		case e.Key == "backend" && lvl == levelDir:
			d.errorf(at(e.K, kp), "%s", backendPerLink)
		case e.Key == "trace" && lvl == levelDefaults:
			d.errorf(at(e.K, kp), "trace is per link or per direction (a->b, b->a), not a default: each link replays its own trace")
		case e.Key == "trace":
			p.trace = d.trace(e.V, kp)
		case e.Key == "mahimahi" && lvl == levelLink:
			mmV, mmLoc = e.V, at(e.K, kp)
		case e.Key == "mahimahi":
			d.errorf(at(e.K, kp), "mahimahi is a whole link (both directions: mahimahi's uplink is a->b), on the link's own link: block")
		case e.Key == "reorder":
			if b, ok := d.boolean(e.V, kp); ok {
				p.reorder = &b
			}
		case e.Key == "queue" && deref(e.V) != nil && deref(e.V).Kind == yaml.MappingNode:
			p.queue = d.queueMapping(e.V, kp, at(e.K, kp))
		case e.Key == "ge" && deref(e.V) != nil && deref(e.V).Kind == yaml.MappingNode:
			p.ge = d.geModel(e.V, kp, at(e.K, kp))
			geLoc = at(e.K, kp)
		case slices.Contains(linkParamKeys, e.Key):
			s, ok := d.scalar(e.V, kp, paramWant(e.Key))
			if !ok {
				continue
			}
			if msg := p.set(e.Key, s); msg != "" {
				d.errorf(at(e.V, kp), "%s", msg)
			}
			if e.Key == "ge" {
				geLoc = at(e.K, kp)
			}
		default:
			val := ""
			if sv := deref(e.V); sv != nil && sv.Kind == yaml.ScalarNode {
				val = sv.Value
			}
			d.errorf(at(e.K, kp), "%s", unknownLinkKey(e.Key, val, valid))
		}
	}
	for _, m := range p.conflicts() {
		d.errorf(geLoc, "%s", m)
	}
	if mmV != nil {
		own := p
		own.backend = nil
		switch {
		case !own.empty() || ds[0] != nil || ds[1] != nil:
			d.errorf(mmLoc, "mahimahi sets the whole link (traces, queues, delay, loss): its other keys would conflict; keep only backend beside it")
		default:
			if mds, ok := d.mahimahi(mmV, joinPath(path, "mahimahi")); ok {
				ds, dls = mds, [2]loc{mmLoc, mmLoc}
			}
		}
	}
	return p.soften(lvl, ds), ds, dls
}

// backendPerLink is the message for backend inside a->b or b->a.
const backendPerLink = "backend is per link, not per direction (one implementation carries both directions): set it on the link's link: block or in defaults.link"

// soften marks the jitter qualifiers that are not errors without jitter:
// all of defaults.link (a lab-wide policy for links with jitter), and a
// link's symmetric ones when a direction sets jitter itself.
func (p lp) soften(lvl linkLevel, ds [2]*lp) lp {
	soft := lvl == levelDefaults
	if lvl == levelLink {
		for _, dp := range ds {
			if dp != nil && dp.jitter != nil && *dp.jitter > 0 {
				soft = true
			}
		}
	}
	if soft {
		p.softDist, p.softReorder = p.dist != nil, p.reorder != nil
	}
	return p
}

// paramWant describes the value a link parameter takes, for "must be"
// messages.
func paramWant(key string) string {
	switch key {
	case "jitter_dist":
		return "one of " + strings.Join(jitterDists, ", ")
	case "backend":
		return "one of " + strings.Join(linkBackends, ", ")
	case "ge":
		return `a mapping such as {p: 1%, r: 25%, bad_loss: 100%, good_loss: 0%} or a string such as "1%/25%"`
	case "queue":
		return `a limit such as 100, 150kB or 2bdp, or a mapping such as {discipline: codel, limit: 1000}`
	}
	return "a value such as 10mbit, 5ms, 1% or 100"
}

// geModel decodes ge: {p, r, bad_loss, good_loss}; p and r are required.
func (d *dec) geModel(n *yaml.Node, path string, keyLoc loc) *units.GilbertElliott {
	g := units.GilbertElliott{BadLoss: units.DefaultGEBadLoss, GoodLoss: units.DefaultGEGoodLoss}
	fields := map[string]*units.Percent{}
	for i, f := range g.Fields() {
		fields[units.GENames[i]] = f
	}
	seen := map[string]bool{}
	ok := true
	for _, e := range d.entries(n, path) {
		kp := joinPath(path, keyPath(e.Key))
		f := fields[e.Key]
		if f == nil {
			d.errorf(at(e.K, kp), "%s", unknownGEKey(e.Key))
			ok = false
			continue
		}
		s, good := d.scalar(e.V, kp, "a percentage such as 1% or 0.5%")
		if !good {
			ok = false
			continue
		}
		v, err := units.ParsePercent(s)
		if err != nil {
			d.errorf(at(e.V, kp), "%s", err)
			ok = false
			continue
		}
		*f, seen[e.Key] = v, true
	}
	var missing []string
	for _, k := range []string{"p", "r"} {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		d.errorf(keyLoc, "ge needs %s (e.g. ge: {p: 1%%, r: 25%%}; p: good->bad, r: bad->good per packet; bad_loss defaults to 100%%, good_loss to 0%%)", strings.Join(missing, " and "))
		return nil
	}
	if !ok {
		return nil
	}
	if msg := g.Check(); msg != "" {
		d.errorf(keyLoc, "%s", msg)
		return nil
	}
	return &g
}

// unknownGEKey is the message for a key of ge: that is not one, with the
// translation of netem's h, k, 1-h and 1-k.
func unknownGEKey(key string) string {
	switch key {
	case "1-h", "h":
		return fmt.Sprintf("unknown key %q: netem's 1-h (loss probability in the bad state) is bad_loss here (valid: %s)", key, strings.Join(units.GENames, ", "))
	case "1-k", "k":
		return fmt.Sprintf("unknown key %q: netem's 1-k (loss probability in the good state) is good_loss here (valid: %s)", key, strings.Join(units.GENames, ", "))
	}
	return fmt.Sprintf("unknown key %q (valid: %s%s)", clip(key), strings.Join(units.GENames, ", "), didYouMean(key, units.GENames))
}
