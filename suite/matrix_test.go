package suite

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const matrixSuite = `suite: tsu-matrix
params:
  rate: [10mbit, 20mbit, 40mbit]
  mode:
    plain: {cc: reno, probe: false}
    probed: {cc: cubic, probe: true}
exclude:
  - {rate: 20mbit, mode: probed}
profiles:
  quick: {duration: 5s, reps: 2, params: {rate: [10mbit, 40mbit]}}
topology:
  nodes: {h1: {}, h2: {}, r1: {kind: router}}
  links:
    - endpoints: [h1, r1]
      link: {rate: "${rate}", delay: 2ms}
    - endpoints: [r1, h2]
      link: "rate=${rate},delay=3ms"
flows:
  - {name: bulk, from: h1, to: h2, cc: "${mode.cc}"}
  - {name: ping, when: {mode: probed}, from: h2, to: h1, proto: udp, rate: 64kbit, probe: icmp, duration: "${duration}"}
checks:
  - {id: C1, class: physics, per: run, expect: "goodput[bulk] <= cap(rate)"}
`

func TestMatrixExpansion(t *testing.T) {
	s, err := Load("m.yaml", []byte(matrixSuite))
	if err != nil {
		t.Fatal(err)
	}
	def, err := s.Plan("default", PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sc := range def.Scenarios {
		names = append(names, sc.Name)
	}
	want := "rate=10mbit,mode=plain rate=10mbit,mode=probed rate=20mbit,mode=plain rate=40mbit,mode=plain rate=40mbit,mode=probed"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("default scenarios:\n got %s\nwant %s", got, want)
	}
	quick, _ := s.Plan("quick", PlanOptions{})
	if len(quick.Scenarios) != 4 || quick.Runs() != 8 || quick.Profile.Duration != 5*time.Second {
		t.Errorf("quick: %d scenarios, %d runs, %v", len(quick.Scenarios), quick.Runs(), quick.Profile.Duration)
	}
	if p, _ := s.Plan("quick", PlanOptions{Reps: 5}); p.Runs() != 20 {
		t.Errorf("--reps 5: %d runs", p.Runs())
	}
	for _, sc := range def.Scenarios {
		l := sc.Spec.Links[1].Params
		if l == nil || l.Rate == 0 || sc.Spec.Links[0].Params.Rate != l.Rate {
			t.Errorf("%s: rates not substituted: %+v", sc.Name, l)
		}
		probed := sc.Labels["mode"] == "probed"
		if (len(sc.Flows) == 2) != probed {
			t.Errorf("%s: %d flows (when: not applied)", sc.Name, len(sc.Flows))
		}
		if want := map[bool]string{true: "cubic", false: "reno"}[probed]; sc.Flows[0].Sock.CC != want {
			t.Errorf("%s: cc %q, want %q", sc.Name, sc.Flows[0].Sock.CC, want)
		}
		if probed && sc.Flows[1].Duration != 30*time.Second {
			t.Errorf("%s: ${duration} gave %v", sc.Name, sc.Flows[1].Duration)
		}
		if !strings.HasPrefix(sc.Flows[0].Pos, "m.yaml:19:") {
			t.Errorf("%s: flow position %q does not point into the suite file", sc.Name, sc.Flows[0].Pos)
		}
	}
}

func TestMatrixPositionsKept(t *testing.T) {
	// A bad value reached through a parameter is reported where the
	// value is written; a bad key inside the template where it is.
	bad := strings.Replace(matrixSuite, "rate: [10mbit, 20mbit, 40mbit]", "rate: [10mbit, 20mbps, 40mbit]", 1)
	bad = strings.Replace(bad, "link: {rate: \"${rate}\", delay: 2ms}", "link: {rate: \"${rate}\", dealy: 2ms}", 1)
	_, err := Load("m.yaml", []byte(bad))
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		`m.yaml:3:18: topology.links[0].link.rate: rate "20mbps" is in bytes per second`,
		`m.yaml:15:31: topology.links[0].link.dealy: unknown key "dealy"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
	}
	if n := strings.Count(err.Error(), `"dealy"`); n != 1 {
		t.Errorf("the same problem is reported %d times (once per scenario?)", n)
	}
}

func TestBuiltinsLoadAndFitTheQuickBudget(t *testing.T) {
	names := Builtins()
	for _, want := range []string{"asym-mptcp", "bufferbloat", "cc-mlo", "sack-reno", "tack", "wifi-physics"} {
		if !slices.Contains(names, want) {
			t.Errorf("built-in suite %s missing (have %v)", want, names)
		}
	}
	for _, n := range names {
		s, err := LoadBuiltin(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if s.Name != n || s.Title == "" || s.Source == "" {
			t.Errorf("%s: name %q, title %q, source %q", n, s.Name, s.Title, s.Source)
		}
		q, err := s.Plan("quick", PlanOptions{})
		if err != nil {
			t.Errorf("%s quick: %v", n, err)
			continue
		}
		if est := q.Estimate(); est > 4*time.Minute+30*time.Second {
			t.Errorf("%s: quick profile estimated at %v (budget 5 min including retries)", n, est)
		}
		classes := map[string]int{}
		for _, c := range s.Checks {
			classes[c.Class]++
		}
		for _, cl := range []string{Physics, Fidelity, Behaviour, Reference} {
			if classes[cl] == 0 {
				t.Errorf("%s: no %s check", n, cl)
			}
		}
	}
	if _, err := LoadBuiltin("asym-mtpcp"); err == nil || !strings.Contains(err.Error(), `did you mean "asym-mptcp"`) {
		t.Errorf("unknown suite: %v", err)
	}
}

func TestIsSuite(t *testing.T) {
	if !IsSuite([]byte(matrixSuite)) || IsSuite([]byte("nodes: {h1: {}}\n")) || IsSuite([]byte("::")) {
		t.Error("IsSuite")
	}
}
