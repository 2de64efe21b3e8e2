package topo

import (
	"fmt"
	"strconv"
)

// MaxIfaceName is the longest Linux interface name (IFNAMSIZ - 1).
const MaxIfaceName = 15

// checkIfaceName returns what is wrong with an interface name, or "".
// Linux refuses "", ".", "..", names of 16+ bytes and names with '/', ':'
// or whitespace; "all" and "default" would clash with
// /proc/sys/net/*/conf/{all,default}; "lo" exists in every namespace.
func checkIfaceName(s string) string {
	switch s {
	case "", ".", "..":
		return fmt.Sprintf("interface name %q is not valid", s)
	case "lo", "all", "default":
		return fmt.Sprintf("interface name %q is reserved by the kernel: choose another name", s)
	}
	if len(s) > MaxIfaceName {
		return fmt.Sprintf("interface name %q is %d bytes: Linux allows at most %d", clip(s), len(s), MaxIfaceName)
	}
	for _, c := range s {
		if c == '/' || c == ':' || c <= ' ' || c == 0x7f || c > 0x7e {
			return fmt.Sprintf("interface name %q may not contain %q: use letters, digits, '-', '_' or '.'", s, c)
		}
	}
	return ""
}

// defaultIfaceName is Mininet's "<node>-eth<N>".
func defaultIfaceName(node string, n int) string {
	return node + "-eth" + strconv.Itoa(n)
}
