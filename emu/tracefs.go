package emu

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// TraceInstancePrefix names the tracefs instances `emuctl test` creates
// (suite/trace.go): "emuctl-suite-<pid>-<n>-s<start>", with the process's
// start time so a later process that reuses the pid does not keep a killed
// run's instance alive. An instance whose process is gone is a leftover of
// a killed suite run (names without "-s<start>", from older versions, are
// judged by the pid alone).
const TraceInstancePrefix = "emuctl-suite-"

// TraceInstanceName is the name of this process's n-th tracefs instance.
func TraceInstanceName(n int) string {
	start, _ := procStart(os.Getpid())
	return fmt.Sprintf("%s%d-%d-s%d", TraceInstancePrefix, os.Getpid(), n, start)
}

// traceInstanceLive reports whether the suite run that made instance
// name (without the prefix) still runs.
func traceInstanceLive(rest string) (live, ok bool) {
	pidS, tail, _ := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidS)
	if err != nil {
		return false, false
	}
	var start uint64
	if _, st, found := strings.Cut(tail, "-s"); found {
		if start, err = strconv.ParseUint(st, 10, 64); err != nil {
			return false, false
		}
	}
	return alive(pid, start), true
}

// staleTraceInstances lists (and with remove, deletes) the tracefs
// instances of suite runs whose process is gone. tracefs is looked at on a
// throw-away thread in a private mount namespace, mounting it there when
// the host has not, so nothing is mounted on the host.
func staleTraceInstances(remove bool) (found []string, errs []string) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread dies with its mount namespace
		if unix.Unshare(unix.CLONE_NEWNS) != nil || unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "") != nil {
			return
		}
		dir := "/sys/kernel/tracing/instances"
		if _, err := os.Stat(dir); err != nil {
			if unix.Mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, "") != nil {
				return
			}
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			rest, ok := strings.CutPrefix(e.Name(), TraceInstancePrefix)
			if !ok {
				continue
			}
			live, parsed := traceInstanceLive(rest)
			if !parsed || live {
				continue // not one of emuctl's names, or its suite run is alive
			}
			found = append(found, "tracefs instance "+e.Name())
			if remove {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					errs = append(errs, fmt.Sprintf("tracefs instance %s: %v", e.Name(), err))
				}
			}
		}
	}()
	<-done
	return found, errs
}
