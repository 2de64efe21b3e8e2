// Package tracefs owns emuctl's use of the kernel's tracefs: private
// instances (New) that `emuctl test` records events in, and the clean-up of
// instances a killed run left behind (Stale), which `emuctl clean` and the
// leak check call. One package names, creates and removes them, so the
// rules cannot drift apart.
//
// tracefs is only ever touched from a locked OS thread in a private mount
// namespace, mounting tracefs there when the host has not: nothing is
// mounted on the host, and an instance neither sees nor disturbs anyone
// else's tracing.
package tracefs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/internal/proc"
	"golang.org/x/sys/unix"
)

// Prefix names emuctl's instances: "emuctl-suite-<pid>-<n>-s<start>",
// with the creating process's start time, so a later process that reuses
// the pid does not keep a killed run's instance alive. An instance whose
// process is gone is a leftover (names without "-s<start>", from older
// versions, are judged by the pid alone).
const Prefix = "emuctl-suite-"

// Dir is where tracefs is mounted (inside the private mount namespace).
const Dir = "/sys/kernel/tracing"

// InstanceName is the name of this process's n-th instance.
func InstanceName(n int) string {
	start, _ := proc.Start(os.Getpid())
	return fmt.Sprintf("%s%d-%d-s%d", Prefix, os.Getpid(), n, start)
}

// onPrivateThread runs setup on a new OS thread that has a private mount
// namespace with tracefs at Dir, then serves the functions sent on req
// until it is closed. The thread stays locked and dies with its goroutine:
// its mount namespace must never be reused.
func onPrivateThread(setup func() error, req <-chan func()) error {
	ready := make(chan error)
	go func() {
		runtime.LockOSThread()
		if err := privateTracefs(); err != nil {
			ready <- err
			return
		}
		if err := setup(); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for f := range req {
			f()
		}
	}()
	return <-ready
}

func privateTracefs() error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("private mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if _, err := os.Stat(filepath.Join(Dir, "instances")); err != nil {
		if err := unix.Mount("tracefs", Dir, "tracefs", 0, ""); err != nil {
			return fmt.Errorf("mount tracefs: %w", err)
		}
	}
	return nil
}

// Instance is one private tracefs instance, served by its own thread.
type Instance struct {
	req    chan func()
	dir    string // valid on the instance's thread
	events []string
}

// New creates an instance with the given settings (file → value, e.g.
// "trace_clock": "mono", "buffer_size_kb": "8192") and enables events
// ("tcp/tcp_cong_state_set"). An error means no trace: a kernel without
// tracefs or without an event is reported, not fatal to the caller.
func New(settings [][2]string, events ...string) (*Instance, error) {
	in := &Instance{req: make(chan func()), events: events}
	err := onPrivateThread(func() error {
		for _, ev := range events {
			if _, err := os.Stat(filepath.Join(Dir, "events", ev)); err != nil {
				return fmt.Errorf("this kernel has no %s event", strings.ReplaceAll(ev, "/", ":"))
			}
		}
		for i := 0; ; i++ {
			in.dir = filepath.Join(Dir, "instances", InstanceName(i))
			err := os.Mkdir(in.dir, 0o755)
			if err == nil {
				break
			}
			if !errors.Is(err, os.ErrExist) || i > 8 {
				return fmt.Errorf("create instance: %w", err)
			}
		}
		for _, w := range settings {
			if err := os.WriteFile(filepath.Join(in.dir, w[0]), []byte(w[1]), 0); err != nil {
				os.Remove(in.dir)
				return fmt.Errorf("%s: %w", w[0], err)
			}
		}
		for _, ev := range events {
			if err := os.WriteFile(filepath.Join(in.dir, "events", ev, "enable"), []byte("1"), 0); err != nil {
				os.Remove(in.dir)
				return fmt.Errorf("enable %s: %w", ev, err)
			}
		}
		return nil
	}, in.req)
	if err != nil {
		return nil, fmt.Errorf("tracefs: %w", err)
	}
	return in, nil
}

// do runs f on the instance's thread.
func (in *Instance) do(f func()) {
	done := make(chan struct{})
	in.req <- func() { f(); close(done) }
	<-done
}

// Name is the instance's directory name.
func (in *Instance) Name() string {
	var n string
	in.do(func() { n = filepath.Base(in.dir) })
	return n
}

// Clear empties the ring buffer.
func (in *Instance) Clear() {
	in.do(func() { os.WriteFile(filepath.Join(in.dir, "trace"), nil, 0) })
}

// Read returns the ring buffer's text ("trace").
func (in *Instance) Read() ([]byte, error) {
	var data []byte
	var err error
	in.do(func() { data, err = os.ReadFile(filepath.Join(in.dir, "trace")) })
	return data, err
}

// Close disables the events and removes the instance (retrying while the
// kernel still holds it), then ends the thread.
func (in *Instance) Close() {
	in.do(func() {
		for _, ev := range in.events {
			os.WriteFile(filepath.Join(in.dir, "events", ev, "enable"), []byte("0"), 0)
		}
		for i := 0; i < 20; i++ {
			if os.Remove(in.dir) == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	close(in.req)
}

// live reports whether the process that made instance name (without the
// prefix) still runs, and whether the name parsed.
func live(rest string) (alive, ok bool) {
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
	return proc.Alive(pid, start), true
}

// Stale lists (and with remove, deletes) the instances whose process is
// gone, as "tracefs instance NAME"; errs are the removals that failed. A
// host without tracefs has none.
func Stale(remove bool) (found []string, errs []string) {
	req := make(chan func())
	err := onPrivateThread(func() error {
		dir := filepath.Join(Dir, "instances")
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil
		}
		for _, e := range ents {
			rest, ok := strings.CutPrefix(e.Name(), Prefix)
			if !ok {
				continue
			}
			if alive, parsed := live(rest); !parsed || alive {
				continue // not one of emuctl's names, or its run is alive
			}
			found = append(found, "tracefs instance "+e.Name())
			if remove {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					errs = append(errs, fmt.Sprintf("tracefs instance %s: %v", e.Name(), err))
				}
			}
		}
		return nil
	}, req)
	close(req)
	if err != nil {
		return nil, nil // no tracefs here: nothing can be left
	}
	return found, errs
}

// InPrivate runs fn(instancesDir) on a throw-away thread that sees tracefs
// as Stale and New do (for tests that plant or inspect instances).
func InPrivate(fn func(instances string) error) error {
	req := make(chan func())
	var ferr error
	err := onPrivateThread(func() error {
		ferr = fn(filepath.Join(Dir, "instances"))
		return nil
	}, req)
	close(req)
	if err != nil {
		return err
	}
	return ferr
}
