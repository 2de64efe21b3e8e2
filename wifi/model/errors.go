package model

import (
	"math"
	"time"
)

// The error model: a faithful implementation of the equations of ns-3's
// YansErrorRateModel (src/wifi/model/yans-error-rate-model.cc; Lacage and
// Henderson, "Yet Another Network Simulator", WNS2 2006): the uncoded BER
// of BPSK or square M-QAM at Eb/N0 = SNR · B / R, then a union bound over
// the convolutional code's free distance d_free with its weight spectrum
// (a_dfree, a_dfree+1), giving a chunk success rate (1 − P_u)^nbits.

// erfc from the standard library.
var erfc = math.Erfc

func bpskBER(snr float64, spreadHz, phyBps float64) float64 {
	ebno := snr * spreadHz / phyBps
	return 0.5 * erfc(math.Sqrt(ebno))
}

func qamBER(snr float64, m int, spreadHz, phyBps float64) float64 {
	ebno := snr * spreadHz / phyBps
	mf := float64(m)
	z := math.Sqrt((1.5 * math.Log2(mf) * ebno) / (mf - 1))
	z1 := (1 - 1/math.Sqrt(mf)) * erfc(z)
	z2 := 1 - math.Pow(1-z1, 2)
	return z2 / math.Log2(mf)
}

// binomial is C(n,k) p^k (1−p)^(n−k).
func binomial(k int, p float64, n int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c * math.Pow(p, float64(k)) * math.Pow(1-p, float64(n-k))
}

// pd is the probability of choosing the wrong path at Hamming distance d
// (hard-decision Viterbi), as ns-3's CalculatePd computes it (its sums
// stop at d − 1, kept for fidelity to the reference).
func pd(ber float64, d int) float64 {
	sum := 0.0
	if d%2 == 1 {
		for i := (d + 1) / 2; i < d; i++ {
			sum += binomial(i, ber, d)
		}
		return sum
	}
	for i := d/2 + 1; i < d; i++ {
		sum += binomial(i, ber, d)
	}
	return sum + 0.5*binomial(d/2, ber, d)
}

// fecBitError is the union bound P_u on the bit error rate after the
// convolutional decoder (a chunk of n bits survives with (1 − P_u)^n).
func fecBitError(ber float64, dfree, adfree, adfree1 int) float64 {
	if ber == 0 {
		return 0
	}
	pmu := float64(adfree) * pd(ber, dfree)
	if adfree1 != 0 {
		pmu += float64(adfree1) * pd(ber, dfree+1)
	}
	return math.Min(pmu, 1)
}

// code is a code rate's free distance and weight spectrum, per ns-3.
type code struct{ dfree, ad, ad1 int }

func codeFor(m modulation) code {
	switch {
	case m.num == 1 && m.den == 2:
		return code{10, 11, 0}
	case m.num == 2 && m.den == 3:
		return code{6, 1, 16}
	case m.num == 5 && m.den == 6:
		return code{4, 14, 69}
	}
	return code{5, 8, 31} // 3/4
}

// ChunkSuccess is the probability that nbits bits sent at r arrive intact
// at linear SNR snr (ns-3 YansErrorRateModel::GetChunkSuccessRate). The
// signal spread is the channel width; the PHY rate is ns-3's
// WifiMode::GetPhyRate, the coded rate (data rate ÷ code rate: 72 Mbit/s
// for 54). DSSS/CCK use
// the DBPSK/DQPSK/CCK expressions of ns-3's DsssErrorRateModel (without
// its GSL path).
func ChunkSuccess(r Rate, snr float64, nbits float64) float64 {
	if nbits <= 0 {
		return 1
	}
	if r.Class == DSSS {
		return dsssSuccess(r, snr, nbits)
	}
	return math.Pow(1-bitError(r, snr), nbits)
}

// bitError is the per-bit failure probability ChunkSuccess raises to the
// number of bits: 1 − ChunkSuccess(r, snr, nbits) = 1 − (1 − bitError)^nbits.
func bitError(r Rate, snr float64) float64 {
	if r.Class == DSSS {
		return dsssBER(r, snr)
	}
	width := float64(r.WidthMHz)
	if r.Class == OFDM || width == 0 {
		width = 20
	}
	spread := width * 1e6
	m := r.mod()
	phy := r.Mbps() * 1e6 / m.rate()
	c := codeFor(m)
	var ber float64
	if m.m == 2 {
		ber = bpskBER(snr, spread, phy)
		c.ad1 = 0
	} else {
		ber = qamBER(snr, m.m, spread, phy)
	}
	return fecBitError(ber, c.dfree, c.ad, c.ad1)
}

// dsssSuccess follows ns-3's DsssErrorRateModel: DBPSK (1 Mbit/s)
// BER = ½·exp(−Eb/N0) and DQPSK (2 Mbit/s) by its closed form, both at
// 22 MHz signal spread and 1 Msym/s; CCK 5.5 and 11 Mbit/s by the fitted
// curves ns-3 uses when built without GSL (Debian's ns-3 links GSL and
// integrates instead; the fits are within a fraction of a dB of it).
func dsssSuccess(r Rate, snr float64, nbits float64) float64 {
	return math.Min(1, math.Pow(1-dsssBER(r, snr), nbits))
}

// dsssBER is the bit error rate of DsssErrorRateModel at r and linear SNR.
func dsssBER(r Rate, snr float64) float64 {
	var ber float64
	switch r.Kbps {
	case 1000:
		ber = 0.5 * math.Exp(-snr*22)
	case 2000:
		x := snr * 22 / 2
		ber = (math.Sqrt2 + 1) / math.Sqrt(8*math.Pi*math.Sqrt2) / math.Sqrt(x) * math.Exp(-(2-math.Sqrt2)*x)
	case 5500:
		switch {
		case snr > 10:
			ber = 0
		case snr < 0.1:
			ber = 0.5
		default:
			ber = 5.3681634344056195e-01 * math.Exp(-math.Pow((snr-3.3092430025608586e-03)/4.1654372361004000e-01, 1.0288981434358866))
		}
	default:
		switch {
		case snr > 10:
			ber = 0
		case snr < 0.1:
			ber = 0.5
		default:
			ber = (7.9056742265333456e-03*snr*snr - 1.8397449399176360e-01*snr + 1.0740689468707241) /
				(snr*snr*snr + 1.0523316904502553*snr*snr + 3.0552298746496687e-01*snr + 2.2032715128698435)
		}
	}
	return math.Max(0, math.Min(0.5, ber))
}

// headerRate is the rate the PHY header (L-SIG, HT-SIG, ...) is sent at:
// 6 Mbit/s BPSK ½ for OFDM classes, 1 Mbit/s for DSSS.
func headerRate(r Rate) (Rate, time.Duration) {
	switch r.Class {
	case DSSS:
		if r.ShortPreamble && r.Kbps != 1000 {
			return Rate{Class: DSSS, Kbps: 2000}, 24 * time.Microsecond
		}
		return Rate{Class: DSSS, Kbps: 1000}, 48 * time.Microsecond
	case OFDM:
		return Rate{Class: OFDM, Kbps: 6000}, 4 * time.Microsecond
	case HT:
		return Rate{Class: OFDM, Kbps: 6000}, 12 * time.Microsecond // L-SIG + HT-SIG
	case VHT:
		return Rate{Class: OFDM, Kbps: 6000}, 12 * time.Microsecond // L-SIG + VHT-SIG-A
	}
	return Rate{Class: OFDM, Kbps: 6000}, 16 * time.Microsecond // L-SIG, RL-SIG, HE-SIG-A
}

// PER is the probability that a PSDU of psdu bytes sent at r fails at
// linear SNR snr: the PHY header at its rate, then the payload's bits —
// as ns-3 counts them, the data rate × the payload symbols' duration
// (service, tail and pad bits included).
func PER(r Rate, psdu int, snr float64) float64 {
	hr, hd := headerRate(r)
	hbits := hr.Mbps() * float64(hd) / float64(time.Microsecond)
	ok := ChunkSuccess(hr, snr, hbits) * ChunkSuccess(r, snr, payloadBits(r, psdu))
	return 1 - ok
}

// payloadBits is N_SYM × N_DBPS of a PSDU (8·psdu for DSSS).
func payloadBits(r Rate, psdu int) float64 {
	if r.Class == DSSS {
		return float64(8 * psdu)
	}
	nd := r.NDBPS()
	return float64(ceilDiv(8*psdu+16+6*nes(r), nd) * nd)
}

// HeaderSuccess is the probability the PHY header decodes: without it the
// receiver sees no frame (a failed A-MPDU, no Block Ack).
func HeaderSuccess(r Rate, snr float64) float64 {
	hr, hd := headerRate(r)
	return ChunkSuccess(hr, snr, hr.Mbps()*float64(hd)/float64(time.Microsecond))
}

// MPDUSuccess is the probability one MPDU of mpdu bytes inside a PSDU
// decodes, given the header did (its own 8·mpdu bits).
func MPDUSuccess(r Rate, mpdu int, snr float64) float64 {
	return ChunkSuccess(r, snr, float64(8*mpdu))
}

// phyFields is where a PPDU at r carries its PHY header and its payload,
// from the PPDU's start: the header (L-SIG and, for HT/VHT/HE, the SIG
// fields after it; for DSSS the PLCP header) from hdrStart for the
// duration headerRate gives, the payload (PSDU) from payStart to the end
// of the PPDU (less 2.4 GHz's signal extension). The training fields in
// between carry no bits, as in ns-3's PHY header sections.
func phyFields(r Rate) (hdrStart, payStart time.Duration) {
	us := time.Microsecond
	_, hd := headerRate(r)
	switch r.Class {
	case DSSS:
		pre := 192 * us
		if r.ShortPreamble && r.Kbps != 1000 {
			pre = 96 * us
		}
		return pre - hd, pre
	case OFDM:
		return 16 * us, 20 * us
	case HT:
		nltf := 1
		switch r.streams() {
		case 2:
			nltf = 2
		case 3, 4:
			nltf = 4
		}
		return 16 * us, 32*us + time.Duration(nltf)*4*us
	case VHT:
		return 16 * us, 36*us + time.Duration(ltfCount(r.streams()))*4*us
	}
	return 16 * us, 36*us + time.Duration(ltfCount(r.streams()))*(6400*time.Nanosecond+r.GI)
}
