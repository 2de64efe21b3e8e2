package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/emuctl/emuctl/emu"
	"golang.org/x/sys/unix"
)

// A Terminal is an interactive login-like shell inside a node on a
// pseudo-terminal, as an xterm on a Mininet host is: what it prints comes
// as it is printed (a running `ping` shows each reply), programs that
// draw the screen (top, less, vi) get a terminal of the size given, and
// keys typed go to whatever runs in it — Ctrl-C included, by the
// terminal's own line discipline. Unlike a Shell it is not for programs
// to drive line by line: its bytes are for a terminal emulator (the web
// page's, or the user's own through `emuctl api`).
type Terminal struct {
	node string
	cmd  *exec.Cmd
	pty  *os.File

	mu     sync.Mutex
	closed bool
	done   chan struct{}
	code   int
}

// TerminalTERM is the TERM a node's terminal runs with: the page's
// emulator understands what xterm's terminfo entry asks of it.
const TerminalTERM = "xterm"

// Terminal starts bash, interactive, in node on a new pseudo-terminal of
// rows × cols. Read what it prints with Read, type with Write; Close ends
// it (Down ends it too, with the node's processes).
func (l *Lab) Terminal(ctx context.Context, node string, rows, cols int) (*Terminal, error) {
	if err := CheckTerminalSize(rows, cols); err != nil {
		return nil, err
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, fmt.Errorf("a node terminal needs bash: %w", err)
	}
	// the usual rc files, then a prompt naming the node and lab (as
	// `emuctl shell` does), so a user's PS1 cannot hide where they are
	if _, err := l.node(node); err != nil {
		return nil, err
	}
	rc := filepath.Join(emu.StateDir(l.name), "terminal-"+node+".rc")
	content := "[ -f /etc/bash.bashrc ] && . /etc/bash.bashrc\n[ -f ~/.bashrc ] && . ~/.bashrc\n" +
		"PS1='[\\u@" + node + " (" + l.name + ")] \\w\\$ '\n"
	if err := os.WriteFile(rc, []byte(content), 0o644); err != nil {
		return nil, err
	}
	cmd, err := l.Command(context.Background(), node, bash, "--rcfile", rc, "-i")
	if err != nil {
		return nil, err
	}
	// as a terminal emulator opens one: the line discipline's defaults
	// (echo, canonical input, Ctrl-C as SIGINT, \n written as \r\n)
	master, slave, err := ptyPair(rows, cols)
	if err != nil {
		return nil, err
	}
	defer slave.Close()
	cmd.Env = append(cmd.Env, "TERM="+TerminalTERM, "HISTFILE=/dev/null",
		"LINES="+strconv.Itoa(rows), "COLUMNS="+strconv.Itoa(cols))
	if err := startOn(cmd, slave); err != nil {
		master.Close()
		return nil, fmt.Errorf("terminal in %s: %w", node, err)
	}
	t := &Terminal{node: node, cmd: cmd, pty: master, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.code = 128 + int(ws.Signal())
			}
		}
		close(t.done)
	}()
	return t, nil
}

// CheckTerminalSize refuses a size no terminal has: 2-500 rows and
// 10-1000 columns are taken.
func CheckTerminalSize(rows, cols int) error {
	if rows < 2 || cols < 10 || rows > 500 || cols > 1000 {
		return fmt.Errorf("terminal of %d rows × %d columns: want 2-500 rows and 10-1000 columns", rows, cols)
	}
	return nil
}

// Node is the node the terminal runs in.
func (t *Terminal) Node() string { return t.node }

// Pid is bash's process id (in the node; the session's leader).
func (t *Terminal) Pid() int { return t.cmd.Process.Pid }

// Read reads what the terminal printed: io.EOF (or an error) once bash
// has ended and everything was read.
func (t *Terminal) Read(b []byte) (int, error) {
	n, err := t.pty.Read(b)
	if err != nil && n == 0 {
		// the master reads EIO once no process holds the terminal open
		return 0, fmt.Errorf("terminal in %s ended: %w", t.node, errEnded)
	}
	return n, nil
}

var errEnded = errors.New("closed")

// Write types b: keys as a terminal sends them (\r for Enter, \x03 for
// Ctrl-C, escape sequences for the arrows).
func (t *Terminal) Write(b []byte) (int, error) { return t.pty.Write(b) }

// Resize tells the terminal (and so the program in it, by SIGWINCH) its
// new size.
func (t *Terminal) Resize(rows, cols int) error {
	if err := CheckTerminalSize(rows, cols); err != nil {
		return err
	}
	return unix.IoctlSetWinsize(int(t.pty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
}

// Done is closed when bash has ended; ExitCode is its status then.
func (t *Terminal) Done() <-chan struct{} { return t.done }

// ExitCode is bash's exit status (128+N when killed by signal N), once
// Done is closed.
func (t *Terminal) ExitCode() int {
	<-t.done
	return t.code
}

// Close hangs the terminal up: SIGHUP to its session (bash and what runs
// in it), SIGKILL after a second to what is left, by the session's
// process group.
func (t *Terminal) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	hangUp(t.cmd.Process.Pid, t.done)
	t.pty.Close()
	return nil
}
