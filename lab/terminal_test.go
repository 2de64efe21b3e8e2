package lab_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/lab"
)

// screen collects what a terminal prints, for waitFor.
type screen struct {
	t    *testing.T
	mu   sync.Mutex
	out  strings.Builder
	seen int // waitFor looks after this offset
	done chan struct{}
}

func readAll(t *testing.T, term *lab.Terminal) *screen {
	s := &screen{t: t, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		b := make([]byte, 4096)
		for {
			n, err := term.Read(b)
			s.mu.Lock()
			s.out.Write(b[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

// waitFor waits until what is printed after the last match holds want,
// and returns when it was seen.
func (s *screen) waitFor(want string, d time.Duration) time.Time {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s.mu.Lock()
		all := s.out.String()
		i := strings.Index(all[s.seen:], want)
		if i >= 0 {
			s.seen += i + len(want)
		}
		s.mu.Unlock()
		if i >= 0 {
			return time.Now()
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the terminal did not print %q within %v; it printed:\n%s", want, d, all[s.seen:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A node's terminal is a real one: its size seen by programs and changed
// at run time, output as it is printed (not when the command ends), Ctrl-C
// through the line discipline, the node's network and names, an exit
// status, and nothing left once it is closed.
func TestTerminal(t *testing.T) {
	testutil.NeedRoot(t)
	l := up(t, lab.NewTopology("tterm").Host("h1").Host("h2").Switch("s1").Link("h1", "s1").Link("h2", "s1"))
	ctx := context.Background()

	// bad input changes nothing
	if _, err := l.Terminal(ctx, "h9", 24, 80); err == nil || !strings.Contains(err.Error(), "h9") {
		t.Errorf("a terminal in an unknown node: %v", err)
	}
	if _, err := l.Terminal(ctx, "h1", 1, 80); err == nil || !strings.Contains(err.Error(), "2-500 rows") {
		t.Errorf("a terminal of 1 row: %v", err)
	}

	term, err := l.Terminal(ctx, "h1", 30, 100)
	if err != nil {
		t.Fatal(err)
	}
	s := readAll(t, term)
	type_ := func(keys string) {
		t.Helper()
		if _, err := term.Write([]byte(keys)); err != nil {
			t.Fatal(err)
		}
	}
	s.waitFor("(tterm)]", 5*time.Second) // the prompt names node and lab
	type_("stty size; tty; hostname\r")
	s.waitFor("30 100", 3*time.Second)
	s.waitFor("/dev/pts/", 3*time.Second)
	s.waitFor("h1", 3*time.Second)

	// output as it is printed
	type_("for i in 1 2 3; do echo tick$i; sleep 1; done\r")
	t1 := s.waitFor("tick1", 5*time.Second)
	t3 := s.waitFor("tick3", 5*time.Second)
	if d := t3.Sub(t1); d < 1800*time.Millisecond {
		t.Errorf("tick1 and tick3 came %v apart: the output was not streamed as printed (want ≥ 1.8 s)", d)
	}
	// the node's network, by name
	type_("ping -c 2 -i 0.2 h2\r")
	s.waitFor("2 received", 10*time.Second)

	// Ctrl-C interrupts the foreground command, the shell stays
	type_("sleep 30\r")
	time.Sleep(300 * time.Millisecond)
	type_("\x03")
	type_("echo rc=$?\r")
	s.waitFor("rc=130", 3*time.Second)

	// a new size, seen by the next program
	if err := term.Resize(40, 120); err != nil {
		t.Fatal(err)
	}
	if err := term.Resize(1, 5); err == nil {
		t.Error("Resize(1, 5) accepted")
	}
	type_("stty size\r")
	s.waitFor("40 120", 3*time.Second)

	// closed: bash and its foreground job are gone
	type_("sleep 60\r")
	time.Sleep(200 * time.Millisecond)
	pid := term.Pid()
	term.Close()
	select {
	case <-term.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("bash still runs 3 s after Close")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("bash (pid %d) after Close: %v", pid, err)
	}
	<-s.done
	t.Logf("closed: bash's exit status %d", term.ExitCode())

	// an exit status of the shell's own
	term2, err := l.Terminal(ctx, "h2", 24, 80)
	if err != nil {
		t.Fatal(err)
	}
	defer term2.Close()
	s2 := readAll(t, term2)
	s2.waitFor("(tterm)]", 5*time.Second)
	term2.Write([]byte("exit 3\r"))
	select {
	case <-term2.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("bash did not end on exit 3")
	}
	if c := term2.ExitCode(); c != 3 {
		t.Errorf("exit 3: status %d", c)
	}
	select {
	case <-s2.done: // Read saw the end
	case <-time.After(3 * time.Second):
		t.Error("Read did not end after bash did")
	}
}
