package lab

import (
	"fmt"
	"strconv"
	"strings"
)

// NodeOption sets something on a node added by Host, Router, Switch,
// AccessPoint or Station. Options never fail when made: whether one fits
// the node (STP on a host, say) is checked by Spec with the file's rules,
// and the message names the call.
type NodeOption struct {
	call  string
	apply func(n *mapping, call string)
}

func nodeOpt(call string, apply func(n *mapping, call string)) NodeOption {
	return NodeOption{call: call, apply: apply}
}

// Route adds a static route in the file's syntax: "default via 10.0.0.254",
// "192.168.50.0/24 via 10.0.0.254 dev h1-eth0".
func Route(route string) NodeOption {
	return nodeOpt("Route("+strconv.Quote(route)+")", func(n *mapping, call string) {
		n.add([]string{"routes"}, route, call)
	})
}

// Sysctl sets a net.* sysctl inside the node: Sysctl("net.ipv4.tcp_sack", "0").
func Sysctl(key, val string) NodeOption {
	return nodeOpt(fmt.Sprintf("Sysctl(%q, %q)", key, val), func(n *mapping, call string) {
		n.child("sysctls", call).set([]string{key}, val, call)
	})
}

// Env adds a variable to the environment of the node's start commands and
// of commands run in it.
func Env(key, val string) NodeOption {
	return nodeOpt(fmt.Sprintf("Env(%q, %q)", key, val), func(n *mapping, call string) {
		n.child("env", call).set([]string{key}, val, call)
	})
}

// Start adds a command line run with /bin/sh -c inside the node once the
// lab is up, in the background, and stopped by Down.
func Start(cmdline string) NodeOption {
	return nodeOpt("Start("+strconv.Quote(cmdline)+")", func(n *mapping, call string) {
		n.add([]string{"start"}, cmdline, call)
	})
}

// CC sets the node's default TCP congestion control (tcp.congestion_control).
func CC(name string) NodeOption {
	return nodeOpt("CC("+strconv.Quote(name)+")", func(n *mapping, call string) {
		n.child("tcp", call).set([]string{"congestion_control"}, name, call)
	})
}

// OVS makes a switch an Open vSwitch bridge (type: ovs).
func OVS() NodeOption {
	return nodeOpt("OVS()", func(n *mapping, call string) { n.set([]string{"type"}, "ovs", call) })
}

// LinuxBridge makes a switch a Linux bridge (type: linux-bridge), the
// default unless DefaultSwitch says otherwise.
func LinuxBridge() NodeOption {
	return nodeOpt("LinuxBridge()", func(n *mapping, call string) { n.set([]string{"type"}, "linux-bridge", call) })
}

// STP turns spanning tree on for a switch.
func STP() NodeOption {
	return nodeOpt("STP()", func(n *mapping, call string) { n.set([]string{"stp"}, value(true), call) })
}

// SSID sets an access point's SSID, or the SSID a station joins.
func SSID(ssid string) NodeOption {
	return nodeOpt("SSID("+strconv.Quote(ssid)+")", func(n *mapping, call string) {
		n.child("wifi", call).set([]string{"ssid"}, ssid, call)
	})
}

// AP names the access point a station associates with.
func AP(name string) NodeOption {
	return nodeOpt("AP("+strconv.Quote(name)+")", func(n *mapping, call string) {
		n.child("wifi", call).set([]string{"ap"}, name, call)
	})
}

// WiFi sets one key of a Wi-Fi node's wifi: block: WiFi("mode", "ax"),
// WiFi("band", 5), WiFi("channel", 36), WiFi("passphrase", "...").
func WiFi(key string, v any) NodeOption {
	return nodeOpt(fmt.Sprintf("WiFi(%q, %s)", key, flow(value(v))), func(n *mapping, call string) {
		n.child("wifi", call).set([]string{key}, value(v), call)
	})
}

// WirelessLink shapes a station's wireless hop like a wired link (AtoB is
// the uplink, station to AP; BtoA the downlink).
func WirelessLink(opts ...LinkOption) NodeOption {
	return nodeOpt("WirelessLink("+optCalls(opts)+")", func(n *mapping, call string) {
		n.child("wifi", call).set([]string{"link"}, linkParams(opts, call), call)
	})
}

// Position places an access point or station for the Wi-Fi medium's path
// loss, in metres.
func Position(x, y, z float64) NodeOption {
	return nodeOpt(fmt.Sprintf("Position(%g, %g, %g)", x, y, z), func(n *mapping, call string) {
		n.set([]string{"position"}, value([]float64{x, y, z}), call)
	})
}

// Field sets any key of the node by its dotted path, for what has no
// option of its own: Field("tcp.sack", false), Field("mptcp.enabled",
// true), Field("tcp.rmem", []int{4096, 131072, 6291456}). Values are
// written in the file's syntax and checked like the file.
func Field(path string, v any) NodeOption {
	return nodeOpt(fmt.Sprintf("Field(%q, %s)", path, flow(value(v))), func(n *mapping, call string) {
		n.set(strings.Split(path, "."), value(v), call)
	})
}
