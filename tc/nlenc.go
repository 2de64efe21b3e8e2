//go:build linux

package tc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/emuctl/emuctl/units"
)

// This file turns plan nodes into rtnetlink qdisc messages (nldecode.go
// reads them back). It is pure (no syscalls) so the exact bytes are
// unit-tested on any machine.
// vishvananda/netlink v1.3.1 cannot express pfifo limits, netem loss
// models, delay tables, 64-bit latency or the PRNG seed, hence our own.

var ne = binary.NativeEndian

// rtnetlink tc attribute numbers (include/uapi/linux/rtnetlink.h,
// pkt_sched.h, gen_stats.h).
const (
	tcaKind    = 1 // TCA_KIND
	tcaOptions = 2 // TCA_OPTIONS
	tcaStats2  = 7 // TCA_STATS2

	tcaStatsBasic = 1 // TCA_STATS_BASIC
	tcaStatsQueue = 3 // TCA_STATS_QUEUE
	tcaStatsPkt64 = 8 // TCA_STATS_PKT64

	netemCorr      = 1  // TCA_NETEM_CORR
	netemDelayDist = 2  // TCA_NETEM_DELAY_DIST
	netemReorder   = 3  // TCA_NETEM_REORDER
	netemCorrupt   = 4  // TCA_NETEM_CORRUPT
	netemLoss      = 5  // TCA_NETEM_LOSS (nested)
	netemRate      = 6  // TCA_NETEM_RATE
	netemECN       = 7  // TCA_NETEM_ECN
	netemRate64    = 8  // TCA_NETEM_RATE64
	netemLatency64 = 10 // TCA_NETEM_LATENCY64
	netemJitter64  = 11 // TCA_NETEM_JITTER64
	netemPRNGSeed  = 14 // TCA_NETEM_PRNG_SEED
	netemLossGE    = 2  // NETEM_LOSS_GE

	htbInit = 2 // TCA_HTB_INIT

	tbfParms  = 1 // TCA_TBF_PARMS
	tbfRate64 = 4 // TCA_TBF_RATE64
	tbfBurst  = 6 // TCA_TBF_BURST

	linklayerEthernet = 1 // TC_LINKLAYER_ETHERNET: no rate table needed

	sizeofTcmsg     = 20 // struct tcmsg
	sizeofNetemQopt = 24 // struct tc_netem_qopt
	sizeofTbfQopt   = 36 // struct tc_tbf_qopt
	psTickShift     = 6  // PSCHED_SHIFT: one psched tick is 64 ns
)

// attrBuf builds netlink attributes (4-byte aligned, native endian).
type attrBuf []byte

func (a *attrBuf) put(typ uint16, payload []byte) {
	n := 4 + len(payload)
	hdr := make([]byte, 4)
	ne.PutUint16(hdr[0:], uint16(n))
	ne.PutUint16(hdr[2:], typ)
	*a = append(*a, hdr...)
	*a = append(*a, payload...)
	for len(*a)%4 != 0 {
		*a = append(*a, 0)
	}
}

func (a *attrBuf) u32(typ uint16, v uint32) { a.put(typ, u32b(v)) }
func (a *attrBuf) u64(typ uint16, v uint64) { a.put(typ, u64b(v)) }

func u32b(vs ...uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		ne.PutUint32(b[4*i:], v)
	}
	return b
}

func u64b(v uint64) []byte {
	b := make([]byte, 8)
	ne.PutUint64(b, v)
	return b
}

// pctToU32 is netem's probability encoding: percent/100 × (2^32-1).
func pctToU32(pct units.Percent) uint32 {
	return uint32(math.Round(max(0, min(pct.Prob(), 1)) * math.MaxUint32))
}

func u32ToPct(v uint32) units.Percent { return units.Percent(float64(v) / math.MaxUint32 * 100) }

// ticks converts a duration to psched ticks, saturating at 2^32-1.
func ticks(d time.Duration) uint32 {
	return uint32(min(max(0, int64(d)>>psTickShift), math.MaxUint32))
}

// qdiscMsg is the body (struct tcmsg + attributes) of an RTM_NEWQDISC
// request installing q on ifindex.
func qdiscMsg(ifindex int, q Qdisc) ([]byte, error) {
	opts, err := qdiscOptions(q)
	if err != nil {
		return nil, err
	}
	b := tcmsg(ifindex, q.Handle, q.Parent)
	a := attrBuf(b)
	a.put(tcaKind, append([]byte(q.Kind), 0))
	a.put(tcaOptions, opts)
	return a, nil
}

func tcmsg(ifindex int, handle, parent uint32) []byte {
	b := make([]byte, sizeofTcmsg) // family AF_UNSPEC, pads 0
	ne.PutUint32(b[4:], uint32(int32(ifindex)))
	ne.PutUint32(b[8:], handle)
	ne.PutUint32(b[12:], parent)
	return b
}

// qdiscOptions is the TCA_OPTIONS payload for q.
func qdiscOptions(q Qdisc) ([]byte, error) {
	switch {
	case q.Kind == "netem" && q.Netem != nil:
		return netemOptions(q.Netem), nil
	case q.Kind == "tbf" && q.TBF != nil:
		return tbfOptions(q.TBF)
	case (q.Kind == "pfifo" || q.Kind == "bfifo" || q.Kind == "pfifo_head_drop") && q.FIFO != nil:
		return u32b(q.FIFO.Limit), nil
	case q.AQM != nil:
		return aqmOptions(q.Kind, q.AQM)
	case q.Kind == "htb": // only probed, never planned
		var a attrBuf
		a.put(htbInit, u32b(3, 10, 0, 0, 0)) // version, rate2quantum, defcls, debug, direct_pkts
		return a, nil
	}
	return nil, fmt.Errorf("cannot encode qdisc %q without its options", q.Kind)
}

// netemOptions always carries every attribute this package uses, with
// zeros for what is off: netem's change() keeps any value whose attribute
// is missing, so a partial message would leave stale settings behind.
func netemOptions(n *NetemOpts) []byte {
	loss := pctToU32(n.Loss)
	if n.GE != nil {
		loss = 0
	}
	a := attrBuf(u32b(ticks(n.Latency), n.Limit, loss, 0 /*gap*/, pctToU32(n.Duplicate), ticks(n.Jitter)))
	a.put(netemCorr, u32b(0, 0, 0))
	if n.Jitter > 0 {
		tab := DistTable(n.Dist)
		b := make([]byte, 2*len(tab))
		for i, v := range tab {
			ne.PutUint16(b[2*i:], uint16(v))
		}
		a.put(netemDelayDist, b)
	}
	a.put(netemReorder, u32b(0, 0))
	a.put(netemCorrupt, u32b(pctToU32(n.Corrupt), 0))
	if ge := n.GE; ge != nil {
		// The kernel loses a frame in the bad state when rnd > h, so h is
		// 1 - (1-h); in the good state when rnd < k1, so k1 is 1-k.
		var inner attrBuf
		inner.put(netemLossGE, u32b(pctToU32(ge.P), pctToU32(ge.R), pctToU32(100-ge.BadLoss), pctToU32(ge.GoodLoss)))
		a.put(netemLoss, inner)
	}
	rate32 := uint32(min(n.Rate, math.MaxUint32))
	a.put(netemRate, u32b(rate32, 0, 0, 0)) // rate, packet_overhead, cell_size, cell_overhead
	if n.Rate >= math.MaxUint32 {
		a.u64(netemRate64, uint64(n.Rate))
	}
	a.u32(netemECN, 0)
	a.u64(netemLatency64, uint64(n.Latency))
	a.u64(netemJitter64, uint64(n.Jitter))
	if n.Seed != 0 {
		a.u64(netemPRNGSeed, n.Seed)
	}
	return a
}

func tbfOptions(t *TBFOpts) ([]byte, error) {
	if t.Rate == 0 || t.Burst == 0 {
		return nil, errors.New("tbf needs a rate and a burst")
	}
	q := make([]byte, sizeofTbfQopt)
	putRatespec(q[0:12], t.Rate)
	// q[12:24] peakrate: none
	ne.PutUint32(q[24:], t.Limit)
	buf := float64(t.Burst) / float64(t.Rate) * 1e9 // ns
	ne.PutUint32(q[28:], ticks(time.Duration(min(buf, math.MaxInt64))))
	// q[32:36] mtu (peak bucket): none
	var a attrBuf
	a.put(tbfParms, q)
	if t.Rate >= math.MaxUint32 {
		a.u64(tbfRate64, uint64(t.Rate))
	}
	a.u32(tbfBurst, t.Burst)
	return a, nil
}

// putRatespec fills a struct tc_ratespec for an Ethernet link layer.
func putRatespec(b []byte, rate units.ByteRate) {
	b[0] = 0                 // cell_log
	b[1] = linklayerEthernet // linklayer
	ne.PutUint32(b[8:], uint32(min(rate, math.MaxUint32)))
}
