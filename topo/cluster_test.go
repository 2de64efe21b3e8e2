package topo

import (
	"strings"
	"testing"
)

// graphOf is a Spec's links as a graph, weighted by rate (unshaped: 1).
func graphOf(t *testing.T, gen string) (*Spec, []WEdge) {
	t.Helper()
	s, err := Generate(gen, GenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	idx := map[string]int{}
	for i, n := range s.Nodes {
		idx[n.Name] = i
	}
	var es []WEdge
	for _, l := range s.Links {
		es = append(es, WEdge{A: idx[l.A.Node], B: idx[l.B.Node], W: 1})
	}
	return s, es
}

// TestPartitionKnownCuts: balanced parts with the minimal cut on graphs
// whose optimum is known.
func TestPartitionKnownCuts(t *testing.T) {
	for _, c := range []struct {
		gen  string
		k    int
		cut  float64
		size []int
	}{
		{"linear,4", 2, 1, []int{4, 4}}, // s1-s2 | s3-s4, each with its host
		{"linear,6", 3, 2, []int{4, 4, 4}},
		{"linear,10", 2, 1, []int{10, 10}},
		{"tree,2,2", 2, 1, []int{4, 3}},    // root with one subtree | the other
		{"tree,2,3", 3, 2, []int{5, 4, 4}}, // root with one subtree, two subtrees
		{"tree,3,2", 2, 1, []int{8, 7}},    // root + left half | right half
		{"single,6", 2, 3, []int{4, 3}},    // a star: every part but the hub's costs its leaves
	} {
		s, es := graphOf(t, c.gen)
		part := Partition(len(s.Nodes), c.k, es, nil)
		size := make([]int, c.k)
		for _, p := range part {
			size[p]++
		}
		if got := CutWeight(part, es); got != c.cut {
			var b strings.Builder
			for i, n := range s.Nodes {
				b.WriteString(n.Name + "=" + string(rune('0'+part[i])) + " ")
			}
			t.Errorf("%s over %d: cut %v, want %v (%s)", c.gen, c.k, got, c.cut, b.String())
		}
		for p := range size {
			if size[p] != c.size[p] {
				t.Errorf("%s over %d: part sizes %v, want %v", c.gen, c.k, size, c.size)
				break
			}
		}
	}
}

// TestPartitionCutsSlowLinks: with weights by rate, the 10 Mbit/s link of
// a ring of 1 Gbit/s links is cut rather than a fast one; pinned vertices
// stay put.
func TestPartitionCutsSlowLinks(t *testing.T) {
	// ring 0-1-2-3-4-5-0; 2-3 and 5-0 slow: the cut that halves it there costs 2 x 10M.
	es := []WEdge{{0, 1, 1e9}, {1, 2, 1e9}, {2, 3, 1e7}, {3, 4, 1e9}, {4, 5, 1e9}, {5, 0, 1e7}}
	part := Partition(6, 2, es, nil)
	if got := CutWeight(part, es); got != 2e7 {
		t.Errorf("cut %v (parts %v), want the two slow links (2e7)", got, part)
	}
	pin := []int{1, -1, -1, -1, -1, 0}
	part = Partition(6, 2, es, pin)
	if part[0] != 1 || part[5] != 0 {
		t.Errorf("pinned vertices moved: %v", part)
	}
}

// TestClusterResolve: auto placement of a file, VNIs per cut link from
// vni_base, the underlay MTU check passing at 1550, a worker's slice.
func TestClusterResolve(t *testing.T) {
	src := `
machines:
  m1: {ssh: local, underlay: 192.168.100.1}
  m2: {ssh: local, underlay: 192.168.100.2, mtu: 1550}
placement: auto
tunnel: {vni_base: 500}
nodes:
  h1: {machine: m1}
  s1: {kind: switch}
  s2: {kind: switch}
  h2: {}
links:
  - endpoints: [h1, s1]
  - endpoints: [s1, s2]
    link: {rate: 10mbit}
  - endpoints: [s2, h2]
`
	s, err := Load("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cluster
	if c.Placement != "auto" || c.Port != DefaultVXLANPort {
		t.Errorf("placement %q port %d", c.Placement, c.Port)
	}
	want := map[string]string{"h1": "m1", "s1": "m1", "s2": "m2", "h2": "m2"}
	for n, m := range want {
		if c.Nodes[n] != m {
			t.Errorf("%s on %s, want %s (all: %v)", n, c.Nodes[n], m, c.Nodes)
		}
	}
	if len(c.Cuts) != 1 || c.Cuts[0] != (Cut{Link: 1, VNI: 500, A: "m1", B: "m2"}) {
		t.Errorf("cuts %+v, want the 10 Mbit/s link with VNI 500", c.Cuts)
	}
	if c.Machine("m1").MTU != DefaultLocalMTU {
		t.Errorf("local machine's default MTU %d", c.Machine("m1").MTU)
	}
	sl := s.SliceFor("m2")
	if !sl.Here("s2") || sl.Here("s1") || !s.Here("s1") || s.Cluster.Slice != "" {
		t.Errorf("slice: Here wrong or the original changed")
	}
}

// TestClusterExamplePlacement: topologies/cluster-linear.yaml's automatic
// placement cuts its 10 Mbit/s link alone, leaving 4 and 2 nodes (within
// the 10 % imbalance) rather than also cutting an unshaped host link to
// make 3 and 3.
func TestClusterExamplePlacement(t *testing.T) {
	s, err := LoadFile("../topologies/cluster-linear.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cluster
	if len(c.Cuts) != 1 || c.Cuts[0].Link != 4 || c.Cuts[0].VNI != DefaultVNIBase {
		t.Fatalf("cuts %+v (placement %v), want only link 4 (s3 - s2) with VNI %d", c.Cuts, c.Nodes, DefaultVNIBase)
	}
	if c.Nodes["h3"] != c.Nodes["s3"] || c.Nodes["s2"] == c.Nodes["s3"] || c.Nodes["h1"] != c.Nodes["s2"] {
		t.Errorf("placement %v", c.Nodes)
	}
}
