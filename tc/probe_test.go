//go:build linux

package tc

import (
	"errors"
	"os"
	"testing"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/kernellab"
)

func requireRoot(t testing.TB) {
	t.Helper()
	testutil.NeedRoot(t)
}

func TestProbe(t *testing.T) {
	requireRoot(t)
	c := Probe()
	t.Logf("caps: netem=%v htb=%v tbf=%v ifb=%v reasons=%v", c.Netem, c.HTB, c.TBF, c.IFB, c.Reasons)
	if !c.TBF || !c.HTB {
		t.Errorf("tbf/htb missing on a kernel that needs them for the shaper path: %v", c.Reasons)
	}
	for _, f := range []string{"netem", "htb", "tbf", "ifb"} {
		err := c.Err(f)
		present := map[string]bool{"netem": c.Netem, "htb": c.HTB, "tbf": c.TBF, "ifb": c.IFB}[f]
		if present != (err == nil) {
			t.Errorf("%s: present=%v but Err=%v", f, present, err)
		}
		if err != nil && (!errors.Is(err, ErrNotSupported) || c.Reasons[f] == "") {
			t.Errorf("%s: error %v does not wrap ErrNotSupported or has no reason", f, err)
		}
	}
	if kernellab.InLab() && !c.Netem {
		t.Errorf("kernel lab: netem must be present: %s", c.Reasons["netem"])
	}
}

func TestProbeWithoutRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("runs as non-root only")
	}
	c := Probe()
	if c.Netem || c.TBF || c.Reasons["netem"] == "" {
		t.Errorf("probe without privileges: %+v", c)
	}
}
