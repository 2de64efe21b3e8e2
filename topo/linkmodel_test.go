package topo

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/units"
)

// TestLinkModelFields checks the Go fields behind testdata/good/linkmodel.yaml
// (its golden file checks the rendering): defaults, overrides, the loss/ge
// replacement and the per-direction merge.
func TestLinkModelFields(t *testing.T) {
	s := mustLoad(t, "testdata/good/linkmodel.yaml")
	ms := time.Millisecond
	want := []*LinkParams{
		nil,
		{Delay: 10 * ms, Jitter: 2 * ms, JitterDist: JitterNormal, Reorder: true, Backend: BackendUserspace},
		{Delay: 10 * ms, Jitter: 2 * ms, JitterDist: JitterPareto, Backend: BackendKernel},
		{
			Rate: 10e6, Loss: 1, Duplicate: 0.1, Corrupt: 0.01, Backend: BackendUserspace,
			AtoB: &LinkParams{Rate: 10e6, GE: &units.GilbertElliott{P: 1, R: 25, BadLoss: 100}, Duplicate: 0.1, Corrupt: 0.01, Backend: BackendUserspace},
			BtoA: &LinkParams{Rate: 10e6, GE: &units.GilbertElliott{P: 0.5, R: 10, BadLoss: 80, GoodLoss: 0.1}, Duplicate: 0.1, Corrupt: 0.01, Backend: BackendUserspace},
		},
		{
			GE: &units.GilbertElliott{P: 2, R: 30, BadLoss: 90, GoodLoss: 0.5}, Backend: BackendUserspace,
			AtoB: &LinkParams{Loss: 3, Backend: BackendUserspace},
		},
		{
			Delay: 5 * ms, Jitter: ms, JitterDist: JitterUniform, Reorder: true, Backend: BackendUserspace,
			BtoA: &LinkParams{Delay: 5 * ms, Backend: BackendUserspace},
		},
		{
			Delay: 5 * ms, Backend: BackendUserspace,
			AtoB: &LinkParams{Delay: 5 * ms, Jitter: 3 * ms, JitterDist: JitterPareto, Reorder: true, Backend: BackendUserspace},
		},
		{Delay: 20 * ms, Jitter: 5 * ms, JitterDist: JitterNormal, GE: &units.GilbertElliott{P: 1, R: 25, BadLoss: 100}, Duplicate: 1, Corrupt: 0.5, Backend: BackendAuto},
		nil,
		{Rate: 1e6, Queue: &Queue{Packets: 20}, Backend: BackendKernel},
	}
	if len(s.Links) != len(want) {
		t.Fatalf("%d links, want %d", len(s.Links), len(want))
	}
	for i, l := range s.Links {
		if !reflect.DeepEqual(l.Params, want[i]) {
			got, _ := json.Marshal(l.Params)
			exp, _ := json.Marshal(want[i])
			t.Errorf("links[%d]:\n got %s\nwant %s", i, got, exp)
		}
	}
	// Dir: the direction without an override is the symmetric part.
	if d := s.Links[4].Params.Dir(false); d.GE == nil || d.Loss != 0 || d.AtoB != nil {
		t.Errorf("links[4] b->a: %+v", d)
	}
	if d := s.Links[4].Params.Dir(true); d.GE != nil || d.Loss != 3 {
		t.Errorf("links[4] a->b: %+v", d)
	}
}

func TestLinkParamsJSON(t *testing.T) {
	p := &LinkParams{Delay: time.Millisecond, Jitter: time.Millisecond, JitterDist: JitterNormal, Reorder: true,
		GE: &units.GilbertElliott{P: 1, R: 25, BadLoss: 100}, Duplicate: 1, Corrupt: 2, Backend: BackendKernel}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"delay":1000000,"jitter":1000000,"jitter_dist":"normal","reorder":true,"ge":{"p_pct":1,"r_pct":25,"bad_loss_pct":100,"good_loss_pct":0},"duplicate_pct":1,"corrupt_pct":2,"backend":"kernel"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestParseLinkParamsModel(t *testing.T) {
	full := "rate=10mbit,delay=5ms,jitter=1ms,jitter_dist=pareto,reorder=true,ge=1%/25%/90%/0.1%,duplicate=0.5%,corrupt=0.01%,queue=100,backend=userspace"
	p, err := ParseLinkParams(full)
	if err != nil {
		t.Fatal(err)
	}
	want := LinkParams{Rate: 10e6, Delay: 5 * time.Millisecond, Jitter: time.Millisecond, JitterDist: JitterPareto, Reorder: true,
		GE: &units.GilbertElliott{P: 1, R: 25, BadLoss: 90, GoodLoss: 0.1}, Duplicate: 0.5, Corrupt: 0.01, Queue: &Queue{Packets: 100}, Backend: BackendUserspace}
	if !reflect.DeepEqual(*p, want) {
		t.Errorf("got %+v", p)
	}
	if p.String() != full {
		t.Errorf("String() = %q", p.String())
	}
	for _, s := range []string{
		full,
		"delay=5ms,jitter=1ms,reorder=false,loss=0.00001%",
		"delay=1s,jitter=500ms,jitter_dist=normal,ge=0%/100%,duplicate=100,corrupt=0",
		"rate=1mbit,backend=kernel",
	} {
		a, err := ParseLinkParams(s)
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		b, err := ParseLinkParams(a.String())
		if err != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("round trip %q -> %q: %+v %v", s, a.String(), b, err)
		}
	}
	// backend alone (and explicit defaults) shape nothing.
	for _, s := range []string{"backend=userspace", "reorder=false"} {
		if p, err := ParseLinkParams(s); p != nil || err != nil {
			t.Errorf("%q: %+v %v", s, p, err)
		}
	}
	for in, msg := range map[string]string{
		"jitter_dist=normal":                     "jitter_dist normal without jitter does nothing",
		"delay=5ms,jitter=0,jitter_dist=normal":  "jitter_dist normal without jitter",
		"delay=5ms,reorder=true":                 "reorder: true without jitter does nothing",
		"delay=5ms,jitter=1ms,jitter_dist=gauss": `unknown jitter distribution "gauss" (valid: uniform, normal, pareto)`,
		"delay=5ms,jitter=1ms,reorder=yes":       `reorder "yes" is not true or false`,
		"loss=1%,ge=1%/25%":                      "loss and ge are alternatives",
		"ge=1%":                                  "is not p/r[/bad_loss[/good_loss]]",
		"ge=1%/0%":                               "r 0% never leaves the bad state",
		"ge=1%/25%/101%":                         `bad_loss: percentage "101%" is out of range`,
		"duplicate=-1":                           `percentage "-1" is not a number`,
		"corrupt=200%":                           `percentage "200%" is out of range`,
		"backend=netem":                          `unknown backend "netem" (valid: auto, kernel, userspace)`,
		"backend=user":                           `did you mean "userspace"?`,
		"gemodel=1%":                             "ge: {p, r, bad_loss, good_loss}",
		"distribution=normal":                    "jitter_dist",
		"qdisc=netem":                            "use backend",
		"jiter=1ms":                              `did you mean "jitter"?`,
	} {
		if _, err := ParseLinkParams(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseLinkParams(%q) = %v, want error containing %q", in, err, msg)
		}
	}
}

// TestLinkModelGenerate: --link carries the new keys to every generated
// link, and rejects what the YAML block rejects.
func TestLinkModelGenerate(t *testing.T) {
	s, err := Generate("linear,2", GenOptions{Link: "delay=5ms,jitter=1ms,jitter_dist=normal,ge=1%/25%,backend=userspace"})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range s.Links {
		if l.Params == nil || l.Params.JitterDist != JitterNormal || l.Params.GE == nil || l.Params.Backend != BackendUserspace {
			t.Errorf("links[%d]: %+v", i, l.Params)
		}
	}
	if _, err := Generate("linear,2", GenOptions{Link: "delay=5ms,reorder=true"}); err == nil || !strings.Contains(err.Error(), "reorder: true without jitter") {
		t.Errorf("got %v", err)
	}
}

// FuzzParseLinkParams: the --link parser never panics, never accepts loss
// with ge or jitter qualifiers without jitter, and what it accepts renders
// back (String) to a string that parses to the same parameters.
func FuzzParseLinkParams(f *testing.F) {
	for _, s := range []string{
		"rate=10mbit,delay=5ms,jitter=1ms,jitter_dist=pareto,reorder=true,ge=1%/25%/90%/0.1%,duplicate=0.5%,corrupt=0.01%,queue=100,backend=userspace",
		"delay=5ms,jitter=1ms,loss=1%", "ge=1/2", "queue=2bdp,rate=1mbit,delay=1ms", "backend=kernel", "reorder=false",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseLinkParams(s)
		if err != nil || p == nil {
			return
		}
		if p.Loss != 0 && p.GE != nil || p.JitterDist != "" && p.Jitter == 0 || p.Reorder && p.Jitter == 0 {
			t.Fatalf("%q: inconsistent %+v", s, p)
		}
		back, err := ParseLinkParams(p.String())
		if back == nil { // all zero ("loss=0") renders as ""
			back = &LinkParams{}
		}
		if err != nil || !reflect.DeepEqual(p, back) {
			t.Fatalf("%q -> %q -> %+v, %v", s, p.String(), back, err)
		}
	})
}
