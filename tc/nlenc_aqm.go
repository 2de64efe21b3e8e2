//go:build linux

package tc

import (
	"fmt"
	"math"
	"time"

	"github.com/emuctl/emuctl/units"
)

// rtnetlink encoding of the queue-discipline leaves (pkt_sched.h) and
// decoding of what the kernel reports about them.

const (
	codelTarget   = 1 // TCA_CODEL_TARGET (µs)
	codelLimit    = 2 // TCA_CODEL_LIMIT (packets)
	codelInterval = 3 // TCA_CODEL_INTERVAL (µs)
	codelECN      = 4 // TCA_CODEL_ECN

	fqcTarget   = 1 // TCA_FQ_CODEL_TARGET (µs)
	fqcLimit    = 2 // TCA_FQ_CODEL_LIMIT
	fqcInterval = 3 // TCA_FQ_CODEL_INTERVAL (µs)
	fqcECN      = 4 // TCA_FQ_CODEL_ECN
	fqcFlows    = 5 // TCA_FQ_CODEL_FLOWS
	fqcQuantum  = 6 // TCA_FQ_CODEL_QUANTUM
	fqcMemLimit = 9 // TCA_FQ_CODEL_MEMORY_LIMIT (bytes)

	pieTarget   = 1 // TCA_PIE_TARGET (µs)
	pieLimit    = 2 // TCA_PIE_LIMIT
	pieTUpdate  = 3 // TCA_PIE_TUPDATE (µs)
	pieAlpha    = 4 // TCA_PIE_ALPHA (sixteenths)
	pieBeta     = 5 // TCA_PIE_BETA (sixteenths)
	pieECN      = 6 // TCA_PIE_ECN
	pieBytemode = 7 // TCA_PIE_BYTEMODE

	redParms = 1 // TCA_RED_PARMS (struct tc_red_qopt)
	redStab  = 2 // TCA_RED_STAB (256 bytes)
	redMaxP  = 3 // TCA_RED_MAX_P
	redECN   = 1 // TC_RED_ECN

	cakeBaseRate = 2  // TCA_CAKE_BASE_RATE64 (bytes/s)
	cakeRTT      = 7  // TCA_CAKE_RTT (µs)
	cakeTarget   = 8  // TCA_CAKE_TARGET (µs)
	cakeMemory   = 10 // TCA_CAKE_MEMORY (bytes)

	cakeStatsTinStats = 11 // TCA_CAKE_STATS_TIN_STATS (nested, one per tin)
	cakeTinDropped    = 4  // TCA_CAKE_TIN_STATS_DROPPED_PACKETS
	cakeTinECNMarked  = 8  // TCA_CAKE_TIN_STATS_ECN_MARKED_PACKETS
	cakeTinAvgDelay   = 19 // TCA_CAKE_TIN_STATS_AVG_DELAY_US

	tcaStatsApp = 4 // TCA_STATS_APP: the qdisc's own xstats

	sizeofRedQopt = 16
)

// fqMemPerPacket bounds the memory fq_codel charges per queued packet
// (skb truesize) when its memory limit is set from the packet limit, so
// that the packet limit, like the engine's, is the one that binds.
const fqMemPerPacket = 8192

func usec(d time.Duration) uint32 { return uint32(min(max(0, d.Microseconds()), math.MaxUint32)) }

// aqmOptions is the TCA_OPTIONS payload of an AQM leaf; every parameter
// is sent, so a change never keeps a stale one.
func aqmOptions(kind string, o *AQMOpts) ([]byte, error) {
	a := o.AQM
	ecn := uint32(0)
	if a.ECN {
		ecn = 1
	}
	var b attrBuf
	switch kind {
	case "codel":
		b.u32(codelTarget, usec(a.Target))
		b.u32(codelLimit, o.Limit)
		b.u32(codelInterval, usec(a.Interval))
		b.u32(codelECN, ecn)
	case "fq_codel":
		b.u32(fqcTarget, usec(a.Target))
		b.u32(fqcLimit, o.Limit)
		b.u32(fqcInterval, usec(a.Interval))
		b.u32(fqcECN, ecn)
		b.u32(fqcFlows, uint32(a.Flows))
		b.u32(fqcQuantum, uint32(a.Quantum))
		b.u32(fqcMemLimit, uint32(min(uint64(o.Limit)*fqMemPerPacket, math.MaxInt32)))
	case "pie":
		b.u32(pieTarget, usec(a.Target))
		b.u32(pieLimit, o.Limit)
		b.u32(pieTUpdate, usec(a.TUpdate))
		b.u32(pieAlpha, uint32(math.Round(a.Alpha*16)))
		b.u32(pieBeta, uint32(math.Round(a.Beta*16)))
		b.u32(pieECN, ecn)
		b.u32(pieBytemode, 0)
	case "red":
		r := a.RED(o.Rate)
		q := make([]byte, sizeofRedQopt)
		ne.PutUint32(q[0:], o.Limit)
		ne.PutUint32(q[4:], r.MinTh)
		ne.PutUint32(q[8:], r.MaxTh)
		q[12], q[13], q[14] = r.Wlog, r.Plog, r.ScellLog
		if a.ECN {
			q[15] = redECN
		}
		b.put(redParms, q)
		b.put(redStab, r.Stab[:])
		b.u32(redMaxP, r.MaxP)
	case "cake":
		b.u64(cakeBaseRate, uint64(o.Rate)) // 0: unlimited (a leaf under someone's shaper)
		b.u32(cakeRTT, usec(a.Interval))
		b.u32(cakeTarget, usec(a.Target))
		if o.Limit > 0 {
			b.u32(cakeMemory, o.Limit)
		}
	default:
		return nil, fmt.Errorf("no encoder for qdisc %q", kind)
	}
	return b, nil
}

// parseAQM reads an AQM leaf's options back (the parameters the kernel
// reports; defaults it fills in show up here).
func parseAQM(kind string, b []byte) *AQMOpts {
	attrs, err := parseAttrs(b)
	if err != nil {
		return nil
	}
	o := &AQMOpts{AQM: AQM{Discipline: kind}}
	a := &o.AQM
	u32 := func(d []byte) uint32 {
		if len(d) < 4 {
			return 0
		}
		return ne.Uint32(d)
	}
	us := func(d []byte) time.Duration { return time.Duration(u32(d)) * time.Microsecond }
	for _, at := range attrs {
		switch kind {
		case "codel", "fq_codel":
			switch at.typ {
			case codelTarget:
				a.Target = us(at.data)
			case codelLimit:
				o.Limit = u32(at.data)
			case codelInterval:
				a.Interval = us(at.data)
			case codelECN:
				a.ECN = u32(at.data) != 0
			case fqcFlows:
				if kind == "fq_codel" {
					a.Flows = int(u32(at.data))
				}
			case fqcQuantum:
				if kind == "fq_codel" {
					a.Quantum = int(u32(at.data))
				}
			}
		case "pie":
			switch at.typ {
			case pieTarget:
				a.Target = us(at.data)
			case pieLimit:
				o.Limit = u32(at.data)
			case pieTUpdate:
				a.TUpdate = us(at.data)
			case pieAlpha:
				a.Alpha = float64(u32(at.data)) / 16
			case pieBeta:
				a.Beta = float64(u32(at.data)) / 16
			case pieECN:
				a.ECN = u32(at.data) != 0
			}
		case "red":
			switch {
			case at.typ == redParms && len(at.data) >= sizeofRedQopt:
				o.Limit = ne.Uint32(at.data)
				a.Min, a.Max = units.Bytes(ne.Uint32(at.data[4:])), units.Bytes(ne.Uint32(at.data[8:]))
				a.Weight = math.Pow(2, -float64(at.data[12]))
				a.ECN = at.data[15]&redECN != 0
			case at.typ == redMaxP:
				a.Probability = units.Percent(float64(u32(at.data)) / (1 << 32) * 100)
			}
		case "cake":
			switch {
			case at.typ == cakeBaseRate && len(at.data) >= 8:
				o.Rate = units.ByteRate(ne.Uint64(at.data))
			case at.typ == cakeRTT:
				a.Interval = us(at.data)
			case at.typ == cakeTarget:
				a.Target = us(at.data)
			case at.typ == cakeMemory:
				o.Limit = u32(at.data)
			}
			a.ECN = true
		}
	}
	return o
}

// parseXStats fills the AQM fields of s from a qdisc's TCA_STATS_APP.
func parseXStats(kind string, b []byte, s *QdiscStats) {
	u32 := func(off int) uint32 {
		if len(b) < off+4 {
			return 0
		}
		return ne.Uint32(b[off:])
	}
	switch kind {
	case "codel": // tc_codel_xstats
		if len(b) < 36 {
			return
		}
		s.Delay = time.Duration(u32(12)) * time.Microsecond
		s.LimitDrops, s.Marks = u32(20), u32(24)
	case "fq_codel": // type, then tc_fq_codel_qd_stats
		if len(b) < 40 || u32(0) != 0 {
			return
		}
		s.LimitDrops, s.Marks = u32(8)+u32(36), u32(12)
	case "pie": // tc_pie_xstats: prob (u64), delay, avg_dq_rate, dq_rate_estimating, packets_in, dropped, overlimit, maxq, ecn_mark
		if len(b) < 40 {
			return
		}
		s.Delay = time.Duration(u32(8)) * time.Microsecond
		s.LimitDrops, s.Marks = u32(28), u32(36)
	case "red": // tc_red_xstats: early, pdrop, other, marked
		if len(b) < 16 {
			return
		}
		s.LimitDrops, s.Marks = u32(4), u32(12)
	case "cake":
		attrs, _ := parseAttrs(b)
		var delaySum time.Duration
		tins := 0
		for _, at := range attrs {
			if at.typ != cakeStatsTinStats {
				continue
			}
			perTin, _ := parseAttrs(at.data)
			for _, tin := range perTin {
				fields, _ := parseAttrs(tin.data)
				active := false
				for _, f := range fields {
					if len(f.data) < 4 {
						continue
					}
					v := ne.Uint32(f.data)
					switch f.typ {
					case cakeTinECNMarked:
						s.Marks += v
					case cakeTinDropped:
						active = active || v > 0
					case cakeTinAvgDelay:
						if v > 0 {
							delaySum += time.Duration(v) * time.Microsecond
							active = true
						}
					}
				}
				if active {
					tins++
				}
			}
		}
		if tins > 0 {
			s.Delay = delaySum / time.Duration(tins)
		}
	default:
		return
	}
	s.XStats = true
}
