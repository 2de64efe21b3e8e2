package topo

import (
	"bytes"
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Export writes a Spec that has no document of its own (a generated one)
// as a topology document that loads back to the same Spec: addressing,
// routing, nodes with their kinds, switch types, sysctls, environment,
// start commands and explicit routes, links with interface names,
// addresses, MTU and parameters. What it cannot write (Wi-Fi nodes,
// schedules, labs over several machines, TCP profiles and MPTCP blocks,
// OVS settings beyond the switch type) is refused, naming it; a Spec
// loaded from a document has Spec.Document for that.
func Export(s *Spec) ([]byte, error) {
	switch {
	case s.Cluster != nil:
		return nil, fmt.Errorf("the lab runs over several machines: its topology cannot be written out")
	case s.WiFiMedium != nil || s.WiFiDaemons != nil:
		return nil, fmt.Errorf("the lab has Wi-Fi nodes: a generated Wi-Fi topology cannot be written out (write it as a file)")
	case len(s.Schedules) > 0:
		return nil, fmt.Errorf("the lab has schedules: its topology cannot be written out")
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	setStr(root, "name", s.Name)
	if a := s.Addressing; a != nil {
		m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		setStr(m, "pool", a.Pool.String())
		setStr(m, "prefix", strconv.Itoa(a.Prefix))
		setStr(m, "p2p_prefix", strconv.Itoa(a.P2P))
		if a.Pool6.IsValid() {
			setStr(m, "pool6", a.Pool6.String())
		}
		if !a.Auto {
			setNode(m, "auto", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false"})
		}
		setNode(root, "addressing", m)
	}
	if s.Routing != "" {
		setStr(root, "routing", s.Routing)
	}
	nodes := &yaml.Node{Kind: yaml.MappingNode}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		switch {
		case n.AP != nil || n.Station != nil:
			return nil, fmt.Errorf("node %s is a Wi-Fi node: a generated Wi-Fi topology cannot be written out", n.Name)
		case n.MPTCP != nil:
			return nil, fmt.Errorf("node %s has an mptcp: block: a generated topology with one cannot be written out", n.Name)
		case n.TCP != nil:
			return nil, fmt.Errorf("node %s has a TCP profile: a generated topology with one cannot be written out", n.Name)
		}
		body := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		setStr(body, "kind", string(n.Kind))
		if n.Kind == KindSwitch {
			setStr(body, "type", n.SwitchType)
			if n.STP {
				setNode(body, "stp", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
			}
		}
		if len(n.Sysctls) > 0 {
			setNode(body, "sysctls", kvMap(n.Sysctls))
		}
		if len(n.Env) > 0 {
			setNode(body, "env", kvMap(n.Env))
		}
		if len(n.Start) > 0 {
			setNode(body, "start", strList(n.Start))
		}
		var routes []string
		for _, r := range explicitOnly(n.Routes) {
			line := r.Dst.String()
			if r.Via.IsValid() {
				line += " via " + r.Via.String()
			}
			if r.Dev != "" {
				line += " dev " + r.Dev
			}
			routes = append(routes, line)
		}
		if len(routes) > 0 {
			setNode(body, "routes", strList(routes))
		}
		nodes.Content = append(nodes.Content, strNode(n.Name), body)
	}
	setNode(root, "nodes", nodes)
	links := &yaml.Node{Kind: yaml.SequenceNode}
	for _, l := range s.Links {
		body := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		if l.Name != "" {
			setStr(body, "name", l.Name)
		}
		// endpoints and ip: pin (edit.go) writes them
		if mtu := s.Node(l.A.Node).Iface(l.A.Iface); mtu != nil && mtu.MTU > 0 && mtu.MTU != 1500 {
			setStr(body, "mtu", strconv.Itoa(mtu.MTU))
		}
		if p := l.Params; p != nil {
			if p.Trace != nil {
				return nil, fmt.Errorf("link %s <-> %s replays a trace: its topology cannot be written out", l.A, l.B)
			}
			if p.AtoB == nil && p.BtoA == nil {
				setStr(body, "link", p.String())
			} else {
				m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
				a, b := p.Dir(true), p.Dir(false)
				setStr(m, keyAtoB, a.String())
				setStr(m, keyBtoA, b.String())
				setNode(body, "link", m)
			}
		}
		links.Content = append(links.Content, body)
	}
	setNode(root, "links", links)
	if err := pin(root, s); err != nil {
		return nil, err
	}
	return encodeDoc(root)
}

// plainKeys drops the quotes JSON gave strings: the encoder quotes again
// the ones that would read as something else.
func plainKeys(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		n.Style &^= yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle
	}
	for _, c := range n.Content {
		plainKeys(c)
	}
}

func kvMap(kvs []KV) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	for _, kv := range kvs {
		m.Content = append(m.Content, strNode(kv.Key), strNode(kv.Value))
	}
	return m
}

// Topology returns the lab as it stands as a topology document `up`
// accepts: its document with every link's interfaces and addresses
// written out, or a generated Spec exported.
func Topology(s *Spec) ([]byte, error) {
	root, err := s.pinned()
	if err != nil {
		return nil, err
	}
	setStr(root, "name", s.Name) // a file for a lab of this name
	return encodeDoc(root)
}

// encodeDoc writes a top-level mapping as a YAML document; one written as
// JSON (or flow YAML) gets its top level, nodes: and links: in block
// style, each node and link on a line of its own, as a person would
// write it.
func encodeDoc(root *yaml.Node) ([]byte, error) {
	if root.Style&yaml.FlowStyle != 0 { // written as JSON or flow YAML
		root.Style = 0
		plainKeys(root)
		for k := 1; k < len(root.Content); k += 2 {
			v := root.Content[k]
			switch root.Content[k-1].Value {
			case "nodes":
				v.Style = 0
			case "links":
				v.Style = 0
				for _, item := range v.Content {
					item.Style = 0
				}
			}
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
