package suite

import (
	"strings"
	"testing"
)

const mediaSuite = `suite: media
params:
  path:
    wired: {medium: "wired stand-in", rate: 10mbit}
    real: {medium: "the real thing", needs: test-cap, replaces: wired, rate: 10mbit}
    other: {rate: 10mbit}
  n: [1, 2]
topology:
  nodes: {h1: {}, h2: {}}
  links:
    - endpoints: [h1, h2]
      link: {rate: "${path.rate}"}
flows:
  - {name: bulk, from: h1, to: h2}
checks:
  - {id: A, class: physics, per: run, expect: goodput <= cap(path.rate)}
`

// TestChooseMedia: a value that needs what the machine has runs instead
// of the stand-in it replaces; where the machine lacks it, the stand-in
// runs and it is left out, saying why; plans count one of the two; the
// report says which ran.
func TestChooseMedia(t *testing.T) {
	has := ""
	capabilities["test-cap"] = func() string { return has }
	defer delete(capabilities, "test-cap")
	s, err := Load("media.yaml", []byte(mediaSuite))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lacks       string
		ran, notRan string
	}{
		{"", "real", "wired"},
		{"needs a test capability", "wired", "real"},
	} {
		has = c.lacks
		capMu.Lock()
		delete(capCache, "test-cap")
		capMu.Unlock()
		p, err := s.Plan("quick", PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Scenarios) != 6 || p.Runs() != 4 {
			t.Fatalf("before the choice: %d scenarios, %d runs counted (want 6 and 4: real counted as wired)", len(p.Scenarios), p.Runs())
		}
		notes, media := p.ChooseMedia()
		if p.Runs() != 4 || len(p.Scenarios) != 4 {
			t.Errorf("after the choice: %d scenarios, %d runs", len(p.Scenarios), p.Runs())
		}
		for _, sc := range p.Scenarios {
			if sc.Labels["path"] == c.notRan {
				t.Errorf("%s ran", sc.Name)
			}
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "path="+c.notRan+" not run (2)") {
			t.Errorf("notes %q", notes)
		}
		if c.lacks != "" && !strings.Contains(notes[0], c.lacks) {
			t.Errorf("note %q does not say what is missing", notes[0])
		}
		if len(media) != 2 {
			t.Fatalf("media %+v", media)
		}
		for _, m := range media {
			if m.Ran != (m.Label == c.ran) || m.Scenarios != 2 {
				t.Errorf("medium %+v: want %s ran", m, c.ran)
			}
		}
		text := mediaText(media)
		if !strings.Contains(text, "**path="+c.ran+" ran**") || !strings.Contains(text, "path="+c.notRan+" did not run") {
			t.Errorf("report text:\n%s", text)
		}
		t.Logf("lacks %q:\n%s", c.lacks, text)
		// once per plan
		if n2, _ := p.ChooseMedia(); len(n2) != 1 {
			t.Errorf("second choice: %q", n2)
		}
	}
}

// TestPlanOnly: --only narrows a parameter within the profile, and names
// what is wrong.
func TestPlanOnly(t *testing.T) {
	capabilities["test-cap"] = func() string { return "" }
	defer delete(capabilities, "test-cap")
	s, err := Load("media.yaml", []byte(mediaSuite))
	if err != nil {
		t.Fatal(err)
	}
	only, err := ParseOnly([]string{"path=real,other", "n=1"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan("quick", PlanOptions{Only: only})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sc := range p.Scenarios {
		names = append(names, sc.Name)
	}
	if strings.Join(names, " ") != "path=real,n=1 path=other,n=1" {
		t.Errorf("scenarios %v", names)
	}
	for _, bad := range [][]string{{"path"}, {"pth=real"}, {"path=rael"}} {
		o, err := ParseOnly(bad)
		if err == nil {
			_, err = s.Plan("quick", PlanOptions{Only: o})
		}
		if err == nil {
			t.Errorf("--only %v accepted", bad)
		} else {
			t.Logf("--only %v: %v", bad, err)
		}
	}
}
