package emu

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/topo"
)

// One SSH connection per machine of a lab, shared by every worker command
// this process runs there (OpenSSH's connection sharing: a master started
// with -M on a control socket, the commands opened as sessions on it).
// A new SSH connection costs a key exchange, a login and sshd's fork; on a
// slow machine (a software-emulated VM) that was 4-6 s a command, so a
// ping over a lab of two such machines took longer than its traffic.
//
// The master belongs to this process and the lab: it is started the first
// time a worker command of the lab needs the machine, ends with the
// process (Pdeathsig; a kill -9 of emuctl ends it too) or when the lab goes
// down here (closeSSHMasters); its socket, in a directory of root's only,
// is named after this process and removed by the master as it ends. A master that
// cannot start is not an error: the commands then connect each on their
// own, as without it. sshd allows ten sessions per connection by default
// (MaxSessions): an OpenSSH client whose session is refused on a shared
// connection connects on its own (measured with OpenSSH 9.2: an sshd of
// MaxSessions 2, four commands at once, all four ran), its one-line
// complaint kept out of the command's stderr (-E /dev/null: ssh's own
// messages, never the remote command's). EMUCTL_SSH_SHARE=0 turns sharing
// off.

type sshMaster struct {
	once sync.Once
	sock string // the control socket; "" when the master could not start
	cmd  *exec.Cmd
	done chan struct{}
}

var sshMasters = struct {
	sync.Mutex
	m map[string]*sshMaster // lab + "\x00" + user@host:port
}{m: map[string]*sshMaster{}}

// sshMuxBase holds one directory of control sockets per emuctl process
// (not a lab's state dir: lab names cannot start with "_").
const sshMuxBase = "_ssh"

// sshMuxDir is the directory of control sockets.
func sshMuxDir() string { return filepath.Join(RunDir(), sshMuxBase) }

func sshMasterKey(lab string, m topo.Machine) string {
	return lab + "\x00" + fmt.Sprintf("%s@%s:%d", m.User, m.Host, m.Port)
}

// sshShared returns the ssh options that open a command as a session on
// the lab's shared connection to m, or none when it has none.
func sshShared(ctx context.Context, lab string, m topo.Machine) []string {
	if os.Getenv("EMUCTL_SSH_SHARE") == "0" {
		return nil
	}
	key := sshMasterKey(lab, m)
	sshMasters.Lock()
	ms := sshMasters.m[key]
	if ms == nil {
		ms = &sshMaster{done: make(chan struct{})}
		sshMasters.m[key] = ms
	}
	sshMasters.Unlock()
	ms.once.Do(func() { ms.start(ctx, key, m) })
	select {
	case <-ms.done:
		return nil // the master has ended: connect on one's own
	default:
	}
	if ms.sock == "" {
		return nil
	}
	return []string{"-o", "ControlMaster=no", "-o", "ControlPath=" + ms.sock, "-E", "/dev/null"}
}

// start starts the master and waits until its socket answers (or it
// ends: then sock stays "" and commands connect on their own).
func (ms *sshMaster) start(ctx context.Context, key string, m topo.Machine) {
	dir := sshMuxDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		close(ms.done)
		return
	}
	sum := sha256.Sum256([]byte(key))
	sock := filepath.Join(dir, strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(sum[:6]))
	var args []string
	if f := os.Getenv("EMUCTL_SSH_CONFIG"); f != "" {
		args = append(args, "-F", f)
	}
	args = append(args, "-o", "BatchMode=yes", "-o", "ControlMaster=yes", "-o", "ControlPersist=no", "-o", "ControlPath="+sock,
		"-o", "ServerAliveInterval=15", "-N", "-p", strconv.Itoa(m.Port), m.User+"@"+m.Host)
	started := make(chan error, 1)
	// The master is started from a thread of its own that lives as long
	// as it: Pdeathsig fires when the starting thread ends, and a Go
	// thread ends with a goroutine that locked it (netns work does).
	go func() {
		runtime.LockOSThread()
		cmd := exec.Command("ssh", args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
		if err := cmd.Start(); err != nil {
			started <- err
			close(ms.done)
			return
		}
		ms.cmd = cmd
		started <- nil
		cmd.Wait()
		os.Remove(sock) // ssh removes it; a master killed with -9 does not
		close(ms.done)
	}()
	if err := <-started; err != nil {
		return
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			ms.sock = sock
			return
		}
		select {
		case <-ms.done:
			return
		case <-ctx.Done():
			ms.stop()
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	ms.stop()
}

// stop ends the master and waits for it.
func (ms *sshMaster) stop() {
	if ms.cmd != nil && ms.cmd.Process != nil {
		ms.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-ms.done:
	case <-time.After(5 * time.Second):
		if ms.cmd != nil && ms.cmd.Process != nil {
			ms.cmd.Process.Kill()
		}
		<-ms.done
	}
}

// closeSSHMasters ends this process's shared connections of the lab.
func closeSSHMasters(lab string) {
	sshMasters.Lock()
	var ms []*sshMaster
	for k, v := range sshMasters.m {
		if strings.HasPrefix(k, lab+"\x00") {
			ms = append(ms, v)
			delete(sshMasters.m, k)
		}
	}
	sshMasters.Unlock()
	for _, m := range ms {
		m.once.Do(func() { close(m.done) }) // never started: nothing to end
		m.stop()
	}
	if len(ms) > 0 {
		os.Remove(sshMuxDir()) // only when no other process has a socket there
	}
}

// staleSSHSockets are the control sockets of emuctl processes that are
// gone (a master killed with -9 leaves its socket behind).
func staleSSHSockets() []string {
	ents, err := os.ReadDir(sshMuxDir())
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		p, _, _ := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(p)
		if err != nil || pid <= 0 || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			out = append(out, filepath.Join(sshMuxDir(), e.Name()))
		}
	}
	return out
}

// cleanSSHSockets removes the stale control sockets, and the directory
// when it is left empty.
func cleanSSHSockets() (removed []string) {
	for _, f := range staleSSHSockets() {
		if os.Remove(f) == nil {
			removed = append(removed, f)
		}
	}
	os.Remove(sshMuxDir()) // only when empty
	return removed
}
