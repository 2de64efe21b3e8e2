package ovs

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// MaxIfName is the longest Linux interface name (IFNAMSIZ - 1). OVS
// bridges and ports are network devices, so their names obey it too.
const MaxIfName = 15

var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// DeviceName returns the name of a bridge or port device that emuctl
// creates in the namespace of ovs-vswitchd, where every lab's switches
// meet: a readable stem (the switch or interface name, cut to 9 bytes), a
// dot, and 5 base32 characters hashed from lab, node, iface and salt, so
// equal names of different labs do not collide ("s1-eth1.k3f9a",
// "s1.x2mqa"). Node and interface names never contain dots, so no user
// device named after a lab object looks like one. A caller that finds the
// name taken retries with the next salt.
func DeviceName(lab, node, iface string, salt int) string {
	stem := node
	if iface != "" {
		stem = iface
	}
	stem = strings.ReplaceAll(stem, ".", "-")
	if len(stem) > MaxIfName-6 {
		stem = stem[:MaxIfName-6]
	}
	h := sha256.Sum256([]byte(lab + "\x00" + node + "\x00" + iface + "\x00" + string(rune('0'+salt))))
	return stem + "." + b32.EncodeToString(h[:])[:5]
}

// DatapathID derives a bridge's 16-hex-digit OpenFlow datapath id the way
// Mininet does: from the digits in the switch name (s12 -> 12), so
// controllers see the numbers they know. Switches without digits, and
// salt > 0 (the caller's retry when two switches of a lab share their
// digits), get a hash of lab, node and salt.
func DatapathID(node, lab string, salt int) string {
	digits := ""
	for _, c := range node {
		if c >= '0' && c <= '9' {
			digits += string(c)
		}
	}
	const hexd = "0123456789abcdef"
	if salt == 0 && digits != "" && len(digits) <= 15 {
		var v uint64
		for _, c := range digits {
			v = v*10 + uint64(c-'0')
		}
		if v > 0 {
			return hex16(v)
		}
	}
	h := sha256.Sum256([]byte(lab + "\x00" + node + "\x00" + string(rune('0'+salt))))
	var b strings.Builder
	b.WriteString("00")
	for _, x := range h[:7] {
		b.WriteByte(hexd[x>>4])
		b.WriteByte(hexd[x&15])
	}
	return b.String()
}

func hex16(v uint64) string {
	const hexd = "0123456789abcdef"
	out := make([]byte, 16)
	for i := 15; i >= 0; i-- {
		out[i] = hexd[v&15]
		v >>= 4
	}
	return string(out)
}
