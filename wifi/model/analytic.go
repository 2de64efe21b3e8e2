package model

import (
	"math"
	"time"
)

// Exchange is the airtime of one channel access, term by term, with the
// mean backoff (CWmin/2 slots) of a sender that never collides.
type Exchange struct {
	AIFS    time.Duration `json:"aifs_ns"`
	Backoff time.Duration `json:"backoff_ns"`
	PPDU    time.Duration `json:"ppdu_ns"`
	SIFS    time.Duration `json:"sifs_ns"`
	Resp    time.Duration `json:"response_ns"` // ACK or Block Ack
	MPDUs   int           `json:"mpdus"`
	PSDU    int           `json:"psdu_bytes"`
}

// Total is the whole exchange.
func (e Exchange) Total() time.Duration { return e.AIFS + e.Backoff + e.PPDU + e.SIFS + e.Resp }

// exchange is one access carrying n MPDUs of b bytes.
func (s *Scenario) exchange(n, b int) Exchange {
	mac := s.MAC
	ed := mac.Param[s.AC]
	e := Exchange{AIFS: mac.AIFS(s.AC), Backoff: time.Duration(ed.CWMin) * mac.Slot / 2, SIFS: mac.sifsAfter(), MPDUs: n}
	e.PSDU = s.psdu(n, b)
	e.PPDU = TxTime(s.Rate, e.PSDU, mac.Band)
	if n > 1 {
		e.Resp = mac.BATime(s.Rate)
	} else {
		e.Resp = mac.ACKTime(s.Rate)
	}
	return e
}

// Analytic is the closed-form prediction for one saturated sender on an
// error-free channel: every access waits AIFS and the mean backoff.
type Analytic struct {
	Data Exchange `json:"data"`
	// Ack is the access carrying the TCP ACKs answering one data access
	// (TCP only).
	Ack *Exchange `json:"tcp_ack,omitempty"`
	// GoodputMbps is the application goodput.
	GoodputMbps float64 `json:"goodput_mbps"`
}

// Predict is the analytic prediction for one station (Stations is
// ignored): UDP, Payload·8 / data exchange; TCP, a data access of N
// MPDUs then one access of ⌈N/K⌉ TCP ACKs (one per K segments; with
// A-MPDU the AP aggregates them, without it each ACK is its own access).
func Predict(s Scenario) (Analytic, error) {
	if err := s.Validate(); err != nil {
		return Analytic{}, err
	}
	n := 1
	if s.AMPDU {
		n = MaxMPDUsPerAMPDU(s.Rate, s.dataMPDU(), s.MAC.Band, s.window())
	}
	a := Analytic{Data: s.exchange(n, s.dataMPDU())}
	bits := float64(n * s.Payload * 8)
	cycle := a.Data.Total()
	if s.Proto == "tcp" {
		acks := float64(n) / float64(s.AckEvery)
		if s.AMPDU {
			k := int(math.Ceil(acks))
			e := s.exchange(k, s.ackMPDU())
			a.Ack = &e
			cycle += time.Duration(float64(e.Total()) * acks / float64(k))
		} else {
			e := s.exchange(1, s.ackMPDU())
			a.Ack = &e
			cycle += time.Duration(float64(e.Total()) * acks)
		}
	}
	a.GoodputMbps = bits / (float64(cycle) / 1e3) // bits per ns·1e3 = Mbit/s
	return a, nil
}

// Bianchi is the solution of Bianchi's saturation model (IEEE JSAC 18(3),
// 2000) for basic access: n stations, W = CWmin + 1, m doubling stages
// up to CWmax + 1, unlimited retries.
type Bianchi struct {
	Tau         float64 `json:"tau"`         // per-slot transmission probability
	P           float64 `json:"collision_p"` // conditional collision probability
	GoodputMbps float64 `json:"goodput_mbps"`
}

// SolveBianchi solves the fixed point τ = 2(1−2p) / ((1−2p)(W+1) +
// pW(1−(2p)^m)), p = 1 − (1−τ)^(n−1), and the throughput S = Ps·Ptr·E[P]
// / ((1−Ptr)σ + Ptr·Ps·Ts + Ptr(1−Ps)·Tc) with Ts = PPDU + SIFS + ACK +
// AIFS and Tc = PPDU + AIFS (UDP payloads).
func SolveBianchi(s Scenario) (Bianchi, error) {
	if err := s.Validate(); err != nil {
		return Bianchi{}, err
	}
	ed := s.MAC.Param[s.AC]
	W := float64(ed.CWMin + 1)
	m := math.Round(math.Log2(float64(ed.CWMax+1) / W))
	n := float64(s.Stations)
	tauOf := func(p float64) float64 {
		if math.Abs(1-2*p) < 1e-12 {
			p += 1e-9
		}
		return 2 * (1 - 2*p) / ((1-2*p)*(W+1) + p*W*(1-math.Pow(2*p, m)))
	}
	// Bisection on p: f(p) = p − (1 − (1−τ(p))^(n−1)) is increasing.
	lo, hi := 0.0, 1.0
	for range 200 {
		mid := (lo + hi) / 2
		if mid-(1-math.Pow(1-tauOf(mid), n-1)) > 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	p := (lo + hi) / 2
	if s.Stations == 1 {
		p = 0
	}
	tau := tauOf(p)
	ptr := 1 - math.Pow(1-tau, n)
	ps := n * tau * math.Pow(1-tau, n-1) / ptr
	ppdu := TxTime(s.Rate, s.psdu(1, s.dataMPDU()), s.MAC.Band)
	aifs := s.MAC.AIFS(s.AC)
	ts := ppdu + s.MAC.sifsAfter() + s.MAC.ACKTime(s.Rate) + aifs
	tc := ppdu + aifs
	sigma := float64(s.MAC.Slot)
	den := (1-ptr)*sigma + ptr*ps*float64(ts) + ptr*(1-ps)*float64(tc)
	bits := float64(s.Payload * 8)
	return Bianchi{Tau: tau, P: p, GoodputMbps: ps * ptr * bits / den * 1e3}, nil
}
