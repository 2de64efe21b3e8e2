package lab

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A Shell is one long-lived bash inside a node, on a pseudo-terminal of
// its own: the node's network namespace, hostname and hosts file, and what
// Mininet users expect of h1.cmd() — the working directory, variables and
// background jobs kept from one command to the next (`cmd &`, `kill %1`,
// `wait`), Ctrl-C to the command running (SendInt), output read back to
// the prompt. Only bash itself stays resident: the exec helper that enters
// the node replaces itself with bash (setns + execve), so a thousand
// shells are a thousand bash processes and no emuctl beside them.
//
// A command's end is seen by the prompt, a byte no command prints (0x7f,
// as Mininet does), which bash prints after the command's exit status and
// a marker byte (PS1 is "\x1e$?\x7f"): one write and one read a command.
type Shell struct {
	node string
	cmd  *exec.Cmd
	pty  *os.File
	r    *bufio.Reader

	mu     sync.Mutex // one command at a time
	closed bool
	broken error // no prompt came back: the shell is killed and says so
	done   chan struct{}
}

// prompt ends every command's output; status precedes the exit status
// that Cmd asks bash to print after a command.
const (
	prompt = '\x7f'
	status = '\x1e'
)

// Shell starts a shell in node. Close it when done (Down also ends every
// shell of the lab with the node's processes).
func (l *Lab) Shell(ctx context.Context, node string) (*Shell, error) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, fmt.Errorf("a node shell needs bash: %w", err)
	}
	cmd, err := l.Command(context.Background(), node, bash, "--norc", "--noprofile", "--noediting", "-i")
	if err != nil {
		return nil, err
	}
	master, slave, err := openPTY()
	if err != nil {
		return nil, err
	}
	defer slave.Close()
	cmd.Env = append(cmd.Env, "PS1="+string(status)+"$?"+string(prompt), "PS2=", "PROMPT_COMMAND=", "TERM=dumb", "HISTFILE=/dev/null")
	if err := startOn(cmd, slave); err != nil {
		master.Close()
		return nil, fmt.Errorf("shell in %s: %w", node, err)
	}
	s := &Shell{node: node, cmd: cmd, pty: master, r: bufio.NewReaderSize(master, 1<<16), done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()
	// the first prompt says bash is ready
	if _, _, err := s.readUntil(ctx, nil); err != nil {
		s.Close()
		return nil, fmt.Errorf("shell in %s did not start: %w", node, err)
	}
	return s, nil
}

// openPTY opens a pseudo-terminal pair, raw on output (no \r added) and
// without echo, so what is read is what the commands print.
func openPTY() (master, slave *os.File, err error) {
	m, sl, err := ptyPair(50, 250)
	if err != nil {
		return nil, nil, err
	}
	fd := int(sl.Fd())
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err == nil {
		t.Lflag &^= unix.ECHO | unix.ECHONL
		t.Oflag &^= unix.OPOST
		err = unix.IoctlSetTermios(fd, unix.TCSETS, t)
	}
	if err != nil {
		m.Close()
		sl.Close()
		return nil, nil, fmt.Errorf("pty settings: %w", err)
	}
	return m, sl, nil
}

// ptyPair opens a pseudo-terminal pair of rows × cols with the line
// discipline's defaults.
func ptyPair(rows, cols int) (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("pty: %w", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("pty unlock: %w", err)
	}
	// TIOCGPTPEER takes the new descriptor's open flags as its argument
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, m.Fd(), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	fd := int(r)
	if errno != 0 {
		n, nerr := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
		if nerr != nil {
			m.Close()
			return nil, nil, fmt.Errorf("pty peer: %w", errno)
		}
		fd, err = unix.Open("/dev/pts/"+strconv.Itoa(n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			m.Close()
			return nil, nil, fmt.Errorf("pty peer: %w", err)
		}
	}
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}); err != nil {
		m.Close()
		unix.Close(fd)
		return nil, nil, fmt.Errorf("pty size: %w", err)
	}
	return m, os.NewFile(uintptr(fd), "pty"), nil
}

// startOn starts cmd as the leader of a new session whose controlling
// terminal is tty (its stdin, stdout and stderr).
func startOn(cmd *exec.Cmd, tty *os.File) error {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	attr := *cmd.SysProcAttr
	attr.Setsid, attr.Setctty, attr.Ctty = true, true, 0
	cmd.SysProcAttr = &attr
	return cmd.Start()
}

// hangUp ends a session whose leader is pid: SIGHUP to its process
// group, SIGKILL after a second if done is not closed by then.
func hangUp(pid int, done <-chan struct{}) {
	syscall.Kill(-pid, syscall.SIGHUP)
	select {
	case <-done:
	case <-time.After(time.Second):
		syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
}

// Node is the node the shell runs in.
func (s *Shell) Node() string { return s.node }

// Pid is the shell's process id (bash itself, in the node).
func (s *Shell) Pid() int { return s.cmd.Process.Pid }

// Cmd runs one command line (anything bash takes, `&` included) and
// returns what it printed, stdout and stderr together, once bash prompts
// again. Its exit status is in the error: an *ExitError when not 0. ctx
// interrupts the command (Ctrl-C) when done.
func (s *Shell) Cmd(ctx context.Context, line string) (string, error) {
	var out bytes.Buffer
	code, err := s.Stream(ctx, line, &out)
	if err == nil && code != 0 {
		err = &ExitError{Node: s.node, Argv: []string{line}, Code: code, Output: out.Bytes()}
	}
	return out.String(), err
}

// Stream runs one command line like Cmd, copying its output to w as it
// comes, and returns its exit status.
func (s *Shell) Stream(ctx context.Context, line string, w io.Writer) (int, error) {
	if strings.ContainsAny(line, "\n\r") {
		return -1, errors.New("shell: one command line at a time (no newlines; join commands with ; or &&)")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return -1, errors.New("shell: closed")
	}
	if s.broken != nil {
		return -1, s.broken
	}
	if _, err := fmt.Fprintf(s.pty, "%s\n", line); err != nil {
		return -1, err
	}
	_, code, err := s.readUntil(ctx, w)
	return code, err
}

// Send writes a command line without waiting for it (Mininet's
// sendCmd); Read or Wait collect its output.
func (s *Shell) Send(line string) error {
	if strings.ContainsAny(line, "\n\r") {
		return errors.New("shell: one command line at a time")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := fmt.Fprintf(s.pty, "%s\n", line)
	return err
}

// Wait reads the output of a command sent with Send until bash prompts
// again (Mininet's waitOutput).
func (s *Shell) Wait(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return "", s.broken
	}
	out, _, err := s.readUntil(ctx, nil)
	return out, err
}

// SendInt sends Ctrl-C to the command running in the foreground.
func (s *Shell) SendInt() error {
	_, err := s.pty.Write([]byte{3})
	return err
}

// readUntil reads to the next prompt and returns the output before it
// and the exit status the prompt carries, copying the output to w as it
// comes when w is given; ctx interrupts the command (Ctrl-C) and then
// waits 2 s for the prompt.
func (s *Shell) readUntil(ctx context.Context, w io.Writer) (string, int, error) {
	type chunk struct {
		b    []byte
		last bool
		err  error
	}
	ch := make(chan chunk, 16)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			b, err := s.r.ReadSlice(prompt)
			c := chunk{b: append([]byte(nil), b...), err: err}
			if err == nil {
				c.b, c.last = c.b[:len(c.b)-1], true
			} else if errors.Is(err, bufio.ErrBufferFull) {
				c.err = nil
			}
			select {
			case ch <- c:
			case <-stop:
				return
			}
			if c.last || c.err != nil {
				return
			}
		}
	}()
	var out []byte
	written := 0
	// flush copies to w what cannot be the status marker: everything
	// before the last marker byte read so far
	flush := func(end int) {
		if w != nil && end > written {
			w.Write(out[written:end])
			written = end
		}
	}
	var deadline <-chan time.Time
	done := ctx.Done()
	for {
		select {
		case c := <-ch:
			out = append(out, c.b...)
			if c.err != nil {
				flush(len(out))
				return string(out), -1, fmt.Errorf("shell in %s: %w", s.node, c.err)
			}
			i := bytes.LastIndexByte(out, status)
			if !c.last {
				if i < 0 {
					i = len(out)
				}
				flush(i)
				continue
			}
			if i < 0 {
				flush(len(out))
				return string(out), -1, fmt.Errorf("shell in %s: no exit status before the prompt", s.node)
			}
			code, err := strconv.Atoi(string(out[i+1:]))
			flush(i)
			return string(out[:i]), code, err
		case <-done:
			s.SendInt()
			done, deadline = nil, time.After(2*time.Second)
		case <-deadline:
			// its reader still waits on the terminal: the shell is lost
			s.broken = fmt.Errorf("shell in %s: no prompt 2 s after Ctrl-C (%v): the shell was killed", s.node, ctx.Err())
			syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			return string(out), -1, s.broken
		case <-s.done:
			// bash ended: drain what it wrote
			select {
			case c := <-ch:
				out = append(out, c.b...)
			case <-time.After(50 * time.Millisecond):
			}
			flush(len(out))
			return string(out), -1, fmt.Errorf("shell in %s ended", s.node)
		}
	}
}

// Close ends the shell: SIGHUP to its session (bash, and its jobs as
// bash passes it on), then SIGKILL after a second.
func (s *Shell) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.pty.Close()
	hangUp(s.cmd.Process.Pid, s.done)
	return nil
}
