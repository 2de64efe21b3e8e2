package traffic

import (
	"fmt"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/internal/sockinfo"
	"golang.org/x/sys/unix"
)

// rawSample is what the sampler reads for one stream at one instant.
type rawSample struct {
	at   time.Time
	rx   int64
	pkts int64 // datagrams received (UDP)
	wrNs int64 // the TCP writer's time inside write calls
	info *unix.TCPInfo
	tf   sockinfo.TCPFlags
	sq   *sockinfo.SendQueue
	mi   *sockinfo.MPTCPInfo
	sfs  []sockinfo.Subflow
}

// sample reads every stream's sender socket every interval until all
// receivers are done, then takes a final sample.
func (t *tcpFlow) sample() [][]rawSample {
	out := make([][]rawSample, len(t.streams))
	allDone := make(chan struct{})
	go func() {
		for _, s := range t.streams {
			<-s.rxDone
		}
		close(allDone)
	}()
	tick := time.NewTicker(t.f.Interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			for i, s := range t.streams {
				out[i] = append(out[i], t.read(s, time.Now()))
			}
		case <-allDone:
			for i, s := range t.streams {
				at := time.Now()
				if e := s.rxEnd.Load(); e > 0 {
					at = time.Unix(0, e)
				}
				out[i] = append(out[i], t.read(s, at))
			}
			return out
		}
	}
}

func (t *tcpFlow) read(s *tcpStream, at time.Time) rawSample {
	r := rawSample{at: at, rx: s.rx.Load(), wrNs: int64(s.wait.total())}
	sockinfo.WithFD(s.snd, func(fd int) error {
		ti, tf, err := sockinfo.ReadTCPInfo(fd)
		if err == nil {
			r.info, r.tf = &ti, tf
		}
		if q, err := sockinfo.ReadSendQueue(fd); err == nil {
			r.sq = &q
		}
		if s.mptcp {
			r.mi, r.sfs, _ = sockinfo.ReadSubflows(fd)
		}
		return nil
	})
	return r
}

// tcpInfo converts the kernel's tcp_info to the result's subset.
func tcpInfo(ti *unix.TCPInfo, tf sockinfo.TCPFlags) analysis.TCPInfo {
	ss := ti.Snd_ssthresh
	if ss >= 0x7fffffff {
		ss = 0
	}
	return analysis.TCPInfo{
		BytesAcked:      ti.Bytes_acked,
		BytesSent:       ti.Bytes_sent,
		BytesRetrans:    ti.Bytes_retrans,
		SegsOut:         uint64(ti.Segs_out),
		MSS:             ti.Snd_mss,
		CwndSegs:        ti.Snd_cwnd,
		CwndBytes:       uint64(ti.Snd_cwnd) * uint64(ti.Snd_mss),
		SsthreshSegs:    ss,
		SrttUs:          ti.Rtt,
		RttvarUs:        ti.Rttvar,
		MinRttUs:        ti.Min_rtt,
		Retrans:         ti.Total_retrans,
		Lost:            ti.Lost,
		DeliveryRateBps: float64(ti.Delivery_rate) * 8,
		PacingRateBps:   pacing(ti.Pacing_rate),
		CAState:         ti.Ca_state,
		BusyUs:          ti.Busy_time,
		RwndLimitedUs:   ti.Rwnd_limited,
		SndbufLimitedUs: ti.Sndbuf_limited,
		AppLimited:      tf.AppLimited,
		NotsentBytes:    ti.Notsent_bytes,
		InFlightSegs:    inFlight(ti),
		SndWndBytes:     ti.Snd_wnd,
	}
}

// inFlight is tcp_packets_in_flight: packets out, less those SACKed or
// marked lost, plus those retransmitted.
func inFlight(ti *unix.TCPInfo) uint32 {
	left := int64(ti.Unacked) - int64(ti.Sacked) - int64(ti.Lost) + int64(ti.Retrans)
	return uint32(max(left, 0))
}

// pacing maps the kernel's "unlimited" (~0) to 0.
func pacing(r uint64) float64 {
	if r >= 1<<63 {
		return 0
	}
	return float64(r) * 8
}

// mptcpLevel summarises an MPTCP connection for Sample.TCP: byte counters
// are connection-level (MPTCP_INFO, 6.5+); cwnd, retransmissions, lost,
// delivery and pacing rates and unsent bytes are sums over the subflows;
// RTTs are those of the subflow with the lowest smoothed RTT; ca_state is
// the worst state. The limited-by times stay per subflow (a sum of busy
// times says nothing about the connection).
func mptcpLevel(mi *sockinfo.MPTCPInfo, sfs []sockinfo.Subflow) *analysis.TCPInfo {
	if len(sfs) == 0 {
		return nil
	}
	var out analysis.TCPInfo
	best := -1
	for i, sf := range sfs {
		ti := tcpInfo(&sf.TCPInfo, sf.Flags)
		out.CwndSegs += ti.CwndSegs
		out.CwndBytes += ti.CwndBytes
		out.Retrans += ti.Retrans
		out.Lost += ti.Lost
		out.SegsOut += ti.SegsOut
		out.DeliveryRateBps += ti.DeliveryRateBps
		out.PacingRateBps += ti.PacingRateBps
		out.CAState = max(out.CAState, ti.CAState)
		out.BytesAcked += ti.BytesAcked
		out.BytesSent += ti.BytesSent
		out.BytesRetrans += ti.BytesRetrans
		out.NotsentBytes += ti.NotsentBytes
		out.InFlightSegs += ti.InFlightSegs
		if ti.SrttUs > 0 && (best < 0 || ti.SrttUs < sfs[best].TCPInfo.Rtt) {
			best = i
		}
	}
	if best >= 0 {
		b := tcpInfo(&sfs[best].TCPInfo, sfs[best].Flags)
		out.SrttUs, out.RttvarUs, out.MinRttUs, out.MSS = b.SrttUs, b.RttvarUs, b.MinRttUs, b.MSS
		out.SsthreshSegs = b.SsthreshSegs
	}
	if mi != nil && mi.BytesSent > 0 {
		out.BytesAcked, out.BytesSent, out.BytesRetrans = mi.BytesAcked, mi.BytesSent, mi.BytesRetrans
	}
	return &out
}

// subflowKey identifies a subflow across samples.
func subflowKey(sf sockinfo.Subflow, i int) string {
	if sf.HaveIdentities {
		return fmt.Sprintf("%d", sf.ID)
	}
	return fmt.Sprintf("#%d", i)
}

// samples turns raw readings into per-interval samples. A final tail
// shorter than half an interval (the drain after the sender stopped) is
// merged into the sample before it, so no sample has a tiny divisor.
func samples(raw []rawSample, t0, start time.Time, interval time.Duration) []analysis.Sample {
	if n := len(raw); n >= 2 && raw[n-1].at.Sub(raw[n-2].at) < interval/2 {
		raw = append(raw[:n-2:n-2], raw[n-1])
	}
	prevAt, prevRx, prevPkts := start, int64(0), int64(0)
	prevSf := map[string]uint64{}
	var out []analysis.Sample
	for _, r := range raw {
		if !r.at.After(prevAt) {
			continue
		}
		dt := r.at.Sub(prevAt).Seconds()
		s := analysis.Sample{TS: r.at.Sub(t0).Seconds(), Bytes: r.rx - prevRx, Packets: r.pkts - prevPkts}
		s.GoodputBps = float64(s.Bytes) * 8 / dt
		switch {
		case r.sfs != nil:
			s.TCP = mptcpLevel(r.mi, r.sfs)
			cur := map[string]uint64{}
			for i, sf := range r.sfs {
				key := subflowKey(sf, i)
				ti := tcpInfo(&sf.TCPInfo, sf.Flags)
				var b int64
				if p, ok := prevSf[key]; !ok || ti.BytesAcked >= p {
					b = int64(ti.BytesAcked - p)
				}
				ss := analysis.SubflowSample{ID: key, Bytes: b, GoodputBps: float64(b) * 8 / dt, TCP: ti}
				if sf.HaveIdentities {
					ss.Src, ss.Dst = sf.Local.String(), sf.Remote.String()
				}
				s.Subflows = append(s.Subflows, ss)
				cur[key] = ti.BytesAcked
			}
			prevSf = cur
		case r.info != nil:
			ti := tcpInfo(r.info, r.tf)
			s.TCP = &ti
		}
		if r.wrNs > 0 {
			s.WriteWaitUs = uint64(r.wrNs / 1000)
		}
		if r.sq != nil {
			s.SendBuffer = &analysis.SendBuffer{SizeBytes: int64(r.sq.Size), QueuedBytes: int64(r.sq.Queued),
				UnsentBytes: int64(r.sq.Unsent), WmemQueuedBytes: int64(r.sq.WmemQueued)}
		}
		out = append(out, s)
		prevAt, prevRx, prevPkts = r.at, r.rx, r.pkts
	}
	return out
}
