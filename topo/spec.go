package topo

import (
	"net/netip"
	"time"

	"github.com/emuctl/emuctl/units"
	"github.com/emuctl/emuctl/wifi/mobility"
)

// Spec is a resolved, validated, deterministic description of a lab: every
// interface named, every address and route decided. It is pure data; emu
// turns it into kernel objects. Two loads of the same file give equal Specs.
type Spec struct {
	// Name is the lab name: [a-z0-9][a-z0-9_-]*, at most 32 bytes, no dots.
	Name string `json:"name"`
	// Source is the file path or generator string the Spec came from.
	Source string `json:"source"`
	// Nodes in declaration order (generators: h1..hN, then s1..sM, ...).
	Nodes []Node `json:"nodes"`
	// Links in declaration order.
	Links []Link `json:"links"`
	// Routing is "auto" (routes across routers computed) or "none".
	Routing string `json:"routing"`
	// Cluster places the lab on several machines (spec_cluster.go); nil
	// for a lab on this machine alone.
	Cluster *Cluster `json:"cluster,omitempty"`
	// WiFiMedium is the lab's wireless medium (spec_wifi.go); nil when the
	// lab has no Wi-Fi node.
	WiFiMedium *WiFiMedium `json:"wifi_medium,omitempty"`
	// WiFiAdhoc are the lab's ad hoc (IBSS) networks (spec_wifi.go).
	WiFiAdhoc []WiFiAdhoc `json:"wifi_adhoc,omitempty"`
	// WiFiDaemons names the hostapd and wpa_supplicant to run
	// (spec_wifi.go); nil when the file names none.
	WiFiDaemons *WiFiDaemons `json:"wifi_daemons,omitempty"`
	// Schedules are timed link changes (spec_schedule.go), in file order.
	Schedules []Schedule `json:"schedules,omitempty"`
	// Addressing is the plan automatic addresses came from (the file's
	// addressing: with its defaults); run-time changes take new subnets
	// from it (edit.go).
	Addressing *AddressPlan `json:"addressing,omitempty"`
	// MACName is the lab name the interfaces' MACs were derived from,
	// when the lab was renamed after loading (up --name); run-time
	// changes load its document under that name so MACs stay.
	MACName string `json:"mac_name,omitempty"`
	// Document is the topology document the Spec was loaded from (nil
	// for a generated one); run-time changes edit it (edit.go), and the
	// runtime keeps it beside the lab's state.
	Document []byte      `json:"-"`
	pending  *pendingDoc // edit.go: a document still being encoded (DocumentLater)
}

// AddressPlan is a lab's addressing: pool, subnet sizes, automatic or not.
type AddressPlan struct {
	Pool   netip.Prefix `json:"pool"`
	Pool6  netip.Prefix `json:"pool6,omitzero"`
	Prefix int          `json:"prefix"`
	P2P    int          `json:"p2p_prefix"`
	Auto   bool         `json:"auto"`
}

// NodeKind is host, router, switch or root.
type NodeKind string

const (
	KindHost   NodeKind = "host"
	KindRouter NodeKind = "router" // a host with IP forwarding on
	KindSwitch NodeKind = "switch"
	// KindRoot is the machine's own (root) network namespace, as
	// Mininet's Node(inNamespace=False): no namespace is made for it; the
	// lab's links to it have their ends there, under the topology's
	// names, marked as the lab's and removed with it. It gets no routes,
	// sysctls, TCP profile or hosts file (the machine's are its own), and
	// needs --allow-external.
	KindRoot NodeKind = "root"
)

// Switch types.
const (
	SwitchLinuxBridge = "linux-bridge"
	SwitchOVS         = "ovs"
)

// Node is one emulated node. Every node (switches too) gets its own network
// namespace named Namespace(lab, node).
type Node struct {
	Name string   `json:"name"`
	Kind NodeKind `json:"kind"`
	// SwitchType is set for switches only ("linux-bridge" or "ovs").
	SwitchType string `json:"switch_type,omitempty"`
	// STP enables spanning tree on a Linux bridge switch.
	STP bool `json:"stp,omitempty"`
	// Interfaces in the order they were assigned (link order).
	Interfaces []Interface `json:"interfaces"`
	// Routes to install, explicit ones first, then the computed ones.
	Routes []Route `json:"routes,omitempty"`
	// Sysctls written inside the node's namespace, in key order; keys use
	// dots (net.ipv4.tcp_sack).
	Sysctls []KV `json:"sysctls,omitempty"`
	// Env is added to the environment of start commands, exec and shell.
	Env []KV `json:"env,omitempty"`
	// Start holds shell command lines run with /bin/sh -c inside the node
	// after the lab is up, in the background, and stopped on down.
	Start []string `json:"start,omitempty"`
	// TCP and MPTCP are the node's TCP profile and MPTCP settings, applied
	// inside its namespace by package netcfg.
	TCP   *TCPProfile  `json:"tcp,omitempty"`
	MPTCP *MPTCPConfig `json:"mptcp,omitempty"`
	// OVS holds the Open vSwitch settings of a switch of type ovs (always
	// set for those, with defaults resolved; nil for every other node).
	OVS *OVSConfig `json:"ovs,omitempty"`
	// AP and Station hold the Wi-Fi settings of access points and
	// stations (spec_wifi.go); nil for every other node.
	AP      *WiFiAP      `json:"ap,omitempty"`
	Station *WiFiStation `json:"station,omitempty"`
	// Mobility moves an AP or station on the medium while the lab runs
	// (wifi/mobility; decode_mobility.go); nil: it stays at its position.
	Mobility *mobility.Spec `json:"mobility,omitempty"`
}

// KV is one ordered key/value pair.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Interface is a network interface inside a node.
type Interface struct {
	// Name inside the node's namespace (at most 15 bytes).
	Name string `json:"name"`
	// Link is the index into Spec.Links, or -1 for an external interface.
	Link int `json:"link"`
	// Peer names the other end "node:iface" (empty for external).
	Peer string `json:"peer,omitempty"`
	// Addrs are the addresses with prefix length (IPv4 and/or IPv6).
	Addrs []netip.Prefix `json:"addrs,omitempty"`
	// MAC is a deterministic locally administered address; empty for
	// external interfaces, which keep their own.
	MAC string `json:"mac"`
	// MTU (default 1500); 0 for external interfaces, left as found.
	MTU int `json:"mtu"`
	// External is set when this interface is an existing host interface
	// moved into the node (or, for a switch, attached as a port).
	External *External `json:"external,omitempty"`
	// Wireless marks the Wi-Fi interface of an AP or station (Link is -1):
	// a mac80211_hwsim radio's interface, created by package wifi.
	Wireless bool `json:"wireless,omitempty"`
}

// External describes a real host interface taken into the lab.
type External struct {
	// HostName is the interface's name in the root namespace.
	HostName string `json:"host_name"`
	// Force allows the interface that carries the default route.
	Force bool `json:"force,omitempty"`
}

// Link joins two interfaces with a veth pair.
type Link struct {
	A Endpoint `json:"a"`
	B Endpoint `json:"b"`
	// Name is the link's optional name (schedules and link commands use
	// it); unique among links and distinct from every node name.
	Name string `json:"name,omitempty"`
	// Params are the shaping parameters (parsed now, applied by tc/).
	Params *LinkParams `json:"params,omitempty"`
	// Pos is "file:line:col" of the link in its source, for messages.
	Pos string `json:"pos,omitempty"`
}

// Endpoint is one end of a link.
type Endpoint struct {
	Node  string `json:"node"`
	Iface string `json:"iface"`
}

// String renders "node:iface".
func (e Endpoint) String() string { return e.Node + ":" + e.Iface }

// Route is a static route. Dst 0.0.0.0/0 or ::/0 is a default route.
type Route struct {
	Dst netip.Prefix `json:"dst"`
	Via netip.Addr   `json:"via,omitzero"`
	// Dev is the outgoing interface name, optional when Via is on-link.
	Dev string `json:"dev,omitempty"`
	// Auto marks routes computed by automatic routing.
	Auto bool `json:"auto,omitempty"`
}

// LinkParams are the link-shaping settings of one link, both directions
// unless AtoB/BtoA override. Zero values mean "not set".
type LinkParams struct {
	Rate   units.BitRate `json:"rate_bps,omitempty"`
	Delay  time.Duration `json:"delay,omitempty"` // one-way
	Jitter time.Duration `json:"jitter,omitempty"`
	Loss   units.Percent `json:"loss_pct,omitempty"` // 0..100
	Queue  *Queue        `json:"queue,omitempty"`
	// JitterDist is the distribution of the jitter: "uniform" (delay ±
	// jitter), "normal" (σ = jitter) or "pareto"; "" means uniform. Set
	// only together with Jitter.
	JitterDist string `json:"jitter_dist,omitempty"`
	// Reorder lets jitter reorder packets; false (the default) keeps them
	// in order. Set only together with Jitter.
	Reorder bool `json:"reorder,omitempty"`
	// GE is Gilbert-Elliott burst loss (netem's "loss gemodel"); never set
	// together with Loss.
	GE        *units.GilbertElliott `json:"ge,omitempty"`
	Duplicate units.Percent         `json:"duplicate_pct,omitempty"` // 0..100
	Corrupt   units.Percent         `json:"corrupt_pct,omitempty"`   // 0..100
	// Backend implements the link: "auto" (netem where the kernel has it,
	// else the userspace link engine), "kernel" (tc qdiscs only) or
	// "userspace" (the link engine); "" means auto. The same in both
	// directions.
	Backend string `json:"backend,omitempty"`
	// Trace replaces Rate with a mahimahi delivery trace
	// (spec_schedule.go); its queue is mahimahi's (Queue: droptail or
	// drophead limits counting waiting packets, none = infinite). Order
	// is the stage order when it is mahimahi's (a mahimahi: line).
	Trace *Trace   `json:"trace,omitempty"`
	Order []string `json:"order,omitempty"`
	// Per-direction overrides ("a->b", "b->a"); nil when symmetric. When
	// set they are complete (already merged with the symmetric values and
	// defaults); use Dir to get one direction's effective parameters.
	AtoB *LinkParams `json:"a_to_b,omitempty"`
	BtoA *LinkParams `json:"b_to_a,omitempty"`
}

// Queue is a direction's bottleneck queue: its limit (at most one of
// Packets, Bytes, BDP; none: the discipline's default) and its discipline
// with the parameters the file sets (queue.go; zero: the default).
type Queue struct {
	Packets int         `json:"packets,omitempty"`
	Bytes   units.Bytes `json:"bytes,omitempty"`
	BDP     float64     `json:"bdp,omitempty"` // multiple of the bandwidth-delay product
	// Discipline is droptail ("" too), drophead, codel, fq_codel, pie,
	// red or cake.
	Discipline string `json:"discipline,omitempty"`
	// ECN: nil is the discipline's default (fq_codel and cake mark).
	ECN      *bool         `json:"ecn,omitempty"`
	Target   time.Duration `json:"target,omitempty"`   // codel, fq_codel, cake; pie's reference delay
	Interval time.Duration `json:"interval,omitempty"` // codel, fq_codel; cake's rtt
	Flows    int           `json:"flows,omitempty"`    // fq_codel
	Quantum  int           `json:"quantum,omitempty"`  // fq_codel, bytes
	TUpdate  time.Duration `json:"tupdate,omitempty"`  // pie
	Alpha    float64       `json:"alpha,omitempty"`    // pie
	Beta     float64       `json:"beta,omitempty"`     // pie
	// Min, Max, Probability, Weight and Gentle are RED's.
	Min         QueueSize     `json:"min,omitzero"`
	Max         QueueSize     `json:"max,omitzero"`
	Probability units.Percent `json:"probability,omitempty"`
	Weight      float64       `json:"weight,omitempty"`
	Gentle      bool          `json:"gentle,omitempty"`
	// At is "file:line:col" of the queue: mapping, for deploy-time
	// messages (a discipline the kernel lacks on a pinned backend).
	At string `json:"at,omitempty"`
}

// TCPProfile is a node's TCP settings (applied by package netcfg).
type TCPProfile struct {
	CongestionControl string `json:"congestion_control,omitempty"`
	SACK              *bool  `json:"sack,omitempty"`
	Timestamps        *bool  `json:"timestamps,omitempty"`
	WindowScaling     *bool  `json:"window_scaling,omitempty"`
	ECN               *int   `json:"ecn,omitempty"` // tcp_ecn 0, 1, 2 (true in the file is 1, false 0)
	NoMetricsSave     *bool  `json:"no_metrics_save,omitempty"`
	Rmem              []int  `json:"rmem,omitempty"` // min default max
	Wmem              []int  `json:"wmem,omitempty"`
	Recovery          *int   `json:"recovery,omitempty"`
	EarlyRetrans      *int   `json:"early_retrans,omitempty"`
	// BacklogACKDefer is tcp_backlog_ack_defer (Linux >= 6.7): ACKs due
	// while the socket's backlog is processed are sent as one. false
	// restores an ACK per segment under quickack; on older kernels,
	// which never defer, false holds as it is.
	BacklogACKDefer *bool `json:"backlog_ack_defer,omitempty"`
	// Sysctls are further net.* settings written in the node after the
	// profile's own keys (the escape hatch); node keys win over defaults.
	Sysctls []KV `json:"sysctls,omitempty"`
	// Routes set TCP metrics on the node's routes, as `ip route ...
	// quickack 1 initcwnd 10 congctl bbr` would; entries apply in order,
	// later ones overriding the fields they set.
	Routes []TCPRoute `json:"routes,omitempty"`
	// CongestionControlAt is "file:line:col: path" of congestion_control,
	// for deploy-time checks against the running kernel.
	CongestionControlAt string `json:"congestion_control_at,omitempty"`
}

// TCPRoute is one tcp.routes entry: TCP metrics for the routes it selects.
type TCPRoute struct {
	// To is "all" (every unicast route of the node, connected subnets
	// included), "default", or a prefix that must be one of the node's
	// routes or connected subnets.
	To       string `json:"to"`
	Quickack bool   `json:"quickack,omitempty"` // RTAX_QUICKACK 1: ACK every segment
	InitCwnd int    `json:"initcwnd,omitempty"` // segments
	InitRwnd int    `json:"initrwnd,omitempty"` // segments
	Congctl  string `json:"congctl,omitempty"`  // RTAX_CC_ALGO
	// Optional is set for entries from defaults.tcp: they apply to the
	// nodes that have a matching route and are skipped elsewhere.
	Optional bool `json:"optional,omitempty"`
	// At is "file:line:col: path" of the entry, for deploy-time messages.
	At   string `json:"at,omitempty"`
	at   loc    // of the entry
	toAt loc    // of its to: value
}

// MPTCPConfig is a node's MPTCP settings (applied by package netcfg).
type MPTCPConfig struct {
	Enabled         *bool           `json:"enabled,omitempty"`
	PathManager     string          `json:"path_manager,omitempty"` // kernel|userspace
	Scheduler       string          `json:"scheduler,omitempty"`
	Subflows        *int            `json:"subflows,omitempty"`          // 0..8
	AddAddrAccepted *int            `json:"add_addr_accepted,omitempty"` // 0..8
	Endpoints       []MPTCPEndpoint `json:"endpoints,omitempty"`
	PolicyRouting   *bool           `json:"policy_routing,omitempty"`
	// AutoEndpoints is `endpoints: auto`: every address on the node's
	// interfaces after its first addressed one is announced (signal), and
	// every node with an mptcp: block and no limits: gets limits that
	// accept them. netcfg expands it (see netcfg.PlanMPTCP).
	AutoEndpoints bool `json:"auto_endpoints,omitempty"`
	// SchedulerAt is "file:line:col: path" of scheduler, for deploy-time
	// checks against the kernel's available schedulers.
	SchedulerAt string `json:"scheduler_at,omitempty"`
}

// MPTCPEndpoint is one mptcp_pm endpoint.
type MPTCPEndpoint struct {
	Address   netip.Addr `json:"address,omitzero"`
	Interface string     `json:"interface,omitempty"`
	Flags     []string   `json:"flags,omitempty"` // signal subflow backup fullmesh
	ID        int        `json:"id,omitempty"`
	Port      int        `json:"port,omitempty"`
}

// Namespace returns the network namespace name of a node: "<lab>.<node>".
// Lab and node names never contain dots, so the mapping is unambiguous.
func Namespace(lab, node string) string { return lab + "." + node }

// Node returns the node with the given name, or nil.
func (s *Spec) Node(name string) *Node {
	for i := range s.Nodes {
		if s.Nodes[i].Name == name {
			return &s.Nodes[i]
		}
	}
	return nil
}

// Iface returns the node's interface of that name, or nil (also for a
// nil node).
func (n *Node) Iface(name string) *Interface {
	if n == nil {
		return nil
	}
	for i := range n.Interfaces {
		if n.Interfaces[i].Name == name {
			return &n.Interfaces[i]
		}
	}
	return nil
}

// Hosts returns the hosts and routers in order (not switches, nor the
// machine's own namespace, kind root).
func (s *Spec) Hosts() []*Node {
	var out []*Node
	for i := range s.Nodes {
		if k := s.Nodes[i].Kind; k == KindHost || k == KindRouter {
			out = append(out, &s.Nodes[i])
		}
	}
	return out
}
