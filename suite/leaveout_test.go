package suite

import (
	"strings"
	"testing"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/traffic"
)

// TestLeavesOutWhatThisMachineLacks: the dctcp and bufferbloat suites plan
// on any machine; a scenario whose congestion control (dctcp) or queue
// discipline (cake: no backend here without sch_cake) this kernel lacks is
// left out with a note saying why, and the others stay — on this
// project's build machines (no tcp_dctcp, no AQM qdiscs) as in the kernel
// lab (everything).
func TestLeavesOutWhatThisMachineLacks(t *testing.T) {
	dctcpMissing := traffic.CheckCC("dctcp") != nil
	cakeMissing := !tc.Probe().AQM[tc.Cake]
	for _, c := range []struct {
		suite   string
		missing bool   // expect the scenario left out
		name    string // its name
		why     string // in its note
		kept    int    // scenarios left
	}{
		{"dctcp", dctcpMissing, "variant=dctcp", `flow f1: congestion control "dctcp" is not available in this kernel`, 1},
		{"bufferbloat", cakeMissing, "queue=1000,aqm=cake", "cake", 7},
	} {
		t.Run(c.suite, func(t *testing.T) {
			s, err := LoadBuiltin(c.suite)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Plan("quick", PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			all := len(p.Scenarios)
			notes := p.LeaveOutUnavailable()
			if again := p.LeaveOutUnavailable(); len(again) != len(notes) || len(p.Scenarios) != all-len(notes) {
				t.Errorf("a second call changed the plan: notes %q then %q, %d scenarios", notes, again, len(p.Scenarios))
			}
			if p.Runs() != len(p.Scenarios)*p.Profile.Reps {
				t.Errorf("Runs() %d, want %d × %d: the count must be of what will run", p.Runs(), len(p.Scenarios), p.Profile.Reps)
			}
			var names []string
			for _, sc := range p.Scenarios {
				names = append(names, sc.Name)
			}
			t.Logf("%s on this machine: %d of %d scenarios planned %v; notes %q", c.suite, len(p.Scenarios), all, names, notes)
			if !c.missing {
				if len(notes) != 0 || len(p.Scenarios) != all {
					t.Errorf("this machine has what %s needs, yet: %q", c.name, notes)
				}
				return
			}
			want := "scenario " + c.name + " not run: not available on this machine ("
			if len(notes) != 1 || !strings.HasPrefix(notes[0], want) || !strings.Contains(notes[0], c.why) {
				t.Errorf("notes %q, want one starting %q and naming %q", notes, want, c.why)
			}
			if len(p.Scenarios) != c.kept || all != c.kept+1 {
				t.Errorf("%d of %d scenarios kept, want %d of %d", len(p.Scenarios), all, c.kept, c.kept+1)
			}
			for _, n := range names {
				if n == c.name {
					t.Errorf("%s still planned", c.name)
				}
			}
		})
	}
}
