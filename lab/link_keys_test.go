package lab_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/lab"
)

// AddLinkKeys' flat keys are the file's: trace files per direction,
// trace_loop and trace_offset joining each trace given, shaping beside
// them; unknown keys and trace keys without a trace are refused naming
// what is valid.
func TestAddLinkKeys(t *testing.T) {
	dir := t.TempDir()
	up, down := filepath.Join(dir, "up.trace"), filepath.Join(dir, "down.trace")
	os.WriteFile(up, []byte("1\n2\n3\n"), 0o644)
	os.WriteFile(down, []byte("5\n10\n"), 0o644)
	opts, err := lab.AddLinkKeys(map[string]string{"uplink_trace": up, "downlink_trace": down, "trace_loop": "false",
		"trace_offset": "1ms", "delay": "10ms", "queue": "50"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := lab.NewTopology("tk").Host("h1").Host("h2").Link("h1", "h2", opts...).Spec()
	if err != nil {
		t.Fatal(err)
	}
	p := s.Links[0].Params
	for _, c := range []struct {
		aToB bool
		file string
		n    int
	}{{true, up, 3}, {false, down, 2}} {
		d := p.Dir(c.aToB)
		if tr := d.Trace; tr == nil || tr.File != c.file || tr.Loop || tr.Offset != time.Millisecond || len(tr.Ms) != c.n || d.Delay != 10*time.Millisecond || d.Queue == nil || d.Queue.Packets != 50 {
			t.Errorf("a->b %v: %+v, trace %+v", c.aToB, d, d.Trace)
		}
	}
	for keys, want := range map[string]map[string]string{
		`unknown key "tracefile" (valid: backend, corrupt, delay, downlink_trace,`: {"tracefile": up},
		"trace_offset without a trace":                                             {"trace_offset": "1s"},
	} {
		if _, err := lab.AddLinkKeys(want); err == nil || !strings.Contains(err.Error(), keys) {
			t.Errorf("%v: %v, want %q", want, err, keys)
		}
	}
}
