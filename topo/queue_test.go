package topo

import (
	"strings"
	"testing"
	"time"
)

func TestQueueDisciplineYAML(t *testing.T) {
	src := `version: 1
nodes: {h1: {}, h2: {}, r1: {kind: router}}
defaults:
  link: {queue: {discipline: fq_codel}}
links:
  - endpoints: [h1, r1]
    link:
      rate: 10mbit
      a->b: {queue: {discipline: codel, limit: 1000, target: 2ms, interval: 50ms, ecn: true}}
      b->a: {queue: "red limit 400 min 20 max 60 probability 10% weight 0.002 ecn gentle"}
  - endpoints: [h2, r1]
    link: {rate: 10mbit}
  - endpoints: [h2, r1]
    link: {rate: 10mbit, queue: 100}
`
	s, err := Load("q.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ab, ba := s.Links[0].Params.Dir(true), s.Links[0].Params.Dir(false)
	q := ab.Queue
	if q.Discipline != QueueCoDel || q.Packets != 1000 || q.Target != 2*time.Millisecond || q.Interval != 50*time.Millisecond || q.ECN == nil || !*q.ECN {
		t.Errorf("a->b queue %+v", q)
	}
	if !strings.HasPrefix(q.At, "q.yaml:9:") {
		t.Errorf("queue position %q", q.At)
	}
	r := ba.Queue
	if r.Discipline != QueueRED || r.Packets != 400 || r.Min.Packets != 20 || r.Max.Packets != 60 || r.Probability != 10 || r.Weight != 1.0/512 || !r.Gentle || !*r.ECN {
		t.Errorf("b->a queue %+v", r)
	}
	if got := s.Links[1].Params.Queue; got.Discipline != QueueFQCoDel || got.ECN != nil {
		t.Errorf("defaults.link queue on link 1: %+v", got)
	}
	if got := s.Links[2].Params.Queue; got.hasDiscipline() || got.Packets != 100 {
		t.Errorf("plain queue: 100 must stay a drop-tail limit: %+v", got)
	}
	// the string form round-trips
	for _, in := range []string{"codel limit 1000 target 2ms interval 50ms ecn", "pie limit 500 target 20ms tupdate 30ms alpha 0.25 beta 2 noecn",
		"red limit 150000b min 20 max 60 probability 10% weight 0.001953125 gentle ecn", "fq_codel flows 64 quantum 300", "drophead limit 50", "100", "2bdp"} {
		q, err := ParseQueue(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if q.String() != in {
			t.Errorf("%q renders as %q", in, q.String())
		}
	}
	for in, want := range map[string]string{
		"codel limit":        "limit needs a value",
		"codel limit 1MB":    "counts packets",
		"sfq":                `unknown queue discipline "sfq"`,
		"cake limit 100":     "memory limit in bytes",
		"droptail ecn":       "cannot mark ECN",
		"pie interval 100ms": "pie has no parameter interval",
	} {
		if _, err := ParseQueue(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	p, err := ParseLinkParams("rate=10mbit,queue=fq_codel limit 500 ecn")
	if err != nil || p.Queue.Discipline != QueueFQCoDel || p.Queue.Packets != 500 {
		t.Errorf("--link syntax: %+v, %v", p, err)
	}
}
