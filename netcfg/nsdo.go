package netcfg

import (
	"fmt"
	"strings"

	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/emuctl/emuctl/internal/sysctl"
	"github.com/vishvananda/netns"
)

// do runs fn inside ns (see nsutil.Do).
func do(ns netns.NsHandle, fn func() error) error { return nsutil.Do(ns, fn) }

// readSysctl reads a sysctl of the calling thread's namespace (call it
// inside do), with whitespace normalised ("4096\t131072" -> "4096 131072").
func readSysctl(key string) (string, error) {
	b, err := sysctl.Read(key)
	if err != nil {
		return "", fmt.Errorf("sysctl %s: %w", key, err)
	}
	return norm(string(b)), nil
}

// writeSysctl writes a sysctl of the calling thread's namespace and reads
// it back; a value the kernel did not keep is an error.
func writeSysctl(key, value string) error {
	if err := sysctl.Write(key, value); err != nil {
		return fmt.Errorf("sysctl %s=%s: %w", key, value, err)
	}
	got, err := readSysctl(key)
	if err != nil {
		return err
	}
	if got != norm(value) {
		return fmt.Errorf("sysctl %s=%s: the kernel kept %q", key, value, got)
	}
	return nil
}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// hasSysctl reports whether a sysctl exists in the calling thread's
// namespace.
func hasSysctl(key string) bool {
	return sysctl.Exists(key)
}
