package tc

import (
	"fmt"
	"os/exec"
	"testing"
	"time"
)

func TestTmpPerf(t *testing.T) {
	d := Dir{Rate: 200e6, Delay: time.Millisecond}
	l := newChildLab(t, d, d)
	b := startBulk(t, l.h1, l.h2, ip2, 5001)
	time.Sleep(500 * time.Millisecond)
	out, err := exec.Command("timeout", "2", "strace", "-c", "-f", "-p", fmt.Sprint(l.pid)).CombinedOutput()
	t.Logf("%s %v", out, err)
	b.stop()
}
