package emu

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/emuctl/emuctl/topo"
)

// Machines reached over SSH (ssh: user@host[:port]): the worker runs on
// the machine through OpenSSH's client, as the controller's own binary,
// copied to remoteBinDir/emuctl-<hash of its content> when the machine
// does not have that file (so a machine never runs another version). The
// machine's user must be root (the worker makes namespaces). ssh runs
// with BatchMode (no prompts); EMUCTL_SSH_CONFIG names an ssh_config file
// for keys, jump hosts, known hosts and the like.

// remoteBinDir is where machines keep emuctl binaries (a variable for
// tests, whose stand-in machines share this host's file system).
var remoteBinDir = "/var/lib/emuctl"

var selfHash = sync.OnceValues(func() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(self)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
})

// sshCommand is ssh to machine m running the remote command line.
// Extra options go before the destination (sshShared's).
func sshCommand(ctx context.Context, m topo.Machine, remote string, extra ...string) *exec.Cmd {
	var args []string
	if f := os.Getenv("EMUCTL_SSH_CONFIG"); f != "" {
		args = append(args, "-F", f)
	}
	args = append(args, extra...)
	args = append(args, "-o", "BatchMode=yes", "-p", strconv.Itoa(m.Port), m.User+"@"+m.Host, "--", remote)
	cmd := exec.CommandContext(ctx, "ssh", args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} // no ssh outlives its controller
	return cmd
}

// remoteBins remembers, for this process, the machines known to have
// this binary (user@host:port -> path), so a run of execs (cli's pingall)
// does not check again each time.
var remoteBins sync.Map

// remoteBinary makes sure machine m has this binary and returns its path
// there: one round trip when it has, the copy through ssh's stdin when not.
func remoteBinary(ctx context.Context, m topo.Machine, extra ...string) (string, error) {
	hash, err := selfHash()
	if err != nil {
		return "", err
	}
	bin := path.Join(remoteBinDir, "emuctl-"+hash)
	key := fmt.Sprintf("%s@%s:%d %s", m.User, m.Host, m.Port, bin)
	if _, ok := remoteBins.Load(key); ok {
		return bin, nil
	}
	tmp := bin + ".part.$$" // the remote shell's pid: two copies at once never share it
	script := fmt.Sprintf("test -x %[1]s && exit 0; mkdir -p %[2]s && cat > %[3]s && chmod 755 %[3]s && mv -f %[3]s %[1]s", bin, remoteBinDir, tmp)
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(self)
	if err != nil {
		return "", err
	}
	defer f.Close()
	cmd := sshCommand(ctx, m, script, extra...)
	cmd.Stdin = f
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("ssh %s@%s:%d: copying emuctl to %s: %v: %s", m.User, m.Host, m.Port, bin, err, strings.TrimSpace(string(out)))
	}
	remoteBins.Store(key, true)
	return bin, nil
}

// sshWorkerCommand is the worker role with args on machine m over ssh,
// a session on the lab's shared connection to m (cluster_sshmux.go).
func sshWorkerCommand(ctx context.Context, lab string, m topo.Machine, args ...string) (*exec.Cmd, error) {
	shared := sshShared(ctx, lab, m)
	bin, err := remoteBinary(ctx, m, shared...)
	if err != nil {
		return nil, err
	}
	words := []string{shellQuote(bin), workerArg}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return sshCommand(ctx, m, strings.Join(words, " "), shared...), nil
}

// shellQuote quotes s for a POSIX shell (ssh runs the remote command
// through the user's shell).
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
