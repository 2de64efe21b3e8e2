package netcfg

import (
	"fmt"
	"os"
	"strings"

	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/vishvananda/netns"
)

// do runs fn inside ns (see nsutil.Do).
func do(ns netns.NsHandle, fn func() error) error { return nsutil.Do(ns, fn) }

// sysctlPath maps net.ipv4.tcp_sack to /proc/sys/net/ipv4/tcp_sack; a key
// with slashes is taken as a path (interface names may contain dots).
func sysctlPath(key string) string {
	if strings.Contains(key, "/") {
		return "/proc/sys/" + strings.TrimPrefix(key, "/")
	}
	return "/proc/sys/" + strings.ReplaceAll(key, ".", "/")
}

// readSysctl reads a sysctl of the calling thread's namespace (call it
// inside do), with whitespace normalised ("4096\t131072" -> "4096 131072").
func readSysctl(key string) (string, error) {
	b, err := os.ReadFile(sysctlPath(key))
	if err != nil {
		return "", fmt.Errorf("sysctl %s: %w", key, err)
	}
	return norm(string(b)), nil
}

// writeSysctl writes a sysctl of the calling thread's namespace and reads
// it back; a value the kernel did not keep is an error.
func writeSysctl(key, value string) error {
	if err := os.WriteFile(sysctlPath(key), []byte(value), 0); err != nil {
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
	_, err := os.Stat(sysctlPath(key))
	return err == nil
}
