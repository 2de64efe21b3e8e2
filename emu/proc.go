package emu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procStart returns the start time (clock ticks since boot) of a process,
// field 22 of /proc/<pid>/stat, used to tell a process from a later one that
// reused its pid.
func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("bad stat")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 {
		return 0, errors.New("short stat")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// pidsInNetns returns the processes whose network namespace has inode ino.
func pidsInNetns(inos map[uint64]bool) map[uint64][]int {
	out := map[uint64][]int{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		ino, err := nsInode(filepath.Join("/proc", e.Name(), "ns", "net"))
		if err != nil {
			continue
		}
		if inos[ino] {
			out[ino] = append(out[ino], pid)
		}
	}
	return out
}

// stopPIDs sends SIGTERM to each pid (whose start time still matches),
// waits up to grace, then SIGKILLs what is left. Gone is done.
func stopPIDs(pids map[int]uint64, grace time.Duration) {
	live := map[int]uint64{}
	for pid, st := range pids {
		if alive(pid, st) {
			syscall.Kill(pid, syscall.SIGTERM)
			live[pid] = st
		}
	}
	deadline := time.Now().Add(grace)
	for len(live) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		for pid, st := range live {
			if !alive(pid, st) || isZombie(pid) {
				delete(live, pid)
			}
		}
	}
	for pid, st := range live {
		if alive(pid, st) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
