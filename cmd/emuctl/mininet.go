package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// newMininetCmd runs a Mininet script on emuctl: python3 with the Mininet
// compatibility layer (python/emuctl/_compat/mininet) first on its path,
// so `import mininet` finds the layer for this run only.
func newMininetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mininet [--python PY] (SCRIPT.py | -m MODULE) [ARGS...]",
		Short: "Run a Mininet Python script on emuctl (Mininet's API, emuctl's lab)",
		Long: `Runs a Python script (or -m MODULE) written for Mininet with python3, the
Mininet-compatible layer importable as "mininet" (mininet.net, topo,
topolib, node, link, cli, log, util, clean, nodelib), and Mininet-WiFi's as
"mn_wifi" (mn_wifi.net's Mininet_wifi, node, link, cli, topo,
wmediumdConnector: access points and stations on emuctl's medium), in
place of any installed on the machine — for this run only: outside emuctl
mininet, "import mininet" finds what it found before. The script's network
is an emuctl lab (named mn, or mn-PID when mn runs already), built when
the script calls build() or start() and changed while it runs; net.stop()
or the script's end takes it down. -m mininet.examples.X runs Mininet's
own example X from where Debian's mininet package keeps them (or from
$EMUCTL_MININET_EXAMPLES). Processes the script starts (python -m ...)
see the same layer. What emuctl cannot honour (CPU pinning, X terminals,
ad hoc and mesh Wi-Fi) is an error naming it.`,
		Example: `  sudo emuctl mininet mytopo.py
  sudo emuctl mininet -m mininet.examples.emptynet`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			python := ""
			for len(args) > 0 {
				switch {
				case args[0] == "-h" || args[0] == "--help":
					return cmd.Help()
				case args[0] == "--python" && len(args) > 1:
					python, args = args[1], args[2:]
					continue
				case strings.HasPrefix(args[0], "--python="):
					python, args = strings.TrimPrefix(args[0], "--python="), args[1:]
					continue
				}
				break
			}
			if len(args) == 0 {
				return errors.New("mininet: give a script (emuctl mininet script.py) or a module (emuctl mininet -m mininet.examples.emptynet)")
			}
			if args[0] == "-m" && len(args) < 2 {
				return errors.New("mininet: -m needs a module name, as python3 -m does")
			}
			if args[0] != "-m" {
				if _, err := os.Stat(args[0]); err != nil {
					return fmt.Errorf("mininet: script %s: %w", args[0], errors.Unwrap(err))
				}
			}
			return execLayer(python, args)
		},
	}
	return cmd
}

// newMnCmd is Mininet's mn on the layer: python3 -m mininet._mn.
func newMnCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mn [mn's options]",
		Short: "Mininet's mn command on emuctl: --topo, --switch, --link tc,bw=..., --test, the CLI",
		Long: `Creates a network from the command line as Mininet's mn does, on emuctl's
Mininet layer (the network is an emuctl lab): --topo minimal|single,N|
linear,K[,N]|tree,D[,F]|reversed,N|torus,X,Y[,N], --switch (every switch
is a Linux bridge), --host proc|cfs[,cpu=F], --controller (placeholders;
remote is refused), --link default|tc[,bw=MBIT,delay=D,jitter=J,loss=PCT,
max_queue_size=N], --mac, --arp, --ipbase, --test pingall|pingpair|
pingallfull|pingpairfull|iperf|iperfudp|all|build|none (repeatable), --pre/
--post CLI scripts, --custom FILE, -c (take down the mn labs), -v LEVEL.
Without --test it starts the network and Mininet's CLI (mininet>).`,
		Example: `  sudo emuctl mn --topo single,3 --test pingall
  sudo emuctl mn --topo linear,4 --link tc,bw=10,delay=5ms --test iperf
  sudo emuctl mn --topo tree,2,2`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return execLayer("", append([]string{"-m", "mininet._mn"}, args...))
		},
	}
}

// execLayer replaces this process with python running args, the Mininet
// layer first on its path; python "" is $EMUCTL_PYTHON, else
// /usr/bin/python3 (Debian's, whose packages the layer's tests use).
func execLayer(python string, args []string) error {
	if python == "" {
		python = cmp.Or(os.Getenv("EMUCTL_PYTHON"), "/usr/bin/python3")
	}
	py, err := exec.LookPath(python)
	if err != nil {
		return fmt.Errorf("python %s: %w (install python3, or give --python PATH)", python, err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	pkg, err := pythonPackageDir(py, self)
	if err != nil {
		return err
	}
	return syscall.Exec(py, append([]string{py}, args...), mininetEnv(os.Environ(), pkg, self))
}

// pythonPackageDir finds the directory holding the emuctl Python package:
// $EMUCTL_PYTHON_DIR, the checkout's python/ beside bin/emuctl, or where
// `make install` put it (python3 finds it).
func pythonPackageDir(py, self string) (string, error) {
	has := func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, "emuctl", "_compat", "mininet", "net.py"))
		return err == nil
	}
	if d := os.Getenv("EMUCTL_PYTHON_DIR"); d != "" {
		if !has(d) {
			return "", fmt.Errorf("EMUCTL_PYTHON_DIR=%s holds no emuctl/_compat/mininet", d)
		}
		return d, nil
	}
	if d := filepath.Join(filepath.Dir(filepath.Dir(self)), "python"); has(d) {
		return d, nil
	}
	out, err := exec.Command(py, "-c", "import emuctl, os; print(os.path.dirname(os.path.dirname(emuctl.__file__)))").Output()
	if d := strings.TrimSpace(string(out)); err == nil && has(d) {
		return d, nil
	}
	return "", errors.New("the emuctl Python package (with its Mininet layer) is not installed: run `sudo make install` in the checkout, or set EMUCTL_PYTHON_DIR to its python/ directory")
}

// mininetEnv puts the layer first on PYTHONPATH (then the package, then
// what was there) and names this binary as the emuctl to run.
func mininetEnv(environ []string, pkg, self string) []string {
	path := []string{filepath.Join(pkg, "emuctl", "_compat"), pkg}
	var env []string
	for _, e := range environ {
		switch {
		case strings.HasPrefix(e, "PYTHONPATH="):
			if old := strings.TrimPrefix(e, "PYTHONPATH="); old != "" {
				path = append(path, old)
			}
		case strings.HasPrefix(e, "EMUCTL="):
		default:
			env = append(env, e)
		}
	}
	return append(env, "PYTHONPATH="+strings.Join(path, ":"), "EMUCTL="+self, "EMUCTL_MININET=1")
}
