package topo

import (
	"strings"
	"testing"
)

func TestMediumResolve(t *testing.T) {
	src := `
wifi:
  medium:
    path_loss: {model: logdistance, exponent: 3.5, ref_loss: 40dB, ref_distance: 2m}
    noise_figure: 5dB
    ampdu: false
    seed: 9
    pairs:
      - {nodes: [sta1, ap1], snr: 18dB}
      - {nodes: [sta2, ap1], loss: 6}
nodes:
  ap1: {kind: ap, position: [0, 0, 2], wifi: {mode: g, channel: 1, rate: 54mbit}}
  sta1: {kind: station, position: [10, 5], wifi: {rate: 18mbit}}
  sta2: {kind: station, wifi: {rate: auto}}
`
	s, err := Load("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m := s.WiFiMedium
	if m == nil || !m.Enabled || !m.Explicit || m.PathLoss != "logdistance" || m.Exponent != 3.5 || m.RefLossDB != 40 || m.RefDistM != 2 ||
		m.NoiseFigureDB != 5 || m.AMPDU || m.Seed != 9 || len(m.Pairs) != 2 || *m.Pairs[0].SNRdB != 18 || *m.Pairs[1].LossDB != 6 {
		t.Fatalf("medium %+v", m)
	}
	ap, sta1, sta2 := s.Node("ap1"), s.Node("sta1"), s.Node("sta2")
	if ap.AP.Position != [3]float64{0, 0, 2} || ap.AP.Rate != "54mbit" || sta1.Station.Position != [3]float64{10, 5, 0} || sta1.Station.Rate != "18mbit" || sta2.Station.Rate != "" {
		t.Errorf("positions/rates: ap %+v sta1 %+v sta2 %+v", ap.AP, sta1.Station, sta2.Station)
	}
	// default: off for now (saying why), ns-3's log-distance and noise
	// figure, A-MPDU on when asked for with medium: true
	s, err = Load("d.yaml", []byte("nodes: {ap1: {kind: ap}, sta1: {kind: station}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := s.WiFiMedium; m == nil || !m.Enabled || m.Explicit || m.Exponent != 3 || !m.AMPDU {
		t.Errorf("default medium %+v", m)
	}
	s, _ = Load("t.yaml", []byte("wifi: {medium: true}\nnodes: {ap1: {kind: ap}, sta1: {kind: station}}\n"))
	if m := s.WiFiMedium; m == nil || !m.Enabled || !m.Explicit || m.Exponent != 3 || m.RefLossDB != 46.6777 || m.NoiseFigureDB != 7 || !m.AMPDU {
		t.Errorf("medium: true → %+v", m)
	}
	// off by request; on by default with a multi-link AP too (one channel
	// timeline per link)
	s, _ = Load("o.yaml", []byte("wifi: {medium: false}\nnodes: {ap1: {kind: ap}, sta1: {kind: station}}\n"))
	if m := s.WiFiMedium; m == nil || m.Enabled || !m.Explicit {
		t.Errorf("medium: false → %+v", m)
	}
	s, err = Load("mlo.yaml", []byte(`nodes:
  mld: {kind: ap, wifi: {mode: be, security: wpa3, passphrase: "multi link pass", links: [{band: 5, channel: 36}, {band: 6, channel: 37}]}}
  sta: {kind: station, wifi: {mlo: true}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if m := s.WiFiMedium; m == nil || !m.Enabled || m.Why != "" {
		t.Errorf("MLO default %+v", m)
	}
	if s, _ := Load("w.yaml", []byte("nodes: {h1: {}, h2: {}}\nlinks: [{endpoints: [h1, h2]}]\n")); s.WiFiMedium != nil {
		t.Error("a wired lab has no medium")
	}
}

// A per-link link: on a multi-link AP is refused, saying why (tc cannot
// act per link).
func TestPerLinkShapingRefused(t *testing.T) {
	_, err := Load("mlo.yaml", []byte(`nodes:
  ap1:
    kind: ap
    wifi:
      mode: be
      security: wpa3
      passphrase: "multi link secret"
      links: [{band: 2.4, channel: 1, link: {rate: 10mbit}}, {band: 5, channel: 36}]
  sta1: {kind: station, wifi: {mlo: true}}
`))
	if err == nil || !strings.Contains(err.Error(), "mlo.yaml:8:39: nodes.ap1.wifi.links[0].link: one link of a multi-link AP cannot be shaped on its own") {
		t.Errorf("per-link link: %v", err)
	}
}
