package topo

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/emuctl/emuctl/units"
)

// TestTracesAndSchedules loads a topology with a traced link, a
// Pantheon-style mahimahi: line and a schedule with a ramp and a repeat,
// and checks what the Spec says.
func TestTracesAndSchedules(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("up.trace", "1\n1\n5\n10\n")
	write("down.trace", "0\n2\n4\n8\n")
	write("lab.yaml", `
nodes: {ue: {}, enb: {kind: router}, srv: {}, cl: {}, sv: {}}
links:
  - name: radio
    endpoints: [ue, enb]
    link:
      delay: 20ms
      a->b: {trace: {file: up.trace, loop: true}, queue: 100}
      b->a: {trace: {file: down.trace, offset: 3s}, queue: {discipline: drophead, limit: 150}}
  - name: core
    endpoints: [enb, srv]
    link: {rate: 10mbit, delay: 5ms}
  - endpoints: [cl, sv]
    link: {mahimahi: "mm-delay 28 mm-loss uplink 0.0477 mm-link up.trace down.trace --uplink-queue=droptail --uplink-queue-args=\"packets=14\""}
schedules:
  - name: handover
    link: core
    repeat: {every: 60s, count: 3}
    steps:
      - {at: 0s, set: {rate: 10mbit}}
      - {at: 10s, a->b: {rate: 2mbit}}
      - {at: 30s, state: down}
      - {at: 32s, state: up}
      - {at: 40s, link: enb-srv, ramp: {to: {rate: 1mbit, loss: 1%}, over: 10s, steps: 5}}
  - name: blackhole
    t0: manual
    steps:
      - {at: 1s, link: radio, set: {loss: 100%}}
`)
	spec, err := LoadFile(filepath.Join(dir, "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	radio := spec.Links[0]
	up, down := radio.Params.Dir(true), radio.Params.Dir(false)
	if radio.Name != "radio" || up.Trace == nil || !slices.Equal(up.Trace.Ms, []uint32{1, 1, 5, 10}) || !up.Trace.Loop || up.Queue.Packets != 100 || up.Delay != 20*time.Millisecond || up.Order != nil {
		t.Errorf("radio a->b: %+v", up)
	}
	if down.Trace == nil || down.Trace.Offset != 3*time.Second || down.Queue.Discipline != QueueDropHead || down.Queue.Packets != 150 {
		t.Errorf("radio b->a: %+v %+v", down, down.Queue)
	}
	mm := spec.Links[2].Params
	mu, md := mm.Dir(true), mm.Dir(false)
	if mu.Trace == nil || mu.Delay != 28*time.Millisecond || mu.Loss != 4.77 || mu.Queue == nil || mu.Queue.Packets != 14 || !slices.Equal(mu.Order, []string{"link", "loss", "delay"}) {
		t.Errorf("mahimahi uplink: %+v", mu)
	}
	if md.Trace == nil || md.Loss != 0 || md.Queue != nil || !slices.Equal(md.Order, []string{"delay", "link", "loss"}) || !slices.Equal(md.Trace.Ms, []uint32{0, 2, 4, 8}) {
		t.Errorf("mahimahi downlink: %+v", md)
	}
	h := spec.Schedule("handover")
	if h == nil || h.T0 != T0Up || h.Repeat.Every != time.Minute || h.Repeat.Count != 3 || len(h.Steps) != 4+10 {
		t.Fatalf("handover: %+v", h)
	}
	if s := h.Steps[1]; s.Dir != "a->b" || *s.Set.Rate != 2*units.Mbit || s.Link != 1 {
		t.Errorf("step 1: %+v", s)
	}
	if h.Steps[2].State != "down" || h.Steps[3].State != "up" {
		t.Errorf("state steps: %+v %+v", h.Steps[2], h.Steps[3])
	}
	// the ramp starts apart (a->b at 2 Mbit/s, b->a at 10): each direction ramps on its own
	var ab []Step
	for _, s := range h.Steps[4:] {
		if s.Dir == "a->b" {
			ab = append(ab, s)
		}
	}
	if len(ab) != 5 || ab[0].At != 42*time.Second || *ab[0].Set.Rate != 1_800_000 || *ab[0].Set.Loss != 0.2 || ab[4].At != 50*time.Second || *ab[4].Set.Rate != units.Mbit || ab[4].Ramp != "5/5" {
		t.Errorf("a->b ramp: %v", ab)
	}
	if b := h.Steps[5]; b.Dir != "b->a" || *b.Set.Rate != 8_200_000 {
		t.Errorf("b->a ramp starts %v", b)
	}
	if m := spec.Schedule("blackhole"); m == nil || m.T0 != T0Manual || m.Steps[0].Link != 0 || *m.Steps[0].Set.Loss != 100 {
		t.Errorf("blackhole: %+v", m)
	}
	t.Logf("handover steps: %v", h.Steps)
}
