package emu

import (
	"maps"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// A process that changes one lab many times (emuctl api, a Go program
// using package lab, bench --change) would otherwise decode the lab's
// state and read its document again for every change: for a 100-node lab
// that was a quarter of a change's time. The state a change commits is
// kept here with the identity of the file it wrote (device, inode, size,
// modification and change times: writeAtomic puts a new file in the
// old one's place, so any other writer — another process, link set in this one —
// gives the file a new identity); the next change of this process takes
// it instead of reading the file only while the file is still exactly
// that one. Changes hold the lab's lock from reading the state to
// committing it, so what the file says cannot change between the check
// and the use. A change that fails leaves nothing here: the next one
// reads the file.

type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
}

func stampOf(path string) (fileStamp, bool) {
	var s unix.Stat_t
	if err := unix.Stat(path, &s); err != nil {
		return fileStamp{}, false
	}
	return fileStamp{dev: s.Dev, ino: s.Ino, size: s.Size, mtime: s.Mtim, ctime: s.Ctim}, true
}

var changeCache = struct {
	sync.Mutex
	m map[string]cachedState
}{m: map[string]cachedState{}}

type cachedState struct {
	stamp fileStamp
	st    *State
}

// readStateForChange is the lab's state with its document, for a change
// (the lab's lock held): the one this process committed last if the
// state file is still the one it wrote, else read from the file.
func readStateForChange(lab string) (*State, error) {
	changeCache.Lock()
	c, ok := changeCache.m[lab]
	delete(changeCache.m, lab) // the change owns it now
	changeCache.Unlock()
	if ok {
		if now, ok := stampOf(statePath(lab)); ok && now == c.stamp {
			return c.st, nil
		}
	}
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	withDocument(st)
	return st, nil
}

// keepCommitted records the state a change has just committed (the lab's
// lock still held) for the next change of this process. Labs with Open
// vSwitch or a Wi-Fi medium are not kept: their changes edit nested
// records in place, and this cache only copies the top level.
func keepCommitted(st *State) {
	if st.OVS != nil || st.Medium != nil || st.Spec == nil || st.Spec.Document == nil {
		return
	}
	stamp, ok := stampOf(statePath(st.Lab))
	if !ok {
		return
	}
	// the caller keeps st: the next change edits its own copy of the
	// top level (the Spec is never edited in place: an edit makes a new one)
	c := *st
	c.Namespaces = slices.Clone(st.Namespaces)
	c.HostsDirs = slices.Clone(st.HostsDirs)
	c.Externals = slices.Clone(st.Externals)
	c.Procs = slices.Clone(st.Procs)
	c.Links = slices.Clone(st.Links)
	c.NetCfg = maps.Clone(st.NetCfg)
	c.RootAllowedCCAdded = slices.Clone(st.RootAllowedCCAdded)
	c.NodeEnv = maps.Clone(st.NodeEnv)
	c.WiFiHops = slices.Clone(st.WiFiHops)
	c.Underlay = slices.Clone(st.Underlay)
	c.Warnings = slices.Clone(st.Warnings)
	changeCache.Lock()
	changeCache.m[st.Lab] = cachedState{stamp: stamp, st: &c}
	changeCache.Unlock()
}
