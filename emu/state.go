package emu

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/tc/engine"
	"golang.org/x/sys/unix"
)

// RunDir holds one state directory per lab. EMUCTL_RUN_DIR overrides it.
func RunDir() string {
	if d := os.Getenv("EMUCTL_RUN_DIR"); d != "" {
		return d
	}
	return "/run/emuctl"
}

func stateDir(lab string) string  { return filepath.Join(RunDir(), lab) }
func statePath(lab string) string { return filepath.Join(stateDir(lab), "state.json") }

// StateDir returns the state directory of a lab.
func StateDir(lab string) string { return stateDir(lab) }

// writeState saves st atomically.
func writeState(st *State) error {
	return writeStateSpec(st, nil)
}

// writeStateSpec is writeState with st.Spec given as its JSON (nil: st.Spec
// encoded now): a change writes its new Spec more than once before its
// commit, and encoding a Spec is most of the cost.
func writeStateSpec(st *State, spec json.RawMessage) error {
	if err := os.MkdirAll(stateDir(st.Lab), 0o755); err != nil {
		return err
	}
	var b []byte
	var err error
	if spec == nil {
		b, err = json.Marshal(st) // compact: indenting cost more than encoding (a change writes it 2-3 times)
	} else {
		// State with no Spec ends `"spec":null}` (spec is its last field):
		// the Spec's JSON goes in its place, as json.Marshal would write it,
		// without checking and compacting its bytes once more
		c := *st
		c.Spec = nil
		if b, err = json.Marshal(&c); err == nil {
			const tail = `"spec":null}`
			if !bytes.HasSuffix(b, []byte(tail)) {
				return fmt.Errorf("state of lab %s: its JSON does not end with its spec", st.Lab)
			}
			b = append(append(b[:len(b)-len(`null}`)], spec...), '}')
		}
	}
	if err != nil {
		return err
	}
	return writeAtomic(statePath(st.Lab), b)
}

// writeAtomic replaces a file by a whole new one (a reader never sees
// half of it): written beside it, then swapped with it (RENAME_EXCHANGE)
// and the old one unlinked. A rename over it would do the same for
// readers, but ext4 (auto_da_alloc) writes a file renamed over another
// out to disk before the rename returns — for a power loss, which a
// lab's state under /run does not outlive anyway: 0.18–0.27 ms a file
// here against 0.08 ms swapped. The first write (nothing to swap with)
// and a file system that cannot swap rename.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE); err == nil {
		os.Remove(tmp) // the old file (left, it is written over next time)
		return nil
	}
	return os.Rename(tmp, path)
}

// engineStats are the lab's userspace engines' counters by link index
// (none when the lab has no supervisor or it does not answer).
func engineStats(st *State) map[int]engine.Stats {
	for _, p := range st.Procs {
		if p.Command == "supervisor" {
			if resp, err := supervisorCall(st.Lab, ctlRequest{Op: "stats"}); err == nil {
				return resp.Stats
			}
		}
	}
	return nil
}

// ReadState loads a lab's state.
func ReadState(lab string) (*State, error) {
	b, err := os.ReadFile(statePath(lab))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("lab %q: %w", lab, ErrNoLab)
		}
		return nil, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("lab %q: corrupt state %s: %w", lab, statePath(lab), err)
	}
	return &st, nil
}

// ErrNoLab is returned when a lab does not exist.
var ErrNoLab = errors.New("no such lab")

// Labs lists the labs that have a state directory, sorted by name.
func Labs() ([]*State, error) {
	ents, err := os.ReadDir(RunDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*State
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		st, err := ReadState(e.Name())
		if err != nil {
			continue
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Lab < out[j].Lab })
	return out, nil
}

// lockLab takes an exclusive lock on the lab's lock file so two emuctl
// processes never deploy or tear down the same lab at once.
func lockLab(lab string) (func(), error) {
	if err := os.MkdirAll(RunDir(), 0o755); err != nil {
		return nil, err
	}
	unlock, err := flockRun("."+lab+".lock", unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, fmt.Errorf("lab %q is being changed by another emuctl process", lab)
	}
	return unlock, err
}

// flockRun takes an exclusive lock on a file in the run dir (how: 0 to
// wait, LOCK_NB to fail at once with EWOULDBLOCK).
func flockRun(name string, how int) (func(), error) {
	if err := os.MkdirAll(RunDir(), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(RunDir(), name), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|how); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

// removeLockFile removes the lock file of a lab that is gone.
func removeLockFile(lab string) {
	os.Remove(filepath.Join(RunDir(), "."+lab+".lock"))
}

// StateCache reads a lab's state again only when its file changed (a
// save replaces the file: another inode, modification time or size), for
// readers that look many times a second (an event stream). The State it
// returns is shared between calls: read it, never change it.
type StateCache struct {
	ino  uint64
	mod  time.Time
	size int64
	st   *State
}

// Read returns the lab's state, from the last read when the file has not
// changed since.
func (c *StateCache) Read(lab string) (*State, error) {
	fi, err := os.Stat(statePath(lab))
	if err != nil {
		c.st = nil
		return ReadState(lab) // its error, or a state saved meanwhile
	}
	var ino uint64
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = s.Ino
	}
	if c.st != nil && ino == c.ino && fi.ModTime().Equal(c.mod) && fi.Size() == c.size {
		return c.st, nil
	}
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	c.ino, c.mod, c.size, c.st = ino, fi.ModTime(), fi.Size(), st
	return st, nil
}
