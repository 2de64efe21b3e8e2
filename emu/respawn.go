package emu

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// respawnArg starts the daemon keeper: `emuctl __emuctl_respawn -- CMD...`,
// run inside a node (through the exec helper) for hostapd and
// wpa_supplicant. It starts CMD, restarts it when it exits (the node keeps
// its access point or association), and gives up — exiting 1, which `up`
// and `ls` report with the log — after respawnBurst exits within
// respawnWindow. SIGTERM/SIGINT/SIGHUP go to CMD, and the keeper exits
// when CMD has. Its output and CMD's go to the daemon's log, with one line
// per start and exit.
const (
	respawnArg    = "__emuctl_respawn"
	respawnBurst  = 5
	respawnWindow = time.Minute
)

// respawnArgv wraps argv in the keeper.
func respawnArgv(argv []string) []string {
	self, err := os.Executable()
	if err != nil {
		self = "/proc/self/exe"
	}
	return append([]string{self, respawnArg, "--"}, argv...)
}

func runRespawn(argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "usage: "+respawnArg+" -- cmd [args...]")
		return 2
	}
	name := filepath.Base(argv[0])
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	var exits []time.Time
	for {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "emuctl: cannot start %s: %v\n", name, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "emuctl: %s started (pid %d)\n", name, cmd.Process.Pid)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case s := <-sigc:
			cmd.Process.Signal(s)
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			return 0
		case err := <-done:
			now := time.Now()
			exits = append(exits, now)
			for len(exits) > 0 && now.Sub(exits[0]) > respawnWindow {
				exits = exits[1:]
			}
			if len(exits) >= respawnBurst {
				fmt.Fprintf(os.Stderr, "emuctl: %s exited (%v) %d times within %v; giving up\n", name, err, len(exits), respawnWindow)
				return 1
			}
			fmt.Fprintf(os.Stderr, "emuctl: %s exited (%v); restarting\n", name, err)
		}
		select {
		case s := <-sigc:
			_ = s
			return 0
		case <-time.After(500 * time.Millisecond):
		}
	}
}
