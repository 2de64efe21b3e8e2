package traffic

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
)

func TestMain(m *testing.M) {
	testutil.Main(m, testLeaks)
}

// testLeaks lists what this package's tests could leave: labs and
// namespaces named ttr*, and child processes (iperf3) of this process.
// Other packages' labs are not ours to judge.
func testLeaks() []string {
	out := testutil.Mine(emu.Leaks(), "ttr")
	for _, pid := range childPIDs() {
		comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
		out = append(out, fmt.Sprintf("child process %d (%s)", pid, strings.TrimSpace(string(comm))))
	}
	return out
}

// childPIDs returns the live (non-zombie) children of this process.
func childPIDs() []int {
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[0] != "Z" {
			if pp, _ := strconv.Atoi(f[1]); pp == self {
				out = append(out, pid)
			}
		}
	}
	return out
}
