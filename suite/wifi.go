package suite

import (
	"fmt"
	"math"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/emuctl/emuctl/wifi/model"
)

// Wi-Fi in suites: the medium's per-radio counters of a run (from the
// traffic result) as metrics, and the pure model's prediction for each
// flow that crosses a Wi-Fi hop, so a suite can judge the running medium
// against the model that ns-3 and Bianchi validate.

func (rd *runData) wifiRadio(node string) (analysis.WiFiRadio, error) {
	if rd.res.WiFi == nil {
		return analysis.WiFiRadio{}, missing("the run had no Wi-Fi medium")
	}
	for _, r := range rd.res.WiFi.Radios {
		if r.Node == node {
			return r, nil
		}
	}
	return analysis.WiFiRadio{}, missing("node %s has no radio on the medium", node)
}

func (rd *runData) wifiMetric(name, node string) (value, error) {
	r, err := rd.wifiRadio(node)
	if err != nil {
		return value{}, err
	}
	switch name {
	case "wifi_airtime":
		return numV(r.AirtimeShare), nil
	case "wifi_frames":
		return numV(float64(r.Frames)), nil
	case "wifi_retries":
		if r.Frames == 0 {
			return value{}, missing("node %s sent no frames", node)
		}
		return numV(float64(r.Retries) / float64(r.Frames)), nil
	case "wifi_collisions":
		return numV(float64(r.Collisions)), nil
	case "wifi_per":
		return numV(r.PER), nil
	case "wifi_lost":
		return numV(float64(r.Failed)), nil
	case "wifi_loss":
		if r.Frames <= r.Dropped {
			return value{}, missing("node %s sent no frames on the air", node)
		}
		return numV(float64(r.Failed) / float64(r.Frames-r.Dropped)), nil
	case "wifi_drops":
		return numV(float64(r.Dropped)), nil
	case "wifi_rate":
		return strV(r.Rate), nil
	}
	return value{}, fmt.Errorf("unknown Wi-Fi metric %s", name)
}

func (rd *runData) wifiModel(flow string) (value, error) {
	if flow != "" {
		v, ok := rd.wifi[flow]
		if !ok {
			return value{}, missing("flow %s crosses no Wi-Fi hop the model predicts", flow)
		}
		return numV(v), nil
	}
	if len(rd.wifi) == 0 {
		return value{}, missing("no flow crosses a Wi-Fi hop the model predicts")
	}
	s := 0.0
	for _, v := range rd.wifi {
		s += v
	}
	return numV(s), nil
}

// airFlow is one flow's use of a BSS: who transmits its data on the air.
type airFlow struct {
	id         string
	ap         *topo.Node
	tx, rx     string // data transmitter and the radio it goes to
	relay      bool   // station to station: the AP sends it again
	proto      string
	payload    int
	ackEvery   int
	cryptoSize int
}

// wifiPredictions is the model's goodput (Mbit/s) for each flow of res
// whose data crosses one Wi-Fi hop: a station's uplink or downlink, or
// station to station through their AP. Every flow on the same BSS counts
// as a saturated sender; the flows of one transmitter share it. Flows on
// auto rates get a prediction on the engine backend only (its ideal rate
// is known; minstrel's is not).
func wifiPredictions(spec *topo.Spec, res *analysis.Result) map[string]float64 {
	if spec.WiFiMedium == nil || !spec.WiFiMedium.Enabled || res.WiFi == nil {
		return nil
	}
	cfg := wifi.SpecConfig(spec)
	idx := map[string]int{}
	for i, r := range cfg.Radios {
		idx[r.Node] = i
	}
	var flows []airFlow
	for _, f := range res.Flows {
		from, to := spec.Node(f.From), spec.Node(f.To)
		if from == nil || to == nil {
			continue
		}
		af := airFlow{id: f.ID, proto: f.Proto, payload: 1448, ackEvery: 2}
		switch {
		case from.Station != nil && to.Station != nil && from.Station.AP == to.Station.AP:
			af.ap, af.tx, af.rx, af.relay = spec.Node(from.Station.AP), from.Name, from.Station.AP, true
		case from.Station != nil:
			af.ap, af.tx, af.rx = spec.Node(from.Station.AP), from.Name, from.Station.AP
		case to.Station != nil:
			af.ap, af.tx, af.rx = spec.Node(to.Station.AP), to.Station.AP, to.Name
		default:
			continue
		}
		if af.ap == nil || af.ap.AP == nil || af.proto == "mptcp" {
			continue
		}
		if u := f.UDP; u != nil && u.Received > 0 {
			af.payload = int(f.BytesReceived / u.Received)
		}
		if quickack(to) {
			af.ackEvery = 1
		}
		if af.ap.AP.Security != topo.WiFiOpen {
			af.cryptoSize = 16
		}
		flows = append(flows, af)
	}
	out := map[string]float64{}
	for _, af := range flows {
		// senders on this BSS: distinct transmitters of its flows
		senders := map[string]int{}
		for _, o := range flows {
			if o.ap == af.ap {
				senders[o.tx]++
				if o.relay {
					senders[o.ap.Name]++
				}
			}
		}
		if af.relay && len(senders) != 2 {
			continue // a relay among other flows: not a saturation scenario the model has
		}
		ap := af.ap.AP
		txNode := spec.Node(af.tx)
		rate, ok := fixedRate(txNode, ap)
		snr := cfg.Link(idx[af.tx], idx[af.rx]).SNRdB
		if !ok {
			if res.WiFi.Backend != "engine" {
				continue
			}
			rate = wifi.IdealRate(ap.Mode, topo.ModelBand(ap.Channel.Band), ap.Channel.Width, snr)
		}
		mac := model.DefaultMAC(topo.ModelMode(ap.Mode), topo.ModelBand(ap.Channel.Band), ap.Mode != topo.WiFiModeG)
		mac.RetryLimit = spec.WiFiMedium.RetryLimit
		if mac.RetryLimit == 0 {
			mac.RetryLimit = 11
		}
		n := len(senders)
		sc := model.Scenario{Mode: topo.ModelMode(ap.Mode), MAC: mac, Rate: rate, Stations: n, Proto: af.proto,
			Payload: af.payload + af.cryptoSize, AckEvery: af.ackEvery, AMPDU: spec.WiFiMedium.AMPDU && rate.Class >= model.HT,
			Window: 64, Duration: 10 * time.Second, Seed: 1}
		if !math.IsInf(snr, 0) && snr < 60 {
			for range n {
				sc.SNRdB = append(sc.SNRdB, snr)
			}
		}
		r, err := model.Simulate(sc)
		if err != nil {
			continue
		}
		// the CCMP header and MIC were carried as payload: count only
		// the application's bytes
		g := r.GoodputMbps * float64(af.payload) / float64(af.payload+af.cryptoSize) / float64(n)
		g /= float64(senders[af.tx])
		if af.relay {
			g = r.GoodputMbps * float64(af.payload) / float64(af.payload+af.cryptoSize) / 2
		}
		out[af.id] = g
	}
	return out
}

// fixedRate is a Wi-Fi node's rate: as written.
func fixedRate(n *topo.Node, ap *topo.WiFiAP) (model.Rate, bool) {
	var s string
	switch {
	case n.AP != nil:
		s = n.AP.Rate
	case n.Station != nil:
		s = n.Station.Rate
	}
	if s == "" {
		return model.Rate{}, false
	}
	r, err := topo.MediumRate(ap.Mode, ap.Channel, s)
	return r, err == nil
}

// quickack reports whether a node ACKs every segment (a quickack route).
func quickack(n *topo.Node) bool {
	if n.TCP == nil {
		return false
	}
	for _, r := range n.TCP.Routes {
		if r.Quickack {
			return true
		}
	}
	return false
}
