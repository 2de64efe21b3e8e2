package tc

import (
	"fmt"
	"strings"
)

// formatTree prints qdiscs indented under their parents.
func formatTree(qs []Qdisc) string {
	depth := map[uint32]int{}
	var b strings.Builder
	for _, q := range qs {
		d := 0
		if q.Parent != handleRoot {
			d = depth[q.Parent&0xFFFF0000] + 1
		}
		depth[q.Handle] = d
		b.WriteString(strings.Repeat("  ", d))
		b.WriteString(q.describe())
		b.WriteByte('\n')
	}
	return b.String()
}

// describe is one tc-like line for a qdisc.
func (q Qdisc) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s parent %s", q.Kind, handleString(q.Handle), handleString(q.Parent))
	if q.Role != "" {
		fmt.Fprintf(&b, " (%s)", q.Role)
	}
	switch {
	case q.Netem != nil:
		n := q.Netem
		fmt.Fprintf(&b, " limit %d", n.Limit)
		if n.Latency > 0 || n.Jitter > 0 {
			fmt.Fprintf(&b, " delay %v", n.Latency)
		}
		if n.Jitter > 0 {
			fmt.Fprintf(&b, " jitter %v", n.Jitter)
			if n.Dist != "" {
				fmt.Fprintf(&b, " distribution %s", n.Dist)
			}
		}
		if n.Loss > 0 {
			fmt.Fprintf(&b, " loss %.4g%%", n.Loss)
		}
		if ge := n.GE; ge != nil {
			fmt.Fprintf(&b, " loss gemodel p %.4g%% r %.4g%% 1-h %.4g%% 1-k %.4g%%", float64(ge.P), float64(ge.R), float64(ge.BadLoss), float64(ge.GoodLoss))
		}
		if n.Duplicate > 0 {
			fmt.Fprintf(&b, " duplicate %.4g%%", n.Duplicate)
		}
		if n.Corrupt > 0 {
			fmt.Fprintf(&b, " corrupt %.4g%%", n.Corrupt)
		}
		switch {
		case n.Rate >= OrderRate:
			b.WriteString(" rate ordering-only")
		case n.Rate > 0:
			fmt.Fprintf(&b, " rate %s", n.Rate.Bits().TC())
		}
		if n.Seed != 0 {
			fmt.Fprintf(&b, " seed %d", n.Seed)
		}
	case q.TBF != nil:
		fmt.Fprintf(&b, " rate %s burst %dB limit %d", q.TBF.Rate.Bits().TC(), q.TBF.Burst, q.TBF.Limit)
	case q.FIFO != nil:
		unit := "p"
		if q.Kind == "bfifo" {
			unit = "B"
		}
		fmt.Fprintf(&b, " limit %d%s", q.FIFO.Limit, unit)
	case q.AQM != nil:
		b.WriteString(describeAQM(q.Kind, q.AQM))
	}
	if s := q.Stats; s != nil {
		fmt.Fprintf(&b, " | sent %d pkt %d B, dropped %d, overlimits %d, backlog %d pkt %d B",
			s.Packets, s.Bytes, s.Drops, s.Overlimits, s.QLen, s.Backlog)
		if s.XStats {
			fmt.Fprintf(&b, ", aqm drops %d, limit drops %d, marked %d, delay %v", s.AQMDrops(), s.LimitDrops, s.Marks, s.Delay)
		}
	}
	return b.String()
}

func handleString(h uint32) string {
	switch h {
	case handleRoot:
		return "root"
	case 0:
		return "none"
	}
	if h&0xFFFF == 0 {
		return fmt.Sprintf("%x:", h>>16)
	}
	return fmt.Sprintf("%x:%x", h>>16, h&0xFFFF)
}
