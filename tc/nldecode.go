//go:build linux

package tc

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/emuctl/emuctl/units"
)

// Decoding of RTM_NEWQDISC messages (qdisc dumps), for ReadTree and
// ApplyKernel; the inverse of nlenc.go for the fields this package sets.

// nlAttr is one parsed attribute.
type nlAttr struct {
	typ  uint16
	data []byte
}

func parseAttrs(b []byte) ([]nlAttr, error) {
	var out []nlAttr
	for len(b) >= 4 {
		n := int(ne.Uint16(b[0:]))
		if n < 4 || n > len(b) {
			return out, fmt.Errorf("bad netlink attribute length %d (have %d bytes)", n, len(b))
		}
		out = append(out, nlAttr{typ: ne.Uint16(b[2:]) & 0x3FFF, data: b[4:n]})
		n = (n + 3) &^ 3
		if n > len(b) {
			break
		}
		b = b[n:]
	}
	return out, nil
}

// parseQdisc decodes one RTM_NEWQDISC message body (tcmsg + attributes).
func parseQdisc(b []byte) (ifindex int, q Qdisc, err error) {
	if len(b) < sizeofTcmsg {
		return 0, q, errors.New("short tcmsg")
	}
	ifindex = int(int32(ne.Uint32(b[4:])))
	q.Handle, q.Parent = ne.Uint32(b[8:]), ne.Uint32(b[12:])
	attrs, err := parseAttrs(b[sizeofTcmsg:])
	if err != nil {
		return ifindex, q, err
	}
	var opts, stats []byte
	for _, a := range attrs {
		switch a.typ {
		case tcaKind:
			q.Kind = cstring(a.data)
		case tcaOptions:
			opts = a.data
		case tcaStats2:
			stats = a.data
		}
	}
	if opts != nil {
		q.parseOptions(opts)
	}
	if stats != nil {
		q.Stats = parseStats(q.Kind, stats)
	}
	return ifindex, q, nil
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func (q *Qdisc) parseOptions(b []byte) {
	switch q.Kind {
	case "pfifo", "bfifo", "pfifo_head_drop":
		if len(b) >= 4 {
			q.FIFO = &FIFOOpts{Limit: ne.Uint32(b)}
		}
	case "codel", "fq_codel", "pie", "red", "cake":
		q.AQM = parseAQM(q.Kind, b)
	case "netem":
		q.Netem = parseNetem(b)
	case "tbf":
		q.TBF = parseTBF(b)
	}
}

func parseNetem(b []byte) *NetemOpts {
	if len(b) < sizeofNetemQopt {
		return nil
	}
	n := &NetemOpts{
		Latency:   time.Duration(ne.Uint32(b[0:])) << psTickShift,
		Limit:     ne.Uint32(b[4:]),
		Loss:      u32ToPct(ne.Uint32(b[8:])),
		Duplicate: u32ToPct(ne.Uint32(b[16:])),
		Jitter:    time.Duration(ne.Uint32(b[20:])) << psTickShift,
	}
	attrs, _ := parseAttrs(b[sizeofNetemQopt:])
	for _, a := range attrs {
		switch {
		case a.typ == netemLatency64 && len(a.data) >= 8:
			n.Latency = time.Duration(ne.Uint64(a.data))
		case a.typ == netemJitter64 && len(a.data) >= 8:
			n.Jitter = time.Duration(ne.Uint64(a.data))
		case a.typ == netemCorrupt && len(a.data) >= 4:
			n.Corrupt = u32ToPct(ne.Uint32(a.data))
		case a.typ == netemRate && len(a.data) >= 4:
			n.Rate = max(n.Rate, units.ByteRate(ne.Uint32(a.data)))
		case a.typ == netemRate64 && len(a.data) >= 8:
			n.Rate = units.ByteRate(ne.Uint64(a.data))
		case a.typ == netemPRNGSeed && len(a.data) >= 8:
			n.Seed = ne.Uint64(a.data)
		case a.typ == netemLoss:
			inner, _ := parseAttrs(a.data)
			for _, l := range inner {
				if l.typ == netemLossGE && len(l.data) >= 16 {
					n.GE = &units.GilbertElliott{
						P:        u32ToPct(ne.Uint32(l.data[0:])),
						R:        u32ToPct(ne.Uint32(l.data[4:])),
						BadLoss:  100 - u32ToPct(ne.Uint32(l.data[8:])),
						GoodLoss: u32ToPct(ne.Uint32(l.data[12:])),
					}
				}
			}
		}
	}
	return n
}

func parseTBF(b []byte) *TBFOpts {
	attrs, _ := parseAttrs(b)
	t := &TBFOpts{}
	var bufTicks uint32
	for _, a := range attrs {
		switch {
		case a.typ == tbfParms && len(a.data) >= sizeofTbfQopt:
			t.Rate = max(t.Rate, units.ByteRate(ne.Uint32(a.data[8:])))
			t.Limit = ne.Uint32(a.data[24:])
			bufTicks = ne.Uint32(a.data[28:])
		case a.typ == tbfRate64 && len(a.data) >= 8:
			t.Rate = units.ByteRate(ne.Uint64(a.data))
		}
	}
	t.Burst = uint32(math.Round(float64(uint64(bufTicks)<<psTickShift) * float64(t.Rate) / 1e9))
	return t
}

func parseStats(kind string, b []byte) *QdiscStats {
	attrs, _ := parseAttrs(b)
	s := &QdiscStats{}
	for _, a := range attrs {
		switch {
		case a.typ == tcaStatsBasic && len(a.data) >= 12:
			s.Bytes = ne.Uint64(a.data)
			s.Packets = max(s.Packets, uint64(ne.Uint32(a.data[8:])))
		case a.typ == tcaStatsPkt64 && len(a.data) >= 8:
			s.Packets = ne.Uint64(a.data)
		case a.typ == tcaStatsQueue && len(a.data) >= 20:
			s.QLen = ne.Uint32(a.data[0:])
			s.Backlog = ne.Uint32(a.data[4:])
			s.Drops = ne.Uint32(a.data[8:])
			s.Overlimits = ne.Uint32(a.data[16:])
		case a.typ == tcaStatsApp:
			parseXStats(kind, a.data, s)
		}
	}
	return s
}
