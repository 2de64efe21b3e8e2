package labstate

import (
	"time"

	"github.com/emuctl/emuctl/netcfg"
	"github.com/emuctl/emuctl/topo"
)

// Lab status values.
const (
	StatusDeploying = "deploying"
	StatusUp        = "up"
	StatusDown      = "tearing-down"
)

// State is what a lab's state directory records: the resolved Spec and
// every host object made for it, written before and after each phase so a
// crashed `up` can be cleaned from it.
type State struct {
	Lab        string      `json:"lab"`
	Status     string      `json:"status"`
	PID        int         `json:"pid"`       // the emuctl process that deployed it
	PIDStart   uint64      `json:"pid_start"` // its start time, against pid reuse
	Created    time.Time   `json:"created"`
	Ready      time.Time   `json:"ready,omitzero"`
	Namespaces []string    `json:"namespaces"` // created, in creation order
	HostsDirs  []string    `json:"hosts_dirs"` // /etc/netns/<ns> directories created
	Externals  []ExtState  `json:"externals,omitempty"`
	Procs      []Proc      `json:"procs,omitempty"`
	Links      []LinkState `json:"links,omitempty"` // shaped links and how each is built
	// NetCfg is each host's and router's effective TCP profile and MPTCP
	// settings, read back after the netcfg phase (emuctl inspect shows it).
	NetCfg map[string]*netcfg.Applied `json:"netcfg,omitempty"`
	// RootAllowedCCAdded lists what --extend-allowed-cc appended to the
	// host's net.ipv4.tcp_allowed_congestion_control; teardown removes it.
	RootAllowedCCAdded []string `json:"root_allowed_cc_added,omitempty"`
	// OVS is what the lab has in Open vSwitch (ovs switches only; see
	// emu/ovs_instance.go), recorded before anything is created there.
	OVS *OVSState `json:"ovs,omitempty"`
	// NodeEnv is environment emuctl adds to a node's exec, shell and
	// start commands (ovs switches: OVS_RUNDIR and the bridge's name).
	NodeEnv map[string][]topo.KV `json:"node_env,omitempty"`
	// WiFiHops is each station's wireless hop shaping in force (uplink on
	// the station's egress, downlink on its AP's); `link set` changes it
	// (emu/wifi.go).
	WiFiHops []WiFiHop `json:"wifi_hops,omitempty"`
	// Underlay is, for a lab over several machines, the round trips
	// measured between machines joined by tunnels (emu/cluster_underlay.go).
	Underlay []UnderlayPath `json:"underlay,omitempty"`
	// Warnings are what up found that distorts the lab without stopping
	// it (a lab over several machines: cut links near the underlay's
	// capacity, emu/cluster_capacity.go); up prints them.
	Warnings []string `json:"warnings,omitempty"`
	// Medium is the lab's Wi-Fi medium, recorded before its radios exist
	// (emu/wifi_medium.go); the supervisor serves it.
	Medium *MediumState `json:"medium,omitempty"`
	// DocSum is the checksum of the lab's document (topology.yaml) as the
	// Spec's commit wrote it: a document a kill left half-committed (the
	// state of one change, the document of another) does not match, and
	// the Spec is written out instead (emu/change.go withDocument).
	DocSum string `json:"doc_sum,omitempty"`
	// Spec stays last: emu's writeStateSpec puts a Spec's JSON in its place.
	Spec *topo.Spec `json:"spec"`
}

// ExtState is the original state of a real interface taken into the lab.
type ExtState struct {
	HostName string   `json:"host_name"`
	Node     string   `json:"node"`
	Iface    string   `json:"iface"`
	Up       bool     `json:"up"`
	MTU      int      `json:"mtu"`
	Alias    string   `json:"alias"`
	Addrs    []string `json:"addrs"`
	Master   string   `json:"master,omitempty"`
	Moved    bool     `json:"moved"`
	// Wiphy names the radio of a Wi-Fi adapter: a wireless interface
	// cannot change namespace alone, so its whole wiphy is moved (and
	// moved back) instead (emu/wifi_external.go).
	Wiphy string `json:"wiphy,omitempty"`
}

// Proc is a process emuctl started inside a node.
type Proc struct {
	Node    string `json:"node"`
	PID     int    `json:"pid"`
	Start   uint64 `json:"start"` // /proc/<pid>/stat starttime
	Command string `json:"command"`
	Log     string `json:"log"`
}
