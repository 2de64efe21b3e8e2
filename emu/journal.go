package emu

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// The journal closes the windows between "an object exists" and "the
// object carries the lab's marker": before emuctl makes a host object that
// cannot carry the marker at birth (a file under /run/netns, a directory
// under /etc/netns, a detached process), it appends an intent line to the
// lab's journal (state dir, append-only, one write per line), and, where
// the object has an identity the kernel gives it (an inode, a pid), a
// second line once it has one. `clean`, `down` and rollback read it to
// remove exactly those remains, and nothing of the same name that emuctl
// did not make.
//
// Lines: "<kind> <field>..." with kinds
//
//	anchor <path>            intent: the lab's namespace anchor file
//	anchor-ino <dev> <ino>   the anchor exists; every /run/netns file of the lab is a hard link to it
//	hostsdir <path>          intent: a directory under /etc/netns
//	rootlink <name>          intent: a device in the root namespace (an OVS port end), marked only after creation
//	proc-intent <what>       a detached process is about to start
//	proc <pid> <start> <what> it started (it waits for "go" before doing anything)
//	phase <name>             deploy reached a phase (tests and soak counts)
//	teardown <step>          teardown reached a step
const journalName = "journal"

func journalPath(lab string) string { return filepath.Join(stateDir(lab), journalName) }

// journal appends lines to one lab's journal.
type journal struct {
	mu sync.Mutex
	f  *os.File
}

// openJournal opens (creating) the lab's journal for appending. The state
// dir must exist.
func openJournal(lab string) (*journal, error) {
	f, err := os.OpenFile(journalPath(lab), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &journal{f: f}, nil
}

// add appends one line; a single write, so a kill leaves whole lines.
func (j *journal) add(fields ...string) error {
	if j == nil {
		return nil
	}
	line := strings.Join(fields, " ") + "\n"
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.WriteString(line); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

func (j *journal) close() {
	if j != nil {
		j.f.Close()
	}
}

// journalRecord is what a lab's journal says it made or was about to make.
type journalRecord struct {
	Anchors    []string // anchor file paths (intents)
	AnchorInos []fileID // inodes every namespace file of the lab links to
	HostsDirs  []string // /etc/netns directories about to be made
	RootLinks  []string // root-namespace devices about to be made
	Procs      []Proc   // detached processes started
	Phases     []string // deploy phases reached, in order
	Teardown   []string // teardown steps reached, in order
}

type fileID struct{ Dev, Ino uint64 }

// readJournal parses a lab's journal; a missing journal is empty, and a
// torn last line (a write the kernel never finished) is skipped.
func readJournal(lab string) journalRecord {
	var r journalRecord
	f, err := os.Open(journalPath(lab))
	if err != nil {
		return r
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		switch fs[0] {
		case "anchor":
			r.Anchors = append(r.Anchors, fs[1])
		case "anchor-ino":
			if len(fs) == 3 {
				dev, e1 := strconv.ParseUint(fs[1], 10, 64)
				ino, e2 := strconv.ParseUint(fs[2], 10, 64)
				if e1 == nil && e2 == nil {
					r.AnchorInos = append(r.AnchorInos, fileID{dev, ino})
				}
			}
		case "hostsdir":
			r.HostsDirs = append(r.HostsDirs, fs[1])
		case "rootlink":
			r.RootLinks = append(r.RootLinks, fs[1])
		case "proc":
			if len(fs) >= 4 {
				pid, e1 := strconv.Atoi(fs[1])
				start, e2 := strconv.ParseUint(fs[2], 10, 64)
				if e1 == nil && e2 == nil {
					r.Procs = append(r.Procs, Proc{PID: pid, Start: start, Command: strings.Join(fs[3:], " ")})
				}
			}
		case "phase":
			r.Phases = append(r.Phases, fs[1])
		case "teardown":
			r.Teardown = append(r.Teardown, fs[1])
		}
	}
	return r
}

// LastPhase returns the last deploy phase and teardown step a lab's
// journal records ("" when none): where a killed `up` or `down` stopped.
func LastPhase(lab string) (deploy, teardown string) {
	r := readJournal(lab)
	if n := len(r.Phases); n > 0 {
		deploy = r.Phases[n-1]
	}
	if n := len(r.Teardown); n > 0 {
		teardown = r.Teardown[n-1]
	}
	return deploy, teardown
}
