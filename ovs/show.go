package ovs

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/emuctl/emuctl/ovs/vswitchd"
	"github.com/emuctl/emuctl/units"
)

// BridgeInfo is what the database says about one of a lab's bridges.
type BridgeInfo struct {
	Name        string           `json:"name"`
	Node        string           `json:"node"`
	Datapath    string           `json:"datapath"`
	DatapathID  string           `json:"datapath_id,omitempty"`
	FailMode    string           `json:"fail_mode"`
	Protocols   []string         `json:"protocols,omitempty"`
	STP         bool             `json:"stp,omitempty"`
	RSTP        bool             `json:"rstp,omitempty"`
	Controllers []ControllerInfo `json:"controllers,omitempty"`
	Ports       []PortInfo       `json:"ports"`
}

// ControllerInfo is one controller target and its connection state.
type ControllerInfo struct {
	Target    string `json:"target"`
	Connected bool   `json:"connected"`
	Role      string `json:"role,omitempty"`
	State     string `json:"state,omitempty"`
}

// PortInfo is one port of a bridge (the bridge's own internal port left out).
type PortInfo struct {
	Name      string         `json:"name"`
	Iface     string         `json:"iface,omitempty"`
	OFPort    int            `json:"ofport"`
	Error     string         `json:"error,omitempty"`
	QoS       string         `json:"qos,omitempty"` // QoS type
	MaxRate   units.BitRate  `json:"max_rate_bps,omitempty"`
	Queues    []QueueInfo    `json:"queues,omitempty"`
	Ingress   int            `json:"ingress_policing_kbps,omitempty"`
	Stats     map[string]int `json:"statistics,omitempty"` // Interface.statistics (OVS refreshes them every 5 s)
	STPState  string         `json:"stp_state,omitempty"`
	RSTPRole  string         `json:"rstp_role,omitempty"`
	RSTPState string         `json:"rstp_state,omitempty"`
	LinkState string         `json:"link_state,omitempty"`
}

// QueueInfo is one queue of a port's QoS, as configured.
type QueueInfo struct {
	ID     int               `json:"id"`
	Config map[string]string `json:"config,omitempty"`
}

// Show returns the bridges that carry marker, with their ports, QoS,
// queues, controllers and counters, sorted by node.
func (c *Client) Show(ctx context.Context, marker string) ([]BridgeInfo, error) {
	m, err := c.marked(ctx, marker)
	if err != nil {
		return nil, err
	}
	var ports []vswitchd.Port
	var ifaces []vswitchd.Interface
	var qoss []vswitchd.QoS
	var queues []vswitchd.Queue
	var ctrls []vswitchd.Controller
	for _, l := range []any{&ports, &ifaces, &qoss, &queues, &ctrls} {
		if err := c.c.List(ctx, l); err != nil {
			return nil, err
		}
	}
	portBy := map[string]*vswitchd.Port{}
	for i := range ports {
		portBy[ports[i].UUID] = &ports[i]
	}
	ifBy := map[string]*vswitchd.Interface{}
	for i := range ifaces {
		ifBy[ifaces[i].UUID] = &ifaces[i]
	}
	qosBy := map[string]*vswitchd.QoS{}
	for i := range qoss {
		qosBy[qoss[i].UUID] = &qoss[i]
	}
	queueBy := map[string]*vswitchd.Queue{}
	for i := range queues {
		queueBy[queues[i].UUID] = &queues[i]
	}
	ctrlBy := map[string]*vswitchd.Controller{}
	for i := range ctrls {
		ctrlBy[ctrls[i].UUID] = &ctrls[i]
	}
	var out []BridgeInfo
	for _, b := range m.bridges {
		bi := BridgeInfo{Name: b.Name, Node: b.ExternalIDs[NodeKey], Datapath: b.DatapathType, STP: b.STPEnable, RSTP: b.RSTPEnable}
		if b.DatapathID != nil {
			bi.DatapathID = *b.DatapathID
		}
		if b.FailMode != nil {
			bi.FailMode = *b.FailMode
		}
		bi.Protocols = append(bi.Protocols, b.Protocols...)
		for _, u := range b.Controller {
			if ct := ctrlBy[u]; ct != nil {
				ci := ControllerInfo{Target: ct.Target, Connected: ct.IsConnected, State: ct.Status["state"]}
				if ct.Role != nil {
					ci.Role = *ct.Role
				}
				bi.Controllers = append(bi.Controllers, ci)
			}
		}
		for _, pu := range b.Ports {
			p := portBy[pu]
			if p == nil || p.Name == b.Name {
				continue
			}
			pi := PortInfo{Name: p.Name, Iface: p.ExternalIDs[IfaceKey], STPState: p.Status["stp_state"],
				RSTPRole: p.RSTPStatus["rstp_port_role"], RSTPState: p.RSTPStatus["rstp_port_state"]}
			for _, iu := range p.Interfaces {
				if ifc := ifBy[iu]; ifc != nil {
					if ifc.Ofport != nil {
						pi.OFPort = *ifc.Ofport
					}
					if ifc.Error != nil {
						pi.Error = *ifc.Error
					}
					if ifc.LinkState != nil {
						pi.LinkState = *ifc.LinkState
					}
					pi.Ingress = ifc.IngressPolicingRate
					pi.Stats = ifc.Statistics
				}
			}
			if p.QOS != nil {
				if q := qosBy[*p.QOS]; q != nil {
					pi.QoS = q.Type
					r, _ := strconv.ParseUint(q.OtherConfig["max-rate"], 10, 64)
					pi.MaxRate = units.BitRate(r)
					for id, qu := range q.Queues {
						qi := QueueInfo{ID: id}
						if r := queueBy[qu]; r != nil {
							qi.Config = r.OtherConfig
						}
						pi.Queues = append(pi.Queues, qi)
					}
					sort.Slice(pi.Queues, func(i, j int) bool { return pi.Queues[i].ID < pi.Queues[j].ID })
				}
			}
			bi.Ports = append(bi.Ports, pi)
		}
		sort.Slice(bi.Ports, func(i, j int) bool { return bi.Ports[i].OFPort < bi.Ports[j].OFPort })
		out = append(out, bi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out, nil
}

// NameUse says which row holds a name in the database: its table
// ("bridge", "port" or "interface") and the emuctl marker on it ("" for a
// row emuctl did not make).
type NameUse struct {
	Table  string
	Marker string
}

// Names returns the names of every bridge, port and interface in the
// database (any owner) with the row that holds each (a bridge rather than
// its port and interface of the same name): a new device name must avoid
// them all, and a refusal can say whose a name is.
func (c *Client) Names(ctx context.Context) (map[string]NameUse, error) {
	var brs []vswitchd.Bridge
	var ps []vswitchd.Port
	var is []vswitchd.Interface
	for _, l := range []any{&brs, &ps, &is} {
		if err := c.c.List(ctx, l); err != nil {
			return nil, err
		}
	}
	out := map[string]NameUse{}
	add := func(name, table string, ids map[string]string) {
		if _, ok := out[name]; !ok {
			m, _ := ours(ids, "")
			out[name] = NameUse{Table: table, Marker: m}
		}
	}
	for _, b := range brs {
		add(b.Name, "bridge", b.ExternalIDs)
	}
	for _, p := range ps {
		add(p.Name, "port", p.ExternalIDs)
	}
	for _, i := range is {
		add(i.Name, "interface", i.ExternalIDs)
	}
	return out, nil
}

// SpanningTreePending lists the ports of marker's STP and RSTP bridges
// that are still on their way to a final state (STP: listening or
// learning; RSTP: a root or designated port not yet forwarding), as
// "bridge:port (state)". A port without a reported state counts as pending.
func (c *Client) SpanningTreePending(ctx context.Context, marker string) ([]string, error) {
	m, err := c.marked(ctx, marker)
	if err != nil {
		return nil, err
	}
	var ports []vswitchd.Port
	if err := c.c.List(ctx, &ports); err != nil {
		return nil, err
	}
	by := map[string]*vswitchd.Port{}
	for i := range ports {
		by[ports[i].UUID] = &ports[i]
	}
	var out []string
	for _, b := range m.bridges {
		if !b.STPEnable && !b.RSTPEnable {
			continue
		}
		for _, pu := range b.Ports {
			p := by[pu]
			if p == nil || p.Name == b.Name { // the bridge's own port takes no part
				continue
			}
			if b.STPEnable {
				if s := p.Status["stp_state"]; s == "" || s == "listening" || s == "learning" {
					out = append(out, fmt.Sprintf("%s:%s (stp %s)", b.ExternalIDs[NodeKey], p.ExternalIDs[IfaceKey], orUnknown(s)))
				}
				continue
			}
			role, state := p.RSTPStatus["rstp_port_role"], p.RSTPStatus["rstp_port_state"]
			if state == "" || state == "Learning" || (role == "Root" || role == "Designated") && state != "Forwarding" {
				out = append(out, fmt.Sprintf("%s:%s (rstp %s %s)", b.ExternalIDs[NodeKey], p.ExternalIDs[IfaceKey], orUnknown(role), orUnknown(state)))
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
