package suite

import (
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/suite/expr"
)

// ovsQueue is one OVS QoS queue's kernel counters.
type ovsQueue struct {
	Packets uint64 `json:"packets"`
	Drops   uint64 `json:"drops"`
	Limit   int    `json:"limit,omitempty"`
}

// ovsQueues reads the HTB queue 0 of every OVS port with a QoS, keyed
// "node:iface"; nil for a lab without Open vSwitch.
func ovsQueues(lab string) map[string]ovsQueue {
	st, err := emu.ReadState(lab)
	if err != nil {
		return nil
	}
	info := emu.InspectOVS(st)
	if info == nil {
		return nil
	}
	out := map[string]ovsQueue{}
	for port, qs := range info.Queues {
		for _, q := range qs {
			if q.Queue == 0 {
				out[port] = ovsQueue{Packets: uint64(q.Packets), Drops: uint64(max(q.Drops, q.LeafDrops)), Limit: q.LeafLimit}
			}
		}
	}
	return out
}

// ovsDeltas subtracts the counters read before a run.
func ovsDeltas(before, after map[string]ovsQueue) map[string]ovsQueue {
	out := map[string]ovsQueue{}
	for k, a := range after {
		b := before[k]
		out[k] = ovsQueue{Packets: a.Packets - b.Packets, Drops: a.Drops - b.Drops, Limit: a.Limit}
	}
	return out
}

// ovsMetric is ovs_queue_drops / ovs_queue_sent / ovs_drop_ratio of a port.
func (rd *runData) ovsMetric(name, port string) (expr.Value, error) {
	q, ok := rd.ovs[port]
	if !ok {
		return expr.Value{}, missing("no OVS QoS queue on %s (ports with qos: only)", port)
	}
	switch name {
	case "ovs_queue_drops":
		return expr.NumV(float64(q.Drops)), nil
	case "ovs_queue_sent":
		return expr.NumV(float64(q.Packets)), nil
	}
	if q.Packets+q.Drops == 0 {
		return expr.Value{}, missing("no packet reached the queue of %s", port)
	}
	return expr.NumV(float64(q.Drops) / float64(q.Packets+q.Drops)), nil
}
