package topo

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Run-time changes to a lab are edits of its topology document: the
// document as it stands is pinned (every link's interface names and
// addresses written out, so nothing already built is renamed or
// renumbered), the change is made to it, and the whole document is loaded
// again — the same decoding, validation, address allocation and routing
// as at up. The result is the lab as it stands now, as a file `up`
// accepts (Spec.Document), and a Spec whose untouched nodes and links are
// exactly the old ones (checked: a change that would alter one is
// refused), so the runtime only builds what is new, removes what is gone
// and follows changed routes.
//
// A Spec loaded from a file or a document carries it; a generated one is
// written out first (Export).

// NodeRequest is a node to add at run time.
type NodeRequest struct {
	Name string
	// Kind is host (default), router or switch.
	Kind NodeKind
	// SwitchType is linux-bridge or ovs (switches; default: the lab's).
	SwitchType string
	// OVSNames is an ovs switch's names: key (unique, the default, or
	// topology).
	OVSNames string
	// AP is a station's access point (Kind "station"; "" with one AP in
	// the lab, or the entry's wifi: {ap: ...} or {ssid: ...}).
	AP string
	// Position is a station's (or any Wi-Fi node's) place in metres.
	Position *[3]float64
	// Entry is more of the node's keys as a YAML flow mapping, the
	// file's syntax ({fail_mode: secure, datapath: netdev} for an ovs
	// switch, {sysctls: {...}}, {tcp: {...}}, {wifi: {rate: 54mbit}}
	// for a station); what it sets wins over the fields above.
	Entry string
}

// LinkRequest is a link to add at run time.
type LinkRequest struct {
	// A and B are "node" or "node:iface" (default: <node>-eth<N>, the
	// lowest N free on that node).
	A, B string
	// Name is the link's optional name.
	Name string
	// Params are link parameters in --link syntax
	// ("rate=10mbit,delay=5ms,loss=1%,queue=100"); empty: unshaped.
	Params string
	// Entry is more of the link's keys as a YAML flow mapping, the
	// file's syntax ({link: {rate: 10mbit, b->a: {delay: 20ms}}, mtu:
	// 9000}); what it sets wins over the fields above.
	Entry string
	// IP gives addresses per node ("h1" -> ["10.9.0.1/24"]); nodes not
	// named get addresses from the lab's plan.
	IP map[string][]string
	// MTU of the link (0: 1500).
	MTU int
}

// AddNode returns s with a new node.
func AddNode(s *Spec, req NodeRequest, opts ...EditOption) (*Spec, error) {
	call := "node add " + req.Name
	var alone func(*yaml.Node) (*Spec, bool, error)
	if loadAlone && req.Entry == "" && req.AP == "" && req.Position == nil && req.OVSNames == "" &&
		(req.Kind == "" || req.Kind == KindHost || req.Kind == KindRouter || req.Kind == KindSwitch && req.SwitchType != SwitchOVS) {
		alone = func(root *yaml.Node) (*Spec, bool, error) { return addAlone(s, root, req.Name) }
	}
	return editAlone(s, call, opts, func(doc *yaml.Node) (string, error) {
		nodes := mapValue(doc, "nodes")
		if nodes == nil {
			return "", fmt.Errorf("%s: the lab's document has no nodes: mapping", call)
		}
		if mapValue(nodes, req.Name) != nil || hasKey(nodes, req.Name) {
			return "", fmt.Errorf("%s: the lab already has a node %q (nodes: %s)", call, req.Name, strings.Join(nodeNamesOf(s), ", "))
		}
		body := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		kind := req.Kind
		if kind == "" {
			kind = KindHost
		}
		setStr(body, "kind", string(kind))
		if req.SwitchType != "" {
			setStr(body, "type", req.SwitchType)
		}
		if req.OVSNames != "" {
			setStr(body, "names", req.OVSNames)
		}
		if req.Position != nil {
			pos := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, v := range req.Position {
				pos.Content = append(pos.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(v, 'f', -1, 64)})
			}
			setNode(body, "position", pos)
		}
		if err := mergeEntry(body, req.Entry, call, "the node's", "{fail_mode: secure}"); err != nil {
			return "", err
		}
		if req.AP != "" {
			// the entry's own wifi: keys stay; ap: joins them unless it
			// names the network (ssid:) or an AP itself
			w := mapValue(body, "wifi")
			if w == nil || w.Kind != yaml.MappingNode {
				w = &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
				setNode(body, "wifi", w)
			}
			if !hasKey(w, "ap") && !hasKey(w, "ssid") {
				setStr(w, "ap", req.AP)
			}
		}
		nodes.Content = append(nodes.Content, strNode(req.Name), body)
		return "nodes." + keyPath(req.Name), nil
	}, alone)
}

// loadAlone lets a node that comes without links or keys of its own be
// added without loading the whole document again (tests turn it off to
// compare).
var loadAlone = true

// aloneKeys are the document's top-level keys that can shape a node
// added without links: the lab's name, its addressing, routing and
// defaults. The others (links, wifi, schedules, machines) name nodes.
var aloneKeys = []string{"version", "name", "addressing", "routing", "defaults"}

// addAlone makes the Spec of s with node name added, root being the
// edited document: a document of root's lab-wide keys and that node alone
// is loaded, and its node joins a copy of s. A host, router or Linux
// bridge without links has no interfaces, addresses, MACs or routes, and
// no other node's change with it (TestAddAloneAsWhole compares this with
// loading the whole document for every good file). An Open vSwitch switch
// (the default switch type may say so) is loaded whole.
func addAlone(s *Spec, root *yaml.Node, name string) (*Spec, bool, error) {
	mini := &yaml.Node{Kind: yaml.MappingNode, Tag: root.Tag, Style: root.Style, Line: root.Line, Column: root.Column}
	for k := 0; k+1 < len(root.Content); k += 2 {
		switch key := root.Content[k].Value; {
		case slices.Contains(aloneKeys, key):
			mini.Content = append(mini.Content, root.Content[k], root.Content[k+1])
		case key == "nodes":
			nodes := root.Content[k+1]
			one := &yaml.Node{Kind: yaml.MappingNode, Tag: nodes.Tag, Style: nodes.Style, Line: nodes.Line, Column: nodes.Column}
			for j := 0; j+1 < len(nodes.Content); j += 2 {
				if nodes.Content[j].Value == name {
					one.Content = append(one.Content, nodes.Content[j], nodes.Content[j+1])
				}
			}
			mini.Content = append(mini.Content, root.Content[k], one)
		}
	}
	ms, err := loadTree(s.Source, nil, mini)
	if err != nil {
		return nil, false, err
	}
	if len(ms.Nodes) != 1 || ms.Nodes[0].Name != name || ms.Nodes[0].SwitchType == SwitchOVS {
		return nil, false, nil
	}
	ns := *s
	ns.Document, ns.pending = nil, nil
	ns.Nodes = append(slices.Clip(s.Nodes), ms.Nodes[0])
	ns.Links = slices.Clip(s.Links)
	return &ns, true, nil
}

// AddLink returns s with a new link (its index is len(s.Links)).
func AddLink(s *Spec, req LinkRequest, opts ...EditOption) (*Spec, error) {
	call := "link add " + req.A + " " + req.B
	ns, err := edit(s, call, opts, func(doc *yaml.Node) (string, error) {
		links := mapValue(doc, "links")
		if links == nil {
			links = &yaml.Node{Kind: yaml.SequenceNode}
			doc.Content = append(doc.Content, strNode("links"), links)
		}
		body := &yaml.Node{Kind: yaml.MappingNode}
		ends := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, e := range []string{req.A, req.B} {
			// an end without an interface name gets Mininet's next free
			// <node>-eth<N> from the resolver: every other is pinned
			ends.Content = append(ends.Content, strNode(e))
		}
		body.Content = append(body.Content, strNode("endpoints"), ends)
		if req.Name != "" {
			setStr(body, "name", req.Name)
		}
		if req.MTU > 0 {
			setStr(body, "mtu", strconv.Itoa(req.MTU))
		}
		if len(req.IP) > 0 {
			ips := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
			for _, node := range slices.Sorted(maps.Keys(req.IP)) {
				ips.Content = append(ips.Content, strNode(node), strList(req.IP[node]))
			}
			body.Content = append(body.Content, strNode("ip"), ips)
		}
		if req.Params != "" {
			setStr(body, "link", req.Params)
		}
		if err := mergeEntry(body, req.Entry, call, "the link's", "{link: {rate: 10mbit}}"); err != nil {
			return "", err
		}
		links.Content = append(links.Content, body)
		return "links[" + strconv.Itoa(len(links.Content)-1) + "]", nil
	})
	if err != nil {
		return nil, err
	}
	l := ns.Links[len(ns.Links)-1]
	for _, ep := range []Endpoint{l.A, l.B} {
		if ifc := ns.Node(ep.Node).Iface(ep.Iface); ifc != nil {
			if err := inPlan(s, ep.Node, ifc.Addrs); err != nil {
				return nil, fmt.Errorf("%s: %w", call, err)
			}
		}
	}
	return ns, nil
}

// mergeEntry sets the keys of entry, a YAML flow mapping, on body.
func mergeEntry(body *yaml.Node, entry, call, whose, example string) error {
	if entry == "" {
		return nil
	}
	var extra yaml.Node
	if err := yaml.Unmarshal([]byte(entry), &extra); err != nil || len(extra.Content) != 1 || extra.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("%s: %s keys %q are not a YAML mapping such as %s", call, whose, entry, example)
	}
	m := extra.Content[0]
	noPositions(m) // lines of the entry's text, not of the document's
	for k := 0; k+1 < len(m.Content); k += 2 {
		setNode(body, m.Content[k].Value, m.Content[k+1])
	}
	return nil
}

// inPlan checks that given addresses come from the lab's plan: its pool
// (pool6), or a subnet one of its segments already uses.
func inPlan(s *Spec, node string, addrs []netip.Prefix) error {
	var subs []netip.Prefix
	if a := s.Addressing; a != nil {
		subs = append(subs, a.Pool)
		if a.Pool6.IsValid() {
			subs = append(subs, a.Pool6)
		}
	}
	for _, n := range s.Nodes {
		for _, ifc := range n.Interfaces {
			for _, a := range ifc.Addrs {
				subs = append(subs, a.Masked())
			}
		}
	}
	for _, p := range addrs {
		ok := false
		for _, sub := range subs {
			ok = ok || sub.Contains(p.Addr())
		}
		if !ok {
			var where []string
			for _, sub := range subs[:min(len(subs), 2)] {
				where = append(where, sub.String())
			}
			return fmt.Errorf("ip %s=%s is outside the lab's plan: use an address in its pool (%s) or in a subnet the lab already has", node, p, strings.Join(where, ", "))
		}
	}
	return nil
}

// RemoveLink returns s without link i.
func RemoveLink(s *Spec, i int, opts ...EditOption) (*Spec, error) {
	if i < 0 || i >= len(s.Links) {
		return nil, fmt.Errorf("link del: link %d does not exist (the lab's links are 0..%d)", i, len(s.Links)-1)
	}
	call := fmt.Sprintf("link del %d (%s <-> %s)", i, s.Links[i].A, s.Links[i].B)
	return edit(s, call, opts, func(doc *yaml.Node) (string, error) {
		links := mapValue(doc, "links")
		links.Content = slices.Delete(links.Content, i, i+1)
		return "", nil
	})
}

// RemoveNode returns s without the node and every link that ends on it.
func RemoveNode(s *Spec, name string, opts ...EditOption) (*Spec, error) {
	call := "node del " + name
	if s.Node(name) == nil {
		return nil, fmt.Errorf("%s: the lab has no node %q (nodes: %s)", call, name, strings.Join(nodeNamesOf(s), ", "))
	}
	return edit(s, call, opts, func(doc *yaml.Node) (string, error) {
		if links := mapValue(doc, "links"); links != nil {
			keep := links.Content[:0]
			for li, item := range links.Content {
				if l := s.Links[li]; l.A.Node != name && l.B.Node != name {
					keep = append(keep, item)
				}
			}
			links.Content = keep
		}
		nodes := mapValue(doc, "nodes")
		for k := 0; k+1 < len(nodes.Content); k += 2 {
			if nodes.Content[k].Value == name {
				nodes.Content = slices.Delete(nodes.Content, k, k+2)
				break
			}
		}
		return "", nil
	})
}

// EditOption changes how an edit is made.
type EditOption int

// DocumentLater lets an edit return before its document is written out:
// the Spec's Document is nil until WaitDocument, and the text is encoded
// meanwhile on another goroutine (a run-time change builds the kernel's
// side in that time, and writes the document out at its commit).
const DocumentLater EditOption = 1

// pendingDoc is a document being encoded (DocumentLater).
type pendingDoc struct {
	done chan struct{}
	data []byte
	err  error
}

// WaitDocument waits for the document of an edit made with DocumentLater
// and sets s.Document (nothing for any other Spec).
func (s *Spec) WaitDocument() error {
	p := s.pending
	if p == nil {
		return nil
	}
	<-p.done
	if p.err != nil {
		return fmt.Errorf("write the lab's document: %w", p.err)
	}
	s.Document, s.pending = p.data, nil
	return nil
}

// edit pins s's document, lets change edit it (returning the path of what
// it added, for messages), loads the result and checks that everything
// else is as it was.
func edit(s *Spec, call string, opts []EditOption, change func(doc *yaml.Node) (string, error)) (*Spec, error) {
	return editAlone(s, call, opts, change, nil)
}

// editAlone is edit; alone, when it is not nil, makes the new Spec
// without loading the whole document again, for an edit that adds
// something nothing else in the lab depends on (addAlone), or says it
// cannot (ok false: the whole document is loaded).
func editAlone(s *Spec, call string, opts []EditOption, change func(doc *yaml.Node) (string, error), alone func(root *yaml.Node) (ns *Spec, ok bool, err error)) (*Spec, error) {
	if s.Cluster != nil {
		return nil, fmt.Errorf("%s: the lab runs over several machines, and run-time changes are not supported there yet (bring it down, change the file, and up it again)", call)
	}
	if err := s.WaitDocument(); err != nil {
		return nil, fmt.Errorf("%s: %w", call, err)
	}
	root, err := s.pinned()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", call, err)
	}
	added, err := change(root)
	if err != nil {
		return nil, err
	}
	// the text is encoded from the tree as the edit left it. Encoded
	// meanwhile, it is encoded from the tree itself while the load reads
	// it (neither writes to it once its tags are resolved below, which
	// does not change the text: each is the tag the encoder would imply);
	// a flow document is encoded from a copy, since the encoder restyles
	// its top level (TestEditDocumentLater: the same text either way)
	var data []byte
	var later *pendingDoc
	loaded := make(chan bool, 1)
	if slices.Contains(opts, DocumentLater) {
		later = &pendingDoc{done: make(chan struct{})}
		src := root
		if root.Style&yaml.FlowStyle != 0 {
			src = cloneTree(root, map[*yaml.Node]*yaml.Node{})
		}
		resolveTags(root)
		go func() {
			defer close(later.done)
			later.data, later.err = encodeDoc(src)
			if <-loaded && later.err == nil {
				keepTree(later.data, root) // the next edit of the Spec starts from it
			}
		}()
	} else if data, err = encodeDoc(root); err != nil {
		return nil, fmt.Errorf("%s: write the document: %w", call, err)
	}
	ok := false
	defer func() { loaded <- ok }()
	// loaded from the tree just encoded: parsing data again would give
	// the same tree but for positions (the kept nodes keep those of the
	// document they were read from; the edit's own have none, and are
	// named by path) and the tags the parser resolves, set here
	resolveTags(root)
	var ns *Spec
	done := false
	if alone != nil {
		if ns, done, err = alone(root); err != nil {
			return nil, blame(err, call, added)
		}
	}
	if !done {
		ns, err = loadTree(s.Source, data, root)
	}
	if err != nil {
		if strings.Contains(err.Error(), "no free address left in") {
			err = fmt.Errorf("%w\n(a segment's subnet was sized at up — a switch with two hosts gets addressing.p2p_prefix, /30 by default — and addresses already given never change; for a lab that grows at run time, set addressing: {p2p_prefix: 24} in its file, as generated labs have)", blame(err, call, added))
			return nil, err
		}
		return nil, blame(err, call, added)
	}
	ns.Source = s.Source
	if s.MACName != "" {
		ns.Name, ns.MACName = s.Name, s.MACName
	}
	if later == nil {
		ns.Document = data
	}
	if !done {
		if err := unchanged(s, ns); err != nil {
			return nil, fmt.Errorf("%s: %w", call, err)
		}
	}
	ok = true
	if later == nil {
		keepTree(data, root) // the next edit of ns starts from it
	}
	ns.pending = later
	return ns, nil
}

// blame restates the errors of an edited document as the call's: those
// about what the call added name the call alone, the others their path
// in the lab's topology (emuctl inspect --topology prints it).
func blame(err error, call, added string) error {
	es, ok := err.(Errors)
	if !ok {
		return fmt.Errorf("%s: %w", call, err)
	}
	out := make(Errors, 0, len(es))
	for _, e := range es {
		e2 := &Error{File: call, Path: e.Path, Msg: e.Msg}
		if added != "" && (e.Path == added || strings.HasPrefix(e.Path, added+".") || strings.HasPrefix(e.Path, added+"[")) {
			e2.Path = strings.TrimPrefix(strings.TrimPrefix(e.Path, added), ".")
		}
		out = append(out, e2)
	}
	return out
}

// pinned is the Spec's document, pinned.
func (s *Spec) pinned() (*yaml.Node, error) {
	root, err := s.documentNode()
	if err == nil {
		err = pin(root, s)
	}
	return root, err
}

// documentNode parses the Spec's document (or writes out a generated
// Spec) into its top-level mapping, with aliases of links expanded so
// pinning one link never changes another.
func (s *Spec) documentNode() (*yaml.Node, error) {
	data := s.Document
	if data == nil {
		var err error
		if data, err = Export(s); err != nil {
			return nil, err
		}
	}
	if root := treeOf(data); root != nil {
		return root, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("the lab's document: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the lab's document is not a mapping")
	}
	return doc.Content[0], nil
}

// pin writes the lab's name, every link's interface names and every
// automatic address on a link into the document, so loading it again
// after a change keeps them whatever the change does to the order of
// allocation.
func pin(root *yaml.Node, s *Spec) error {
	name := s.Name
	if s.MACName != "" {
		name = s.MACName // loaded again under the name its MACs came from
	}
	setStr(root, "name", name)
	links := mapValue(root, "links")
	n := 0
	if links != nil {
		if links.Kind != yaml.SequenceNode {
			return fmt.Errorf("the lab's document: links: is not a list")
		}
		n = len(links.Content)
	}
	if n != len(s.Links) {
		return fmt.Errorf("the lab's document has %d links and the lab %d: it cannot be edited", n, len(s.Links))
	}
	for li := range n {
		item := links.Content[li]
		if item.Kind == yaml.AliasNode {
			item = deepCopy(item.Alias)
			links.Content[li] = item
		}
		if item.Kind != yaml.MappingNode {
			return fmt.Errorf("the lab's document: links[%d] is not a mapping", li)
		}
		l := s.Links[li]
		ends := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle,
			Content: []*yaml.Node{strNode(l.A.String()), strNode(l.B.String())}}
		setNode(item, "endpoints", ends)
		ips := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		for _, ep := range []Endpoint{l.A, l.B} {
			node := s.Node(ep.Node)
			ifc := node.Iface(ep.Iface)
			if node.Kind == KindSwitch || ifc == nil || len(ifc.Addrs) == 0 {
				continue
			}
			var as []string
			for _, a := range ifc.Addrs {
				as = append(as, a.String())
			}
			ips.Content = append(ips.Content, strNode(ep.Node), strList(as))
		}
		if len(ips.Content) > 0 {
			setNode(item, "ip", ips)
		} else {
			delKey(item, "ip")
		}
		pinTraces(item, l) // pin_trace.go
	}
	return pinWireless(root, s)
}

// pinWireless writes out the addresses of stations' and routed access
// points' wireless interfaces (wifi: {ip: [...]}): the plan numbers
// wireless segments after every wired one, so a link added later would
// otherwise take a wireless segment's subnet. A station that joins the
// lab's only access point without naming it gets its name written out
// too (wifi: {ap: ...}): an access point added later would leave it
// ambiguous.
func pinWireless(root *yaml.Node, s *Spec) error {
	nodes := mapValue(root, "nodes")
	for i := range s.Nodes {
		n := &s.Nodes[i]
		var iface string
		switch {
		case n.Station != nil:
			iface = n.Station.Iface
		case n.AP != nil && n.AP.Routed:
			iface = n.AP.Iface
		default:
			continue
		}
		ifc := n.Iface(iface)
		var as []string
		if ifc != nil {
			for _, a := range ifc.Addrs {
				as = append(as, a.String())
			}
		}
		st := n.Station
		if len(as) == 0 && (st == nil || st.AP == "") {
			continue
		}
		w, err := wifiEntry(nodes, n.Name)
		if err != nil {
			return err
		}
		if len(as) > 0 {
			setNode(w, "ip", strList(as))
		}
		if st != nil && st.AP != "" && st.Adhoc == "" && !hasKey(w, "ap") && !hasKey(w, "ssid") && !hasKey(w, "adhoc") {
			setStr(w, "ap", st.AP)
		}
	}
	return nil
}

// wifiEntry is node name's wifi: mapping in the document's nodes:, made
// its own (an alias or a merged anchor's block may be shared by several
// nodes) and created when missing, for pinWireless to write in.
func wifiEntry(nodes *yaml.Node, name string) (*yaml.Node, error) {
	if nodes == nil || nodes.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the lab's document: nodes: is not a mapping")
	}
	var entry *yaml.Node
	for k := 0; k+1 < len(nodes.Content); k += 2 {
		if nodes.Content[k].Value == name {
			if nodes.Content[k+1].Kind == yaml.AliasNode {
				nodes.Content[k+1] = deepCopy(nodes.Content[k+1].Alias)
			}
			entry = nodes.Content[k+1]
		}
	}
	if entry == nil || entry.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the lab's document: nodes.%s is not a mapping", name)
	}
	w := mapValue(entry, "wifi")
	if w == nil {
		w = mergedValue(entry, "wifi") // from a << merge key
	}
	if w == nil || w.Kind != yaml.MappingNode {
		w = &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		setNode(entry, "wifi", w)
	} else {
		w = deepCopy(w) // an anchor's block may be shared by several nodes
		setNode(entry, "wifi", w)
	}
	return w, nil
}

// unchanged checks that every node and link of old that is still in
// new is exactly as it was (automatic routes aside: they follow).
func unchanged(old, new *Spec) error {
	newAt := make(map[string]int, len(new.Nodes))
	for i := range new.Nodes {
		newAt[new.Nodes[i].Name] = i
	}
	for i := range old.Nodes {
		on := old.Nodes[i]
		j, ok := newAt[on.Name]
		if !ok {
			continue
		}
		a, b := on, new.Nodes[j]
		if a.AP != nil && b.AP != nil {
			// the stations an AP has follow what is added and removed
			apA, apB := *a.AP, *b.AP
			apA.Stations, apB.Stations = nil, nil
			a.AP, b.AP = &apA, &apB
		}
		a.Interfaces = keptIfaces(a.Interfaces, &new.Nodes[j])
		b.Interfaces = keptIfaces(b.Interfaces, &old.Nodes[i])
		a.Routes, b.Routes = explicitOnly(a.Routes), explicitOnly(b.Routes)
		if reflect.DeepEqual(a, b) {
			continue // the common case; else compare without positions
		}
		if ja, jb := PlaceFree(mustJSON(a)), PlaceFree(mustJSON(b)); ja != jb {
			return fmt.Errorf("node %s would change (was %s, would be %s): run-time changes never alter what is built", on.Name, ja, jb)
		}
	}
	newLink := make(map[[2]Endpoint]int, len(new.Links))
	for i, l := range new.Links {
		if _, dup := newLink[[2]Endpoint{l.A, l.B}]; !dup {
			newLink[[2]Endpoint{l.A, l.B}] = i
		}
	}
	for _, ol := range old.Links {
		k, ok := newLink[[2]Endpoint{ol.A, ol.B}]
		if !ok {
			continue
		}
		nl := new.Links[k]
		ol.Pos, nl.Pos = "", ""
		if reflect.DeepEqual(ol, nl) {
			continue
		}
		if ja, jb := PlaceFree(mustJSON(ol)), PlaceFree(mustJSON(nl)); ja != jb {
			return fmt.Errorf("link %s <-> %s would change (was %s, would be %s)", ol.A, ol.B, ja, jb)
		}
	}
	return nil
}

// keptIfaces are the interfaces in ifs that the same node in the other
// Spec (on) also has (a link's interface is in both Specs, or only in one
// when the link is added or removed); Link indexes are left out, since
// removing a link renumbers the later ones.
func keptIfaces(ifs []Interface, on *Node) []Interface {
	var out []Interface
	for _, ifc := range ifs {
		if on.Iface(ifc.Name) != nil {
			ifc.Link = 0
			ifc.Peer = ""
			out = append(out, ifc)
		}
	}
	return out
}

func explicitOnly(rs []Route) []Route {
	var out []Route
	for _, r := range rs {
		if !r.Auto {
			out = append(out, r)
		}
	}
	return out
}

// placeKeys are the JSON fields of a Spec that say where in its document
// something was written ("file:line:col"), not what it is.
var placeKeys = regexp.MustCompile(`"(pos|at|[a-z_]+_at|[a-z_]+_pos)":"(\\.|[^"\\])*",?`)

// PlaceFree is a Spec's (or a part's) JSON without its positions: two
// documents that describe the same lab give the same text.
func PlaceFree(js string) string {
	return strings.ReplaceAll(placeKeys.ReplaceAllString(js, ""), ",}", "}")
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func nodeNamesOf(s *Spec) []string {
	out := make([]string, len(s.Nodes))
	for i, n := range s.Nodes {
		out[i] = n.Name
	}
	return out
}

// YAML node helpers for the document's top-level mapping and its items.

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func strList(ss []string) *yaml.Node {
	l := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, s := range ss {
		l.Content = append(l.Content, strNode(s))
	}
	return l
}

func hasKey(m *yaml.Node, key string) bool {
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == key {
			return true
		}
	}
	return false
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == key {
			v := m.Content[k+1]
			if v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				// "nodes:" with nothing under it, or "h1:": a mapping to fill
				*v = yaml.Node{Kind: yaml.MappingNode}
			}
			return v
		}
	}
	return nil
}

// mergedValue is key's value in the mappings m merges (<<: *anchor, or
// a list of them), the first that has it; nil when none does.
func mergedValue(m *yaml.Node, key string) *yaml.Node {
	src := mapValue(m, "<<")
	if src == nil {
		return nil
	}
	if src.Kind == yaml.MappingNode {
		return mapValue(src, key)
	}
	for _, c := range src.Content {
		if c.Kind == yaml.AliasNode {
			c = c.Alias
		}
		if v := mapValue(c, key); v != nil {
			return v
		}
	}
	return nil
}

func setNode(m *yaml.Node, key string, v *yaml.Node) {
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == key {
			m.Content[k+1] = v
			return
		}
	}
	m.Content = append(m.Content, strNode(key), v)
}

func setStr(m *yaml.Node, key, v string) {
	n := strNode(v)
	if _, err := strconv.Atoi(v); err == nil {
		n.Tag = "!!int"
	}
	setNode(m, key, n)
}

func delKey(m *yaml.Node, key string) {
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == key {
			m.Content = slices.Delete(m.Content, k, k+2)
			return
		}
	}
}

// cloneTree copies a tree as it is, anchors and aliases included (an
// alias points at the copy of its anchor).
func cloneTree(n *yaml.Node, seen map[*yaml.Node]*yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if c, ok := seen[n]; ok {
		return c
	}
	c := *n
	seen[n] = &c
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			c.Content[i] = cloneTree(k, seen)
		}
	}
	c.Alias = cloneTree(n.Alias, seen)
	return &c
}

func deepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = deepCopy(k)
	}
	if n.Kind == yaml.AliasNode {
		return deepCopy(n.Alias)
	}
	c.Anchor = ""
	return &c
}
