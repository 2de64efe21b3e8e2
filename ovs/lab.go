package ovs

import (
	"fmt"
	"strconv"

	"github.com/emuctl/emuctl/ovs/vswitchd"
	"github.com/emuctl/emuctl/units"
	"github.com/ovn-kubernetes/libovsdb/model"
)

// MarkerKey is the external_ids key that carries the owning lab's marker
// ("emuctl:<lab>") on every row emuctl creates: Bridge, Port, Interface,
// QoS, Queue, Controller. Rows without it are never touched.
const MarkerKey = "emuctl"

// Extra external_ids emuctl writes, for people reading the database.
const (
	NodeKey  = "emuctl-node"  // the switch node a bridge or port belongs to
	IfaceKey = "emuctl-iface" // the topology's interface name of a port
)

// Datapath types as OVS names them (Bridge.datapath_type).
const (
	DatapathKernel = "system" // the openvswitch kernel module
	DatapathNetdev = "netdev" // the userspace datapath
)

// QoS types emuctl uses.
const (
	QoSHTB  = "linux-htb"
	QoSNoop = "linux-noop" // OVS leaves the port's qdiscs alone
)

// Lab is everything one lab needs in Open vSwitch, created in one
// transaction by Client.Create.
type Lab struct {
	Marker  string // "emuctl:<lab>"
	Bridges []Bridge
}

// Bridge is one OVS bridge (one switch node).
type Bridge struct {
	Name        string // device name, at most 15 bytes
	Node        string // the switch node, recorded in external_ids
	Datapath    string // DatapathKernel or DatapathNetdev
	FailMode    string // "standalone" or "secure"
	Protocols   []string
	Controllers []string
	STP, RSTP   bool
	DatapathID  string // 16 hex digits
	Ports       []Port
}

// Port is one port of a bridge, backed by an existing network device of
// the same name in ovs-vswitchd's namespace.
type Port struct {
	Name  string // device name
	Iface string // the topology's interface name, recorded in external_ids
	// OFPort is the OpenFlow port number requested (ofport_request); 0
	// lets OVS choose.
	OFPort int
	// QoS is a linux-htb tree on the port; Noop attaches linux-noop
	// instead, for ports whose qdiscs emuctl's link shaping owns. At most
	// one of them is set.
	QoS  *QoS
	Noop bool
	// IngressPolicingRate and Burst are in kbit/s and kbit (0: none).
	IngressPolicingRate  int
	IngressPolicingBurst int
	// Edge marks a port that faces a host, not another bridge: RSTP lets
	// it forward at once instead of after the forward delay.
	Edge bool
}

// QoS is a linux-htb QoS with its queues (queue i = Queues[i]).
type QoS struct {
	MaxRate units.BitRate
	Queues  []Queue
}

// Queue is one HTB class; zero values are OVS's defaults.
type Queue struct {
	MinRate, MaxRate units.BitRate
	Priority         int64
	Burst            uint64 // bits
}

// Check reports what OVS would reject or silently change.
func (l *Lab) Check() error {
	names := map[string]string{}
	seen := func(n, what string) error {
		if n == "" || len(n) > MaxIfName {
			return fmt.Errorf("%s name %q: 1..%d bytes", what, n, MaxIfName)
		}
		if prev, ok := names[n]; ok {
			return fmt.Errorf("%s name %q is also used by %s", what, n, prev)
		}
		names[n] = what
		return nil
	}
	for _, b := range l.Bridges {
		if err := seen(b.Name, "bridge "+b.Node); err != nil {
			return err
		}
		if b.Datapath != DatapathKernel && b.Datapath != DatapathNetdev {
			return fmt.Errorf("bridge %s: datapath %q (valid: %s, %s)", b.Name, b.Datapath, DatapathKernel, DatapathNetdev)
		}
		if b.STP && b.RSTP {
			return fmt.Errorf("bridge %s: STP and RSTP are exclusive", b.Name)
		}
		for _, p := range b.Ports {
			if err := seen(p.Name, "port "+b.Node+":"+p.Iface); err != nil {
				return err
			}
			if p.QoS != nil && p.Noop {
				return fmt.Errorf("port %s: a linux-htb QoS and linux-noop exclude each other", p.Name)
			}
		}
	}
	return nil
}

// rows builds the lab's rows with named UUIDs (references resolve inside
// the transaction) and returns them with the named UUIDs of the bridges,
// which the caller inserts into Open_vSwitch.bridges.
func (l *Lab) rows() ([]model.Model, []string) {
	out, bridges, _ := l.rowsAdding(nil, "")
	return out, bridges
}

// rowsAdding is rows for a lab that has some of its bridges already
// (existing, by name): of those only the ports are built, returned by
// bridge name for the caller to add to the bridge's ports. noop, when
// set, is the UUID of a linux-noop QoS row of the lab's to reuse.
func (l *Lab) rowsAdding(existing map[string]bool, noop string) ([]model.Model, []string, map[string][]string) {
	var out []model.Model
	var bridges []string
	added := map[string][]string{}
	ids := func(extra ...string) map[string]string {
		m := map[string]string{MarkerKey: l.Marker}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	for bi, b := range l.Bridges {
		var ports []string
		if !existing[b.Name] {
			brIf := &vswitchd.Interface{UUID: fmt.Sprintf("i%d", bi), Name: b.Name, Type: "internal", ExternalIDs: ids(NodeKey, b.Node)}
			brPort := &vswitchd.Port{UUID: fmt.Sprintf("p%d", bi), Name: b.Name, Interfaces: []string{brIf.UUID}, ExternalIDs: ids(NodeKey, b.Node)}
			out = append(out, brIf, brPort)
			ports = append(ports, brPort.UUID)
		}
		for pi, p := range b.Ports {
			ifc := &vswitchd.Interface{UUID: fmt.Sprintf("i%d_%d", bi, pi), Name: p.Name, ExternalIDs: ids(NodeKey, b.Node, IfaceKey, p.Iface)}
			if p.OFPort > 0 {
				of := p.OFPort
				ifc.OfportRequest = &of
			}
			ifc.IngressPolicingRate = p.IngressPolicingRate
			ifc.IngressPolicingBurst = p.IngressPolicingBurst
			port := &vswitchd.Port{UUID: fmt.Sprintf("p%d_%d", bi, pi), Name: p.Name, Interfaces: []string{ifc.UUID}, ExternalIDs: ids(NodeKey, b.Node, IfaceKey, p.Iface)}
			if p.Edge && b.RSTP {
				port.OtherConfig = map[string]string{"rstp-port-admin-edge": "true"}
			}
			switch {
			case p.Noop:
				if noop == "" {
					noop = "qnoop"
					out = append(out, &vswitchd.QoS{UUID: noop, Type: QoSNoop, ExternalIDs: ids()})
				}
				port.QOS = &noop
			case p.QoS != nil:
				qos := &vswitchd.QoS{UUID: fmt.Sprintf("q%d_%d", bi, pi), Type: QoSHTB, ExternalIDs: ids(NodeKey, b.Node, IfaceKey, p.Iface),
					OtherConfig: map[string]string{"max-rate": strconv.FormatUint(uint64(p.QoS.MaxRate), 10)}, Queues: map[int]string{}}
				queues := p.QoS.Queues
				if len(queues) == 0 {
					// Without queue 0, HTB's default class would not exist
					// and unclassified packets would bypass the shaper.
					queues = []Queue{{MaxRate: p.QoS.MaxRate}}
				}
				for k, q := range queues {
					oc := map[string]string{}
					if q.MinRate > 0 {
						oc["min-rate"] = strconv.FormatUint(uint64(q.MinRate), 10)
					}
					if q.MaxRate > 0 {
						oc["max-rate"] = strconv.FormatUint(uint64(q.MaxRate), 10)
					}
					if q.Priority > 0 {
						oc["priority"] = strconv.FormatInt(q.Priority, 10)
					}
					if q.Burst > 0 {
						oc["burst"] = strconv.FormatUint(q.Burst, 10)
					}
					qu := &vswitchd.Queue{UUID: fmt.Sprintf("u%d_%d_%d", bi, pi, k), OtherConfig: oc, ExternalIDs: ids(NodeKey, b.Node, IfaceKey, p.Iface)}
					out = append(out, qu)
					qos.Queues[k] = qu.UUID
				}
				out = append(out, qos)
				port.QOS = &qos.UUID
			}
			out = append(out, ifc, port)
			ports = append(ports, port.UUID)
		}
		if existing[b.Name] {
			added[b.Name] = ports
			continue
		}
		var ctrls []string
		for ci, t := range b.Controllers {
			c := &vswitchd.Controller{UUID: fmt.Sprintf("c%d_%d", bi, ci), Target: t, ExternalIDs: ids(NodeKey, b.Node)}
			out = append(out, c)
			ctrls = append(ctrls, c.UUID)
		}
		fm := vswitchd.BridgeFailMode(b.FailMode)
		oc := map[string]string{
			// In-band control would add hidden flows and use the bridge's
			// local port; controllers are reached out of band, as in Mininet.
			"disable-in-band": "true",
		}
		if b.DatapathID != "" {
			oc["datapath-id"] = b.DatapathID
		}
		if b.STP {
			// 802.1D's fastest legal timers: ports forward after 2 x 4 s.
			oc["stp-forward-delay"], oc["stp-hello-time"], oc["stp-max-age"] = "4", "1", "6"
		}
		if b.RSTP {
			oc["rstp-forward-delay"], oc["rstp-hello-time"], oc["rstp-max-age"] = "4", "1", "6"
		}
		br := &vswitchd.Bridge{UUID: fmt.Sprintf("b%d", bi), Name: b.Name, DatapathType: b.Datapath, FailMode: &fm,
			Ports: ports, Controller: ctrls, STPEnable: b.STP, RSTPEnable: b.RSTP, OtherConfig: oc, ExternalIDs: ids(NodeKey, b.Node)}
		for _, p := range b.Protocols {
			br.Protocols = append(br.Protocols, vswitchd.BridgeProtocols(p))
		}
		out = append(out, br)
		bridges = append(bridges, br.UUID)
	}
	return out, bridges, added
}
