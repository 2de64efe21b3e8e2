package analysis

import (
	"sort"
)

// TACKTable is one row per model point.
func TACKTable(title string, pts []TACKPoint) *Table {
	t := &Table{Title: title, Columns: []Column{
		{Key: "bw_mbps", Header: "bw", Unit: "Mbit/s"},
		{Key: "rtt_min_ms", Header: "RTT_min", Unit: "ms"},
		{Key: "f_tack_hz", Header: "f_tack", Unit: "Hz"},
		{Key: "f_tcp_l1_hz", Header: "f_tcp L=1", Unit: "Hz"},
		{Key: "f_tcp_l2_hz", Header: "f_tcp L=2", Unit: "Hz"},
		{Key: "ratio_l1_pct", Header: "f_tack/f_tcp(L=1)", Unit: "%", Digits: 3},
		{Key: "ratio_l2_pct", Header: "f_tack/f_tcp(L=2)", Unit: "%", Digits: 3},
		{Key: "regime", Header: "regime"},
		{Key: "pivot_mbps", Header: "pivot bw", Unit: "Mbit/s"},
	}}
	for _, p := range pts {
		t.AddRow(p.BwBps/mbit, p.RTTMinS*1000, p.FTackHz, p.FTCP1Hz, p.FTCP2Hz, p.RatioL1*100, p.RatioL2*100, p.Regime, p.PivotBps/mbit)
	}
	return t
}

// ACKTable is one row per connection of an ACK report.
func ACKTable(title string, rep *ACKReport) *Table {
	t := &Table{Title: title, Columns: []Column{
		{Key: "sender", Header: "data sender"},
		{Key: "receiver", Header: "receiver"},
		{Key: "duration_s", Header: "duration", Unit: "s"},
		{Key: "data_packets", Header: "data packets"},
		{Key: "data_segments", Header: "data segments"},
		{Key: "pure_acks", Header: "pure ACKs"},
		{Key: "ack_rate_hz", Header: "ACK rate", Unit: "Hz"},
		{Key: "acks_per_data", Header: "ACKs/data packet", Digits: 3},
		{Key: "acks_per_segment", Header: "ACKs/segment", Digits: 3},
		{Key: "data_rate_mbps", Header: "data rate", Unit: "Mbit/s"},
	}}
	for _, c := range rep.Conns {
		t.AddRow(c.Sender, c.Receiver, c.DurationS, c.DataPackets, c.DataSegments, c.PureACKs, c.ACKRateHz, c.ACKsPerData, c.ACKsPerSegment, c.DataRateBps/mbit)
	}
	return t
}

// ConditionsTable lists recorded conditions, sorted by key.
func ConditionsTable(title string, cond map[string]string) *Table {
	t := &Table{Title: title, Columns: []Column{{Key: "key", Header: "condition"}, {Key: "value", Header: "value"}}}
	keys := make([]string, 0, len(cond))
	for k := range cond {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.AddRow(k, cond[k])
	}
	return t
}

// LinkTable lists the links of a result with their configuration and
// queue counters.
func LinkTable(title string, links []Link) *Table {
	t := &Table{Title: title, Columns: []Column{
		{Key: "link", Header: "link"},
		{Key: "backend", Header: "backend"},
		{Key: "rate_mbps", Header: "rate", Unit: "Mbit/s"},
		{Key: "delay_ms", Header: "delay", Unit: "ms"},
		{Key: "loss_pct", Header: "loss", Unit: "%"},
		{Key: "queue_packets", Header: "queue", Unit: "pkts"},
		{Key: "sent_packets", Header: "sent", Unit: "pkts"},
		{Key: "dropped_packets", Header: "queue drops", Unit: "pkts"},
		{Key: "queue_drop_ratio", Header: "queue drop ratio", Digits: 3},
		{Key: "random_drops", Header: "random drops", Unit: "pkts"},
	}}
	for i := range links {
		l := &links[i]
		t.AddRow(l.Name, l.Backend, l.RateBps/mbit, l.DelayUs/1000, l.LossPct, l.QueuePackets, l.SentPackets, l.DroppedPackets, QueueDropRatio(l), l.RandomDrops)
	}
	return t
}

// QueueTable lists, per run label, the queues of links that have a
// discipline or were sampled: the discipline's drops and marks, sojourn
// percentiles (and how they were measured) and sampled occupancy. It has
// no rows when no run has such a link.
func QueueTable(title string, labels []string, runs [][]Link) *Table {
	t := &Table{Title: title, Columns: []Column{
		{Key: "run", Header: "run"},
		{Key: "link", Header: "link"},
		{Key: "discipline", Header: "discipline"},
		{Key: "dropped_packets", Header: "drops", Unit: "pkts"},
		{Key: "aqm_drops", Header: "aqm drops", Unit: "pkts"},
		{Key: "marks", Header: "CE marks", Unit: "pkts"},
		{Key: "sojourn_p50_ms", Header: "sojourn p50", Unit: "ms"},
		{Key: "sojourn_p95_ms", Header: "p95", Unit: "ms"},
		{Key: "sojourn_p99_ms", Header: "p99", Unit: "ms"},
		{Key: "sojourn_from", Header: "sojourn measured"},
		{Key: "queue_p50_pkts", Header: "queue p50", Unit: "pkts"},
		{Key: "queue_p95_pkts", Header: "queue p95", Unit: "pkts"},
	}}
	for i, links := range runs {
		for j := range links {
			l := &links[j]
			if l.Discipline == "" && l.QueueSamples == 0 {
				continue
			}
			t.AddRow(labels[i], l.Name, l.Discipline, l.DroppedPackets, l.AQMDrops, l.Marks,
				l.SojournP50Ms, l.SojournP95Ms, l.SojournP99Ms, l.SojournFrom, l.QueueP50Pkts, l.QueueP95Pkts)
		}
	}
	return t
}

// StepTable lists, per run label, the schedule steps applied during the
// run: when each took effect (s from t = 0), how late, and what it did.
// It has no rows when no run had a schedule.
func StepTable(title string, labels []string, runs [][]Step) *Table {
	t := &Table{Title: title, Columns: []Column{
		{Key: "run", Header: "run"},
		{Key: "at_s", Header: "at", Unit: "s"},
		{Key: "late_ms", Header: "late", Unit: "ms"},
		{Key: "schedule", Header: "schedule"},
		{Key: "step", Header: "step"},
		{Key: "error", Header: "error"},
	}}
	for i, steps := range runs {
		for _, s := range steps {
			t.AddRow(labels[i], s.AtS, s.LateS*1000, s.Schedule, s.What, s.Error)
		}
	}
	return t
}
