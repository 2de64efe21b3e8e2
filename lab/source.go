package lab

import "github.com/emuctl/emuctl/topo"

// Source is what Up builds a lab from: a *Topology (the builder), a File,
// YAML text, a Generator, or a Spec already resolved (FromSpec). Each
// resolves to a topo.Spec with package topo's rules.
type Source interface {
	Spec() (*topo.Spec, error)
}

// File is a topology file, loaded with topo.LoadFile.
type File string

// Spec loads the file.
func (f File) Spec() (*topo.Spec, error) { return topo.LoadFile(string(f)) }

// YAML is topology text; name stands for the file in messages and gives
// the lab its default name.
func YAML(name string, data []byte) Source { return yamlSource{name, data} }

type yamlSource struct {
	name string
	data []byte
}

func (y yamlSource) Spec() (*topo.Spec, error) { return topo.Load(y.name, y.data) }

// Generator is a Mininet-style generated topology, as `emuctl up --topo`
// builds: Generator("linear,3"), Generator("dumbbell,2", topo.GenOptions{Link:
// "rate=10mbit,delay=5ms"}).
func Generator(gen string, opt ...topo.GenOptions) Source {
	var o topo.GenOptions
	if len(opt) > 0 {
		o = opt[0]
	}
	return genSource{gen, o}
}

type genSource struct {
	gen string
	opt topo.GenOptions
}

func (g genSource) Spec() (*topo.Spec, error) { return topo.Generate(g.gen, g.opt) }

// FromSpec uses a resolved Spec as it is.
func FromSpec(s *topo.Spec) Source { return specSource{s} }

type specSource struct{ s *topo.Spec }

func (s specSource) Spec() (*topo.Spec, error) { return s.s, nil }
