// Package lab is emuctl's Go API. This part is the topology builder: a
// lab described in Go, beside YAML files.
//
//	t := lab.NewTopology("demo").
//		Host("h1").Host("h2").Switch("s1").
//		Link("h1", "s1", lab.Rate(10*units.Mbit), lab.Delay(5*time.Millisecond)).
//		Link("h2", "s1")
//	spec, err := t.Spec() // the topo.Spec `emuctl up` would build
//
// The builder writes the YAML document a user would write and loads it
// with package topo, so a Go topology and a file obey one set of rules
// and give one Spec (Topology.YAML shows the file), and bad input gets
// topo's messages, naming the builder call instead of a line.
package lab
