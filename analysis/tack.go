package analysis

import (
	"fmt"
	"math"
)

// TACKParams are the parameters of the TACK ACK-frequency model (Li et
// al., SIGCOMM 2020; Journal of Software 35(4), 2024).
type TACKParams struct {
	// Beta is the number of TACKs per RTT_min (β ≥ 2; paper default 4).
	Beta float64 `json:"beta"`
	// L is the number of full-sized packets per ACK in byte-counting mode
	// (paper default 2).
	L float64 `json:"l"`
	// MSSBytes is the segment size the model counts in (paper: 1500).
	MSSBytes float64 `json:"mss_bytes"`
}

// DefaultTACK are the paper's defaults: β = 4, L = 2, MSS = 1500 bytes.
var DefaultTACK = TACKParams{Beta: 4, L: 2, MSSBytes: 1500}

// Validate rejects parameters outside the model's domain.
func (p TACKParams) Validate() error {
	switch {
	case !(p.Beta >= 2):
		return fmt.Errorf("beta %g: must be ≥ 2 (β = 1 is stop-and-wait)", p.Beta)
	case !(p.L >= 1):
		return fmt.Errorf("parameter L = %g: must be ≥ 1", p.L)
	case !(p.MSSBytes > 0):
		return fmt.Errorf("mss %g: must be > 0 bytes", p.MSSBytes)
	}
	return nil
}

// FByteCounting is the ACK frequency of an ACK every L full-sized packets,
// bw/(L·MSS), in Hz, for bw in bits/s and mss in bytes. L = 1 is per-packet
// ACK (Linux quick-ACK), L = 2 Linux's delayed ACK under bulk load; the
// model calls both f_tcp(L).
func FByteCounting(bwBps, l, mssBytes float64) float64 {
	return bwBps / (l * mssBytes * 8)
}

// FPeriodic is the frequency of a periodic ACK every alpha seconds, 1/α.
func FPeriodic(alphaS float64) float64 { return 1 / alphaS }

// FDelayed is the RFC 1122/5681 delayed-ACK frequency with delayed-ACK
// timer gammaS: every packet is acknowledged by the timer while fewer than
// two full-sized packets arrive per γ (bw < 2·MSS/γ), otherwise every
// second packet: bw/MSS below that rate, bw/(2·MSS) above.
func FDelayed(bwBps, mssBytes, gammaS float64) float64 {
	if bwBps < 2*mssBytes*8/gammaS {
		return FByteCounting(bwBps, 1, mssBytes)
	}
	return FByteCounting(bwBps, 2, mssBytes)
}

// FTack is the TACK frequency f_tack = min(bw/(L·MSS), β/RTT_min) in Hz,
// for bw in bits/s and rttMinS in seconds.
func FTack(bwBps, rttMinS float64, p TACKParams) float64 {
	return math.Min(FByteCounting(bwBps, p.L, p.MSSBytes), p.Beta/rttMinS)
}

// PivotBps is the bandwidth at which TACK switches from byte counting to
// periodic ACKs: bw·RTT_min = β·L·MSS, so bw = β·L·MSS·8/RTT_min bits/s.
func PivotBps(rttMinS float64, p TACKParams) float64 {
	return p.Beta * p.L * p.MSSBytes * 8 / rttMinS
}

// TACK regimes.
const (
	RegimeByteCounting = "byte-counting" // BDP < β·L·MSS: f = bw/(L·MSS)
	RegimePeriodic     = "periodic"      // BDP ≥ β·L·MSS: f = β/RTT_min
)

// Regime is the TACK regime at a bandwidth and RTT_min.
func Regime(bwBps, rttMinS float64, p TACKParams) string {
	if bwBps*rttMinS/8 >= p.Beta*p.L*p.MSSBytes {
		return RegimePeriodic
	}
	return RegimeByteCounting
}

// WMinBytes is the smallest bottleneck buffer plus BDP TACK needs to keep
// the pipe full, β/(β−1)·BDP bytes (β = 4 needs a third of a BDP of
// buffer on top of the BDP).
func WMinBytes(bwBps, rttMinS, beta float64) float64 {
	return beta / (beta - 1) * bwBps * rttMinS / 8
}

// TACKPoint is the model evaluated at one bandwidth and RTT_min.
type TACKPoint struct {
	BwBps   float64    `json:"bw_bps"`
	RTTMinS float64    `json:"rtt_min_s"`
	Params  TACKParams `json:"params"`
	// FTackHz is f_tack; FTCP1Hz and FTCP2Hz are byte-counting ACK with
	// L = 1 (per packet) and L = 2 (delayed ACK under load).
	FTackHz float64 `json:"f_tack_hz"`
	FTCP1Hz float64 `json:"f_tcp_l1_hz"`
	FTCP2Hz float64 `json:"f_tcp_l2_hz"`
	// RatioL1 and RatioL2 are f_tack/f_tcp(L=1) and f_tack/f_tcp(L=2).
	RatioL1 float64 `json:"ratio_l1"`
	RatioL2 float64 `json:"ratio_l2"`
	// Regime is RegimeByteCounting or RegimePeriodic; PivotBps the
	// bandwidth at which it switches for this RTT_min.
	Regime   string  `json:"regime"`
	PivotBps float64 `json:"pivot_bps"`
	// BDPBytes is bw·RTT_min/8.
	BDPBytes float64 `json:"bdp_bytes"`
}

// TACKModel evaluates the model at bw (bits/s) and rttMinS (seconds).
func TACKModel(bwBps, rttMinS float64, p TACKParams) TACKPoint {
	pt := TACKPoint{
		BwBps: bwBps, RTTMinS: rttMinS, Params: p,
		FTackHz:  FTack(bwBps, rttMinS, p),
		FTCP1Hz:  FByteCounting(bwBps, 1, p.MSSBytes),
		FTCP2Hz:  FByteCounting(bwBps, 2, p.MSSBytes),
		Regime:   Regime(bwBps, rttMinS, p),
		PivotBps: PivotBps(rttMinS, p),
		BDPBytes: bwBps * rttMinS / 8,
	}
	pt.RatioL1 = pt.FTackHz / pt.FTCP1Hz
	pt.RatioL2 = pt.FTackHz / pt.FTCP2Hz
	return pt
}

// LogSpace returns n values spaced evenly on a log scale from lo to hi
// inclusive (lo, hi > 0, n ≥ 2).
func LogSpace(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	a, b := math.Log10(lo), math.Log10(hi)
	for i := range out {
		out[i] = math.Pow(10, a+(b-a)*float64(i)/float64(n-1))
	}
	out[0], out[n-1] = lo, hi
	return out
}

// TACKSweep is a Fig. 22-style family of curves: for each fixed value the
// model over the swept axis.
type TACKSweep struct {
	// Axis is "rtt" (RTT_min swept, one curve per bandwidth) or "bw"
	// (bandwidth swept, one curve per RTT_min).
	Axis   string      `json:"axis"`
	Curves []TACKCurve `json:"curves"`
	Params TACKParams  `json:"params"`
}

// TACKCurve is one curve of a sweep.
type TACKCurve struct {
	// Fixed is the bandwidth (bits/s, Axis "rtt") or RTT_min (seconds,
	// Axis "bw") held constant.
	Fixed  float64     `json:"fixed"`
	Points []TACKPoint `json:"points"`
}

// SweepRTT sweeps RTT_min over rtts (seconds) for each bandwidth in bws
// (bits/s) — Fig. 22(a).
func SweepRTT(bws, rtts []float64, p TACKParams) TACKSweep {
	sw := TACKSweep{Axis: "rtt", Params: p}
	for _, bw := range bws {
		c := TACKCurve{Fixed: bw}
		for _, r := range rtts {
			c.Points = append(c.Points, TACKModel(bw, r, p))
		}
		sw.Curves = append(sw.Curves, c)
	}
	return sw
}

// SweepBw sweeps the bandwidth over bws (bits/s) for each RTT_min in rtts
// (seconds) — Fig. 22(b).
func SweepBw(rtts, bws []float64, p TACKParams) TACKSweep {
	sw := TACKSweep{Axis: "bw", Params: p}
	for _, r := range rtts {
		c := TACKCurve{Fixed: r}
		for _, bw := range bws {
			c.Points = append(c.Points, TACKModel(bw, r, p))
		}
		sw.Curves = append(sw.Curves, c)
	}
	return sw
}
