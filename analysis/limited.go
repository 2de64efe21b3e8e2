package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Limits says where a sender's time went over a window, as shares of
// that time (each 0..1; Network + Rwnd + Sndbuf + App = 1).
type Limits struct {
	// Network: data in flight and more ready to send — the congestion
	// window (or pacing) set the pace.
	Network float64 `json:"network"`
	// Rwnd: the peer's receive window stopped the sender
	// (tcpi_rwnd_limited; for an MPTCP subflow also time it sat idle
	// while the connection's send buffer was full of data not yet sent:
	// the data-level window).
	Rwnd float64 `json:"rwnd"`
	// Sndbuf: the socket had room in cwnd and nothing to send while the
	// writer waited for send-buffer space (tcpi_sndbuf_limited, and time
	// short of data while the application was blocked in its writes —
	// for an MPTCP subflow, on the connection's buffer).
	Sndbuf float64 `json:"sndbuf"`
	// App: short of data while the application was not writing — it
	// did not offer more.
	App float64 `json:"app"`
	// Busy is the share with data in flight or queued (tcpi_busy_time),
	// whatever limited it.
	Busy float64 `json:"busy"`
	// SpanS is the time the shares cover, in seconds.
	SpanS float64 `json:"span_s"`
}

// LimitedBy is a flow's Limits; for MPTCP the connection's, weighted
// over its subflows, with each subflow's own.
type LimitedBy struct {
	Limits
	Subflows []SubflowLimits `json:"subflows,omitempty"`
}

// SubflowLimits is one MPTCP subflow's Limits over the window.
type SubflowLimits struct {
	ID  string `json:"id"`
	Src string `json:"src,omitempty"`
	Dst string `json:"dst,omitempty"`
	// GoodputBps is the payload acknowledged on the subflow over the
	// window, in bits/s.
	GoodputBps float64 `json:"goodput_bps"`
	// Idle is set when the subflow carried nothing in the window (a
	// backup subflow, or one the scheduler left unused): nothing limited
	// it, so its shares are zero and only Busy and SpanS are kept.
	Idle bool `json:"idle,omitempty"`
	Limits
}

// Limit names, as Dominant and the summaries print them.
const (
	LimitNetwork = "network"
	LimitRwnd    = "receive window"
	LimitSndbuf  = "send buffer"
	LimitApp     = "application"
)

// Shares lists the four limits, largest first (ties in the order
// network, receive window, send buffer, application).
func (l Limits) Shares() []LimitShare {
	out := []LimitShare{{LimitNetwork, l.Network}, {LimitRwnd, l.Rwnd}, {LimitSndbuf, l.Sndbuf}, {LimitApp, l.App}}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Share > out[j].Share })
	return out
}

// LimitShare is one limit and its share of time.
type LimitShare struct {
	Name  string
	Share float64
}

// Dominant is the limit with the largest share.
func (l Limits) Dominant() string { return l.Shares()[0].Name }

// String is "send buffer 41 %, network 55 %": every limit of at least
// 0.5 %, largest first.
func (l Limits) String() string {
	var parts []string
	for _, s := range l.Shares() {
		if s.Share >= 0.005 {
			parts = append(parts, fmt.Sprintf("%s %.0f %%", s.Name, 100*s.Share))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// fullBuffer is the fill of a send buffer (sk_wmem_queued, else
// SIOCOUTQ, over SO_SNDBUF) from which a sender short of data counts as
// send-buffer-limited when the writer's own waiting was not recorded: a
// blocked writer is woken once a third of the buffer is free
// (sk_stream_write_space), so a buffer a bulk writer keeps full stays
// above two thirds.
const fullBuffer = 0.5

// limAcc accumulates seconds per limit.
type limAcc struct{ net, rwnd, sndbuf, app, busy, total float64 }

// shortOfData reports whether a socket had cwnd room and nothing to
// fill it with at the instant b was read: the kernel's own
// application-limited mark on its delivery rate, or fewer packets in
// flight than cwnd with less than a segment unsent.
func shortOfData(b *TCPInfo) bool {
	return b.AppLimited || (b.NotsentBytes < max(b.MSS, 1) && b.InFlightSegs < b.CwndSegs)
}

// bufferFull reports whether a send buffer is at least fullBuffer full.
func bufferFull(buf *SendBuffer) bool {
	if buf == nil || buf.SizeBytes <= 0 {
		return false
	}
	used := buf.WmemQueuedBytes
	if used == 0 {
		used = buf.QueuedBytes
	}
	return float64(used) >= fullBuffer*float64(buf.SizeBytes)
}

// add splits one sampling interval of dt seconds (weight frac: its part
// inside the window) of a socket whose cumulative times went from a to
// b. buf is the sending socket's buffer at the interval's end (nil:
// unknown); wait the share of the interval the writer spent waiting in
// its write calls (negative: not recorded). dataLevel is set for an
// MPTCP subflow, whose buf is the connection's: a buffer mostly holding
// data not handed to any subflow then points at the data-level receive
// window.
//
// Within the interval the kernel's rwnd- and sndbuf-limited times count
// as such. The rest of tcpi_busy_time is network-limited unless the
// socket was short of data when read (shortOfData); that time and the
// idle time (nothing in flight, nothing queued) were short of data,
// which the writer's waiting explains in proportion (the send buffer),
// the rest being the application's. Without the writer's waiting, a
// full buffer (bufferFull) gives all of it to the send buffer, an
// emptier one to the application.
func (acc *limAcc) add(a, b *TCPInfo, buf *SendBuffer, wait, dt, frac float64, dataLevel bool) {
	if b.BusyUs < a.BusyUs || b.RwndLimitedUs < a.RwndLimitedUs || b.SndbufLimitedUs < a.SndbufLimitedUs || dt <= 0 || frac <= 0 {
		return // counters went backwards: another socket under the same key
	}
	dB := float64(b.BusyUs-a.BusyUs) / 1e6
	dR := float64(b.RwndLimitedUs-a.RwndLimitedUs) / 1e6
	dS := float64(b.SndbufLimitedUs-a.SndbufLimitedUs) / 1e6
	// The kernel counts in jiffies and the sampler reads a few µs late:
	// a busy time can exceed the interval by a tick.
	if dB > dt {
		k := dt / dB
		dB, dR, dS = dt, dR*k, dS*k
	}
	if dR+dS > dB {
		k := dB / (dR + dS)
		dR, dS = dR*k, dS*k
	}
	rest, short := dB-dR-dS, dt-dB
	net := rest
	if shortOfData(b) {
		net, short = 0, short+rest
	}
	var toBuf float64
	switch {
	case wait >= 0:
		toBuf = short * min(wait, 1)
	case bufferFull(buf):
		toBuf = short
	}
	if dataLevel && buf != nil && buf.QueuedBytes > 0 && 2*buf.UnsentBytes >= buf.QueuedBytes {
		dR += toBuf
	} else {
		dS += toBuf
	}
	acc.app += (short - toBuf) * frac
	acc.net += net * frac
	acc.rwnd += dR * frac
	acc.sndbuf += dS * frac
	acc.busy += dB * frac
	acc.total += dt * frac
}

func (acc *limAcc) limits() Limits {
	if acc.total <= 0 {
		return Limits{}
	}
	t := acc.total
	return Limits{Network: acc.net / t, Rwnd: acc.rwnd / t, Sndbuf: acc.sndbuf / t, App: acc.app / t, Busy: acc.busy / t, SpanS: t}
}

// hasBusy reports whether the flow's samples carry the kernel's busy
// times (Linux 4.10+, results written since this field existed).
func hasBusy(f *Flow) bool {
	for _, s := range f.Samples {
		if s.TCP != nil && s.TCP.BusyUs > 0 {
			return true
		}
		for _, sf := range s.Subflows {
			if sf.TCP.BusyUs > 0 {
				return true
			}
		}
	}
	return false
}

// Limited says what limited a TCP or MPTCP flow's sender over w, from
// the deltas of its sampled busy, receive-window- and
// send-buffer-limited times, whether it was short of data when read
// (app-limited flag, in flight against cwnd, unsent bytes), the time its
// writer waited in writes, and its send buffer (see METRICS.md). An MPTCP flow is judged per subflow, against
// the connection's send buffer, and the connection's shares are the
// subflows' weighted by the rate each reaches while busy (bytes over
// busy time): a starved fast subflow costs more than a starved slow one.
// The window ends where the writer stopped (Flow.SendEndS) when that is
// recorded. ok is false when the samples carry no busy times (UDP, the
// iperf3 engine, kernels before 4.10, older results) or none falls in w.
func Limited(f *Flow, w Window) (LimitedBy, bool) {
	if f.Proto == "udp" || !hasBusy(f) {
		return LimitedBy{}, false
	}
	if f.SendEndS > 0 && f.SendEndS < w.ToS {
		w.ToS = f.SendEndS // the drain after the writer stopped is no one's limit
	}
	if w.Empty() {
		return LimitedBy{}, false
	}
	var conn limAcc
	type sfAcc struct {
		acc      limAcc
		bytes    float64
		src, dst string
		prev     *TCPInfo
	}
	sfs := map[string]*sfAcc{}
	var order []string
	multipath := false
	for i := range f.Samples {
		s := &f.Samples[i]
		frac := f.overlapFraction(i, w)
		dt := s.TS - f.sampleStart(i)
		if len(s.Subflows) > 0 {
			multipath = true
		}
		wait := -1.0
		if s.WriteWaitUs > 0 {
			var before uint64
			if i > 0 {
				before = f.Samples[i-1].WriteWaitUs
			}
			if s.WriteWaitUs >= before {
				wait = float64(s.WriteWaitUs-before) / 1e6 / dt
			}
		}
		for j := range s.Subflows {
			sf := &s.Subflows[j]
			a := sfs[sf.ID]
			if a == nil {
				a = &sfAcc{}
				sfs[sf.ID] = a
				order = append(order, sf.ID)
				if i == 0 {
					a.prev = &TCPInfo{}
				}
			}
			if a.prev != nil {
				a.acc.add(a.prev, &sf.TCP, s.SendBuffer, wait, dt, frac, true)
			}
			a.bytes += float64(sf.Bytes) * frac
			if sf.Src != "" {
				a.src, a.dst = sf.Src, sf.Dst
			}
			a.prev = &sf.TCP
		}
		if multipath || s.TCP == nil {
			continue
		}
		prev := &TCPInfo{}
		if i > 0 {
			if prev = f.Samples[i-1].TCP; prev == nil {
				continue
			}
		}
		conn.add(prev, s.TCP, s.SendBuffer, wait, dt, frac, false)
	}
	if !multipath {
		l := conn.limits()
		return LimitedBy{Limits: l}, l.SpanS > 0
	}
	var out LimitedBy
	var wsum float64
	for _, id := range order {
		a := sfs[id]
		l := a.acc.limits()
		if l.SpanS <= 0 {
			continue
		}
		sl := SubflowLimits{ID: id, Src: a.src, Dst: a.dst, GoodputBps: a.bytes * 8 / w.Len(), Limits: l}
		if l.Busy <= 0 || a.bytes <= 0 {
			// Carried nothing (a backup subflow): the scheduler's choice,
			// not a limit, and no say in the connection.
			sl.Idle, sl.Limits = true, Limits{Busy: l.Busy, SpanS: l.SpanS}
			out.Subflows = append(out.Subflows, sl)
			continue
		}
		out.Subflows = append(out.Subflows, sl)
		wt := a.bytes / (l.Busy * l.SpanS) // bytes per busy second
		wsum += wt
		out.Network += wt * l.Network
		out.Rwnd += wt * l.Rwnd
		out.Sndbuf += wt * l.Sndbuf
		out.App += wt * l.App
		out.Busy += wt * l.Busy
		out.SpanS = math.Max(out.SpanS, l.SpanS)
	}
	if wsum <= 0 {
		return LimitedBy{Subflows: out.Subflows}, false
	}
	out.Network, out.Rwnd, out.Sndbuf, out.App, out.Busy = out.Network/wsum, out.Rwnd/wsum, out.Sndbuf/wsum, out.App/wsum, out.Busy/wsum
	return out, true
}

// Fastest is the subflow that carried the most data (nil for TCP or
// when none carried any).
func (l *LimitedBy) Fastest() *SubflowLimits {
	var best *SubflowLimits
	for i := range l.Subflows {
		if l.Subflows[i].Idle {
			continue
		}
		if best == nil || l.Subflows[i].GoodputBps > best.GoodputBps {
			best = &l.Subflows[i]
		}
	}
	return best
}
