package emu

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/internal/proc"
)

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
		if proc.Alive(pid, st) {
			syscall.Kill(pid, syscall.SIGTERM)
			live[pid] = st
		}
	}
	deadline := time.Now().Add(grace)
	for len(live) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		for pid, st := range live {
			if !proc.Alive(pid, st) || isZombie(pid) {
				delete(live, pid)
			}
		}
	}
	for pid, st := range live {
		if proc.Alive(pid, st) {
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
