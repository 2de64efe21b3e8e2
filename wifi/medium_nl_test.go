package wifi

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
	"github.com/mdlayher/netlink"
)

// kernelFrame encodes a FRAME the way mac80211_hwsim_tx_frame_nl does.
func kernelFrame(t testing.TB, tx [6]byte, data []byte, freq int, rates [4]HwRate, cookie uint64) []byte {
	ae := netlink.NewAttributeEncoder()
	ae.Bytes(hwsimAttrAddrTransmitter, tx[:])
	ae.Bytes(hwsimAttrFrame, data)
	ae.Uint32(hwsimAttrFlags, hwsimTxCtlReqTxStatus)
	ae.Uint32(hwsimAttrFreq, uint32(freq))
	ti := make([]byte, 8)
	tf := make([]byte, 12)
	for i, r := range rates {
		ti[2*i], ti[2*i+1] = byte(r.Idx), r.Count
		tf[3*i] = byte(r.Idx)
		binary.NativeEndian.PutUint16(tf[3*i+1:], r.Flags)
	}
	ae.Bytes(hwsimAttrTxInfo, ti)
	ae.Bytes(hwsimAttrTxInfoFlags, tf)
	ae.Uint64(hwsimAttrCookie, cookie)
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeFrame(t *testing.T) {
	tx := [6]byte{0x42, 0, 0, 0, 1, 0}
	data := make([]byte, 60)
	data[0] = 0x88
	rates := [4]HwRate{{Idx: 7, Count: 4, Flags: rateFlagMCS | rateFlagShortGI}, {Idx: 3, Count: 3, Flags: rateFlagMCS}, {Idx: 0, Count: 2}, {Idx: -1}}
	v, err := decodeMediumMessage(hwsimCmdFrame, kernelFrame(t, tx, data, 5180, rates, 0xdeadbeef01))
	if err != nil {
		t.Fatal(err)
	}
	f := v.(*HwFrame)
	if f.Transmitter != tx || len(f.Data) != 60 || f.Freq != 5180 || f.Cookie != 0xdeadbeef01 || f.Rates != rates || f.Flags != hwsimTxCtlReqTxStatus {
		t.Fatalf("decoded %+v", f)
	}
	r, ok := RateOf(f.Rates[0], model.Band5G)
	if !ok || r.Class != model.HT || r.MCS != 7 || r.GI != 400*time.Nanosecond || math.Abs(r.Mbps()-72.2) > 0.1 {
		t.Errorf("HT MCS 7 SGI: %v", r)
	}
	if r, ok := RateOf(f.Rates[2], model.Band5G); !ok || r.Class != model.OFDM || r.Kbps != 6000 {
		t.Errorf("5 GHz legacy index 0: %v", r)
	}
	if _, ok := RateOf(f.Rates[3], model.Band5G); ok {
		t.Error("index −1 must end the chain")
	}
	if r, ok := RateOf(HwRate{Idx: 3, Count: 1}, model.Band2G4); !ok || r.Class != model.DSSS || r.Kbps != 11000 {
		t.Errorf("2.4 GHz legacy index 3: %v", r)
	}
	if r, ok := RateOf(HwRate{Idx: 11, Count: 1}, model.Band2G4); !ok || r.Kbps != 54000 {
		t.Errorf("2.4 GHz legacy index 11: %v", r)
	}
	if r, ok := RateOf(HwRate{Idx: 1<<4 | 9, Count: 1, Flags: rateFlagVHTMCS | rateFlag80MHz}, model.Band5G); !ok || r.Class != model.VHT || r.NSS != 2 || r.MCS != 9 || r.WidthMHz != 80 {
		t.Errorf("VHT 2SS MCS 9 80 MHz: %v", r)
	}
	if _, ok := RateOf(HwRate{Idx: 12, Count: 1}, model.Band2G4); ok {
		t.Error("legacy index beyond the table accepted")
	}
}

func TestRxRateIndex(t *testing.T) {
	cases := []struct {
		r    model.Rate
		b    model.Band
		want uint32
	}{
		{model.Rate{Class: model.OFDM, Kbps: 54000}, model.Band2G4, 11},
		{model.Rate{Class: model.OFDM, Kbps: 54000}, model.Band5G, 7},
		{model.Rate{Class: model.DSSS, Kbps: 5500}, model.Band2G4, 2},
		{model.Rate{Class: model.HT, MCS: 3, WidthMHz: 20, GI: 800 * time.Nanosecond}, model.Band5G, 4}, // 16-QAM ½ ≙ 24 Mbit/s
	}
	for _, c := range cases {
		if got := RxRateIndex(c.r, c.b); got != c.want {
			t.Errorf("%v on %v: index %d, want %d", c.r, c.b, got, c.want)
		}
	}
}

func TestEncodeTxInfoAndFrame(t *testing.T) {
	tx := [6]byte{0x42, 0, 0, 0, 2, 0}
	b, err := encodeTxInfo(tx, hwsimTxCtlReqTxStatus|hwsimTxStatAck, 77, -45, [4]HwRate{{Idx: 7, Count: 3}, {Idx: -1}, {Idx: -1}, {Idx: -1}})
	if err != nil {
		t.Fatal(err)
	}
	ad, _ := netlink.NewAttributeDecoder(b)
	seen := map[uint16]bool{}
	for ad.Next() {
		seen[ad.Type()] = true
		switch ad.Type() {
		case hwsimAttrFlags:
			if ad.Uint32() != hwsimTxCtlReqTxStatus|hwsimTxStatAck {
				t.Error("flags")
			}
		case hwsimAttrSignal:
			if int32(ad.Uint32()) != -45 {
				t.Error("signal")
			}
		case hwsimAttrTxInfo:
			if x := ad.Bytes(); len(x) != 8 || x[0] != 7 || x[1] != 3 || int8(x[2]) != -1 {
				t.Errorf("tx info %v", x)
			}
		case hwsimAttrCookie:
			if ad.Uint64() != 77 {
				t.Error("cookie")
			}
		}
	}
	for _, a := range []uint16{hwsimAttrAddrTransmitter, hwsimAttrFlags, hwsimAttrSignal, hwsimAttrTxInfo, hwsimAttrCookie} {
		if !seen[a] {
			t.Errorf("TX_INFO_FRAME lacks attribute %d (the kernel requires it)", a)
		}
	}
	b, err = encodeFrame(tx, make([]byte, 30), 4, -60, 2412)
	if err != nil {
		t.Fatal(err)
	}
	ad, _ = netlink.NewAttributeDecoder(b)
	seen = map[uint16]bool{}
	for ad.Next() {
		seen[ad.Type()] = true
	}
	for _, a := range []uint16{hwsimAttrAddrReceiver, hwsimAttrFrame, hwsimAttrRxRate, hwsimAttrSignal, hwsimAttrFreq} {
		if !seen[a] {
			t.Errorf("FRAME lacks attribute %d", a)
		}
	}
}

func TestMediumConfigLink(t *testing.T) {
	c := MediumConfig{
		Radios: []MediumRadio{
			{Node: "ap", Pos: [3]float64{0, 0, 0}, TxPowerDBm: 20},
			{Node: "sta", Pos: [3]float64{10, 0, 0}, TxPowerDBm: 16},
			{Node: "far", Pos: [3]float64{5000, 0, 0}, TxPowerDBm: 16},
		},
		PathLoss:      model.DefaultPathLoss(5180),
		NoiseFigureDB: 7,
		SNR:           map[[2]string]float64{{"sta", "far"}: 12},
		Loss:          map[[2]string]float64{{"ap", "sta"}: 3},
	}
	l := c.Link(0, 1) // 20 dBm − (46.6777 + 30 + 3) = −59.68 dBm; noise −93.97
	if math.Abs(l.RxDBm-(-59.6777)) > 1e-3 || math.Abs(l.SNRdB-(-59.6777+93.975)) > 0.01 || !l.OK {
		t.Errorf("ap→sta %+v", l)
	}
	if l := c.Link(1, 0); math.Abs(l.RxDBm-(-63.6777)) > 1e-3 {
		t.Errorf("sta→ap uses the station's power: %+v", l)
	}
	if l := c.Link(2, 1); l.SNRdB != 12 || !l.OK {
		t.Errorf("override far→sta: %+v", l)
	}
	if l := c.Link(0, 2); l.OK {
		t.Errorf("5 km away must be below sensitivity: %+v", l)
	}
}

// BenchmarkMediumGlue is the medium's CPU per delivered frame on the
// kernel's side of it: decode a FRAME from the kernel, submit it to the
// model, advance the model, encode the delivery and the TX status into a
// batch (no syscall). 802.11ac VHT80 MCS 7 2SS SGI (650 Mbit/s PHY).
func BenchmarkMediumGlue(b *testing.B) {
	tx, rx := [6]byte{0x42, 0, 0, 0, 1, 0}, [6]byte{0x42, 0, 0, 0, 2, 0}
	data := make([]byte, 26+8+1500)
	data[0], data[1] = 0x88, 0x01
	copy(data[4:], rx[:])
	copy(data[10:], tx[:])
	msg := kernelFrame(b, tx, data, 5180, [4]HwRate{{Idx: 1<<4 | 7, Count: 7, Flags: rateFlagVHTMCS | rateFlag80MHz | rateFlagShortGI}, {Idx: -1}, {Idx: -1}, {Idx: -1}}, 1)
	cfg := MediumConfig{Radios: []MediumRadio{{Node: "sta", Perm: tx, TxPowerDBm: 20}, {Node: "ap", Perm: rx, TxPowerDBm: 20, Pos: [3]float64{3, 0, 0}}},
		PathLoss: model.DefaultPathLoss(5180), NoiseFigureDB: 7, AMPDU: true}
	sock := &MediumSocket{h: &Hwsim{}}
	s, err := NewMediumServer(sock, cfg)
	if err != nil {
		b.Fatal(err)
	}
	// the AP never transmits here; a radio joins its channel with its
	// first frame (a real AP's beacons), and until then hears nothing
	s.m.AddRadio(1, 5180)
	var bt Batch
	now := time.Duration(0)
	delivered, pending := 0, 0
	emit := func(ev any) {
		switch v := ev.(type) {
		case model.Reception:
			sock.Deliver(&bt, cfg.Radios[v.To].Perm, v.Frame.Data, RxRateIndex(v.Rate, model.Band5G), int(v.SignalDBm), v.Frame.Freq)
			delivered++
		case model.Status:
			c := s.chains[v.Frame.Cookie]
			delete(s.chains, v.Frame.Cookie)
			sock.TxInfo(&bt, tx, c.flags|hwsimTxStatAck, c.cookie, -40, c.rates)
			pending--
		}
		if len(bt.b) > 64<<10 {
			bt.b = bt.b[:0]
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for delivered < b.N {
		for pending < 96 {
			v, err := decodeMediumMessage(hwsimCmdFrame, msg)
			if err != nil {
				b.Fatal(err)
			}
			s.submit(now, v.(*HwFrame))
			pending++
		}
		at, ok := s.m.Next()
		if !ok {
			b.Fatal("no event")
		}
		now = at
		s.m.Advance(at, emit)
	}
	b.StopTimer()
	b.ReportMetric(float64(delivered)*1500*8/now.Seconds()/1e6, "sim-Mbit/s")
	b.ReportMetric(float64(delivered)/b.Elapsed().Seconds(), "frames/cpu-s")
}

func TestIsADDBARequest(t *testing.T) {
	req := make([]byte, 33)
	req[0], req[24], req[25] = 0xd0, 3, 0
	resp := append([]byte(nil), req...)
	resp[25] = 1
	data := make([]byte, 60)
	data[0] = 0x88
	if !isADDBARequest(req) || isADDBARequest(resp) || isADDBARequest(data) || isADDBARequest(req[:20]) {
		t.Error("ADDBA request detection")
	}
}
