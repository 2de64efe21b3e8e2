// Package proc reads what emuctl needs to know about a process from
// /proc: its start time, which tells a process from a later one that
// reuses its pid, so emuctl only ever signals or judges the process it
// recorded.
package proc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Start returns pid's start time (clock ticks since boot, field 22 of
// /proc/PID/stat).
func Start(pid int) (uint64, error) {
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

// Alive reports whether pid runs and, when start is not 0, is the process
// that started then (not a later one with the same pid).
func Alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	s, err := Start(pid)
	if err != nil {
		return false
	}
	return start == 0 || s == start
}
