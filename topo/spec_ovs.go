package topo

import "github.com/emuctl/emuctl/units"

// OVSConfig is the Open vSwitch behaviour of a switch of type ovs. Every
// ovs switch of a Spec has one (with the defaults resolved); other nodes
// have none.
type OVSConfig struct {
	// Datapath pins the datapath: "kernel" (the openvswitch module) or
	// "netdev" (the userspace datapath). "" picks one at deploy time: the
	// kernel datapath when the module is loaded, else netdev.
	Datapath string `json:"datapath,omitempty"`
	// FailMode is "standalone" (default: an L2 learning switch whenever no
	// controller is in charge) or "secure" (only the controllers' flows).
	FailMode string `json:"fail_mode"`
	// Controllers are OpenFlow controller targets: "tcp:IP:PORT" (the port
	// is filled in: 6653 when omitted), "ptcp:PORT[:IP]" or "unix:PATH".
	Controllers []string `json:"controllers,omitempty"`
	// Protocols are the OpenFlow versions the bridge speaks
	// ("OpenFlow10" .. "OpenFlow15"); empty means OVS's default.
	Protocols []string `json:"protocols,omitempty"`
	// RSTP enables rapid spanning tree (802.1w); Node.STP enables classic
	// 802.1D spanning tree. At most one of them is set.
	RSTP bool `json:"rstp,omitempty"`
	// Names says how the bridge and its port devices are named in the
	// root namespace and in the OVS database: "" (names: unique, the
	// default) gives short unique names hashed from lab, node and
	// interface ("s1.x2mqa", "s1-eth1.k3f9a"), so labs may share switch
	// names; OVSNamesTopology gives exactly the switch's and its
	// interfaces' names ("s1", "s1-eth1"), as Mininet does, so that one
	// lab at a time on a host may use them.
	Names string `json:"names,omitempty"`
	// NamesAt is "file:line:col" of the names key, for deploy-time messages.
	NamesAt string `json:"names_at,omitempty"`
	// Ports are per-port settings, in interface order.
	Ports []OVSPort `json:"ports,omitempty"`
}

// Values of the names key of an ovs switch.
const (
	OVSNamesUnique   = "unique"   // the default: hashed unique device names
	OVSNamesTopology = "topology" // the switch's and its interfaces' own names
)

// TopologyNames reports whether the bridge and its ports carry the
// topology's names (names: topology).
func (c *OVSConfig) TopologyNames() bool { return c != nil && c.Names == OVSNamesTopology }

// OVSPort holds the settings of one port (an interface of the switch).
type OVSPort struct {
	// Iface is the interface name in the switch (Node.Interfaces).
	Iface string `json:"iface"`
	// QoS is an HTB tree on the port's egress (towards the peer).
	QoS *OVSQoS `json:"qos,omitempty"`
	// IngressPolicingRate drops what the peer sends above this rate
	// (bit/s; OVS counts in kbit/s); 0 means no policing.
	IngressPolicingRate units.BitRate `json:"ingress_policing_rate_bps,omitempty"`
	// IngressPolicingBurst is the policer's bucket in bytes (0: OVS's
	// default of 8000 kbit).
	IngressPolicingBurst units.Bytes `json:"ingress_policing_burst_bytes,omitempty"`
	// Pos is "file:line:col" of the port's entry, for deploy-time messages.
	Pos string `json:"pos,omitempty"`
}

// OVSQoS is a linux-htb QoS: a root class at MaxRate and one class per
// queue. Queue i of the list is OVS queue i (queue 0 takes every packet no
// OpenFlow set_queue action steers elsewhere); without queues, queue 0 is
// one class at MaxRate.
type OVSQoS struct {
	MaxRate units.BitRate `json:"max_rate_bps"`
	Queues  []OVSQueue    `json:"queues,omitempty"`
	// QueueLimit is the length of the packet FIFO under each class (emuctl
	// installs it; OVS's linux-htb has no such setting). 0 keeps the
	// kernel's default (the device's txqueuelen).
	QueueLimit int `json:"queue_limit,omitempty"`
	// Queue is the discipline under each class instead (a kernel qdisc:
	// codel, fq_codel, pie, red, cake, drophead; or a drop-tail limit),
	// in the link syntax; nil: QueueLimit's pfifo.
	Queue *Queue `json:"queue,omitempty"`
}

// OVSQueue is one HTB class. Zero values mean OVS's defaults.
type OVSQueue struct {
	MinRate  units.BitRate `json:"min_rate_bps,omitempty"` // guaranteed
	MaxRate  units.BitRate `json:"max_rate_bps,omitempty"` // ceiling (default: the QoS max_rate)
	Priority int64         `json:"priority,omitempty"`     // lower is served first
	Burst    units.Bytes   `json:"burst_bytes,omitempty"`
	// QueueLimit overrides OVSQoS.QueueLimit for this queue.
	QueueLimit int `json:"queue_limit,omitempty"`
	// Queue overrides OVSQoS.Queue (and QueueLimit) for this queue.
	Queue *Queue `json:"queue,omitempty"`
}

// Limit returns the packet limit of queue i's leaf FIFO (0: kernel default).
func (q *OVSQoS) Limit(i int) int {
	if l := q.Leaf(i); l != nil {
		return l.Packets
	}
	if i < len(q.Queues) && q.Queues[i].QueueLimit > 0 {
		return q.Queues[i].QueueLimit
	}
	return q.QueueLimit
}

// Leaf returns queue i's leaf as a Queue when a queue: key sets it (the
// queue's own, else the QoS's; a queue_limit of the queue overrides the
// QoS's queue:), nil for the pfifo of queue_limit or the kernel default.
func (q *OVSQoS) Leaf(i int) *Queue {
	if i < len(q.Queues) {
		if q.Queues[i].Queue != nil {
			return q.Queues[i].Queue
		}
		if q.Queues[i].QueueLimit > 0 {
			return nil
		}
	}
	return q.Queue
}

// Port returns the settings of the port on interface iface, or nil.
func (c *OVSConfig) Port(iface string) *OVSPort {
	if c == nil {
		return nil
	}
	for i := range c.Ports {
		if c.Ports[i].Iface == iface {
			return &c.Ports[i]
		}
	}
	return nil
}
