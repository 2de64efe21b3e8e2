package labstate

import (
	"github.com/emuctl/emuctl/ovs"
	"github.com/emuctl/emuctl/tc"
)

// OVSState records what a lab has in Open vSwitch: which daemons serve it
// and every bridge and port made for it, so teardown and clean can find
// them (they also find every row and device by the lab's marker).
type OVSState struct {
	// Embedded is true when emuctl's own ovsdb-server + ovs-vswitchd serve
	// the lab (started on demand, stopped after the last lab using them).
	Embedded bool `json:"embedded"`
	// DB is the OVSDB endpoint ("unix:/run/openvswitch/db.sock").
	DB string `json:"db"`
	// RunDir is the daemons' run directory: <bridge>.mgmt sockets, pid
	// files, unixctl sockets.
	RunDir string `json:"run_dir"`
	// ExecRunDir is the OVS_RUNDIR given to exec, shell and start commands
	// of the lab's ovs switches: links named after the switches
	// (<node>.mgmt) so `ovs-ofctl dump-flows s1` works inside s1.
	ExecRunDir string           `json:"exec_run_dir,omitempty"`
	Bridges    []OVSBridgeState `json:"bridges"`
	// Warning says what this Open vSwitch distorts, when it does (the
	// netdev datapath's shared send buffer; see emu/ovs_sndbuf.go).
	Warning string `json:"warning,omitempty"`
	// Group is the device group (IFLA_GROUP) of the lab's port devices in
	// the root namespace; teardown deletes them in one request.
	Group uint32 `json:"group,omitempty"`
}

// OVSBridgeState is one switch node's bridge.
type OVSBridgeState struct {
	Node     string `json:"node"`
	Name     string `json:"name"`     // bridge (and its local port) in OVS
	Datapath string `json:"datapath"` // "system" (kernel) or "netdev"
	// Names is "topology" when the bridge and its ports carry the
	// topology's names (Name is Node, each port's Name its Iface), ""
	// for unique hashed names.
	Names string         `json:"names,omitempty"`
	Ports []OVSPortState `json:"ports"`
}

// OVSPortState is one port: a topology interface of the switch, which
// lives in the root namespace under Name while the lab is up.
type OVSPortState struct {
	Iface    string `json:"iface"`
	Name     string `json:"name"`
	OFPort   int    `json:"ofport"`
	Peer     string `json:"peer,omitempty"`     // node:iface at the other end
	External bool   `json:"external,omitempty"` // a real adapter (restored by down)
	// QoS is "linux-htb" (the topology's qos:), "linux-noop" (emuctl's
	// link shaping owns the port's qdiscs) or "" (none).
	QoS string `json:"qos,omitempty"`
	// QueueLimits are the packet limits of the FIFOs emuctl put under the
	// HTB classes, by queue number (0: kernel default).
	QueueLimits []int `json:"queue_limits,omitempty"`
	// QueueLeaves are the queue disciplines put there instead, by queue
	// number (nil entries: the FIFO of QueueLimits); the Dir carries the
	// class's rate (for RED) and the limit.
	QueueLeaves []*tc.Dir `json:"queue_leaves,omitempty"`
}

// OVSInfo is the live view of a lab's Open vSwitch part, for `emuctl ls`
// and `inspect`: which daemons serve it, the socket to point OVS tools at,
// and per bridge its ports, QoS, queues and counters.
type OVSInfo struct {
	Embedded bool   `json:"embedded"`
	DB       string `json:"db"`
	RunDir   string `json:"run_dir"`
	// ExecRunDir is OVS_RUNDIR inside the lab's ovs switches (emuctl exec
	// s1 -- ovs-ofctl dump-flows s1).
	ExecRunDir string           `json:"exec_run_dir,omitempty"`
	Bridges    []ovs.BridgeInfo `json:"bridges"`
	// Queues are the kernel's counters of every HTB queue, by "node:iface".
	Queues map[string][]QueueStats `json:"queues,omitempty"`
	Error  string                  `json:"error,omitempty"`
}

// QueueStats are the kernel's counters of one OVS queue: its HTB class and
// the FIFO under it.
type QueueStats struct {
	Queue      int    `json:"queue"`
	Class      string `json:"class"` // "1:1"
	Bytes      uint64 `json:"bytes"`
	Packets    uint32 `json:"packets"`
	Drops      uint32 `json:"drops"`
	Overlimits uint32 `json:"overlimits"`
	// Leaf is the FIFO under the class: "pfifo limit 100 (emuctl)", or
	// the kernel's default.
	Leaf       string `json:"leaf"`
	Backlog    uint32 `json:"backlog_bytes"`
	QLen       uint32 `json:"qlen_packets"`
	LeafDrops  uint32 `json:"leaf_drops"`
	LeafLimit  int    `json:"leaf_limit,omitempty"`
	LeafByEmu  bool   `json:"leaf_by_emuctl"`
	ClassFound bool   `json:"class_found"`
}
