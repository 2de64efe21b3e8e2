package suite

import (
	"fmt"
	"math"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/suite/expr"
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

func (rd *runData) wifiMetric(name, node string) (expr.Value, error) {
	r, err := rd.wifiRadio(node)
	if err != nil {
		return expr.Value{}, err
	}
	switch name {
	case "wifi_airtime":
		return expr.NumV(r.AirtimeShare), nil
	case "wifi_frames":
		return expr.NumV(float64(r.Frames)), nil
	case "wifi_attempts":
		return expr.NumV(float64(r.Attempts)), nil
	case "wifi_retries":
		if r.Frames == 0 {
			return expr.Value{}, missing("node %s sent no frames", node)
		}
		return expr.NumV(float64(r.Retries) / float64(r.Frames)), nil
	case "wifi_collisions":
		return expr.NumV(float64(r.Collisions)), nil
	case "wifi_per":
		return expr.NumV(r.PER), nil
	case "wifi_lost":
		return expr.NumV(float64(r.Failed)), nil
	case "wifi_loss":
		if r.Frames <= r.Dropped {
			return expr.Value{}, missing("node %s sent no frames on the air", node)
		}
		return expr.NumV(float64(r.Failed) / float64(r.Frames-r.Dropped)), nil
	case "wifi_drops":
		return expr.NumV(float64(r.Dropped)), nil
	case "wifi_rate":
		return expr.StrV(r.Rate), nil
	}
	return expr.Value{}, fmt.Errorf("unknown Wi-Fi metric %s", name)
}

func (rd *runData) wifiModel(flow string) (expr.Value, error) {
	return modelMetric(rd.wifi, flow)
}

func modelMetric(m map[string]float64, flow string) (expr.Value, error) {
	if flow != "" {
		v, ok := m[flow]
		if !ok {
			return expr.Value{}, missing("flow %s crosses no Wi-Fi hop the model predicts", flow)
		}
		return expr.NumV(v), nil
	}
	if len(m) == 0 {
		return expr.Value{}, missing("no flow crosses a Wi-Fi hop the model predicts")
	}
	s := 0.0
	for _, v := range m {
		s += v
	}
	return expr.NumV(s), nil
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
	wired      float64 // TCP capacity of the narrowest shaped wired link on the path, Mbit/s (0: none)
}

// wifiPredict is the model's goodput (Mbit/s) for each flow of res whose
// data crosses one Wi-Fi hop: a station's uplink or downlink, or station
// to station through their AP. Every flow on the same BSS counts as a
// saturated sender; the flows of one transmitter share it. Flows on auto
// rates get a prediction on the engine backend only (its ideal rate is
// known; minstrel's is not). And for TCP flows, the model's goodput had
// the receiver ACKed at TACK's frequency (Li et al., SIGCOMM 2020):
// f_tack = min(bw/(L·MSS), β/RTT_min) with β = 4, L = 2, that is one ACK
// per max(2, bw·RTT_min/(β·MSS)) segments, bw the delayed-ACK prediction
// and RTT_min the flow's own.
func wifiPredict(spec *topo.Spec, res *analysis.Result) (map[string]float64, map[string]float64) {
	if spec.WiFiMedium == nil || !spec.WiFiMedium.Enabled || res.WiFi == nil {
		return nil, nil
	}
	minRTT := map[string]float64{}
	for i := range res.Flows {
		if m := analysis.MinRTTMs(&res.Flows[i]); m > 0 {
			minRTT[res.Flows[i].ID] = m
		}
	}
	tack := map[string]float64{}
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
		af := airFlow{id: f.ID, proto: f.Proto, payload: 1448, ackEvery: 2, wired: f.BottleneckBps * 1448 / 1514 / 1e6}
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
		// the BSS's transmitters of saturated traffic: stations sending
		// up, or the AP sending down; mixed directions are no saturation
		// scenario the model has
		var bss []airFlow
		for _, o := range flows {
			if o.ap == af.ap {
				bss = append(bss, o)
			}
		}
		radios, share, ok := senders(bss, af)
		if !ok {
			continue
		}
		ap := af.ap.AP
		// A multi-link station's frames go on every link of its AP MLD
		// (mac80211_hwsim alternates them frame by frame): each link is a
		// channel of its own, and the slower one bounds the flow at the
		// number of links times its goodput. A single-link station joins
		// an AP MLD on its first link (ap.Channel).
		chans := []topo.WiFiChannel{ap.Channel}
		if ap.MLO() && mloStation(spec, af) {
			chans = ap.Links
		}
		var r *model.SimResult
		var sc model.Scenario
		var link func(tx, rx int) model.Link
		for _, ch := range chans {
			rate, fixed := fixedRate(spec.Node(af.tx), ap, ch)
			if !fixed {
				if res.WiFi.Backend != "engine" {
					r = nil
					break // minstrel's rates (or, multi-link, hwsim's choice): not the model's to predict
				}
				rate = wifi.IdealRate(ap.Mode, topo.ModelBand(ch.Band), ch.Width, cfg.Link(idx[af.tx], idx[af.rx]).SNRdB)
			}
			mac := model.DefaultMAC(topo.ModelMode(ap.Mode), topo.ModelBand(ch.Band), !topo.LegacyMode(ap.Mode))
			mac.RetryLimit = spec.WiFiMedium.RetryLimit
			if mac.RetryLimit == 0 {
				mac.RetryLimit = 11
			}
			// radios[0..n-1] send, radios[n] receives (SimulateMedium's
			// stations and access point)
			n := len(radios) - 1
			link = func(tx, rx int) model.Link { return cfg.Link(idx[radios[tx]], idx[radios[rx]]) }
			if af.relay {
				link = func(tx, rx int) model.Link { return cfg.Link(idx[af.tx], idx[af.rx]) }
			}
			sc = model.Scenario{Mode: topo.ModelMode(ap.Mode), MAC: mac, Rate: rate, Stations: n, Proto: af.proto,
				Payload: af.payload + af.cryptoSize, AckEvery: af.ackEvery, AMPDU: spec.WiFiMedium.AMPDU && rate.Class >= model.HT,
				Window: model.MaxAMPDUSubframes, Duration: 10 * time.Second, Seed: 1}
			rc, err := model.SimulateMedium(sc, link, model.MediumConfig{QueueLimit: spec.WiFiMedium.QueueLimit})
			if err != nil {
				r = nil
				break
			}
			if r == nil || rc.GoodputMbps < r.GoodputMbps {
				r = &rc
			}
		}
		if r == nil {
			continue
		}
		// the CCMP header and MIC were carried as payload: count only the
		// application's bytes
		app := float64(af.payload) / float64(af.payload+af.cryptoSize)
		links := float64(len(chans))
		if af.wired > 0 && af.wired < r.GoodputMbps*app*links {
			continue // a wired link is the bottleneck: the hop does not decide the flow's goodput
		}
		if len(chans) > 1 {
			out[af.id] = r.GoodputMbps * app * share * links
			continue // TACK's prediction: single-link hops only
		}
		out[af.id] = r.GoodputMbps * app * share
		if af.proto == "tcp" && !af.relay && minRTT[af.id] > 0 {
			bw := r.GoodputMbps * share * 1e6
			t := sc
			t.AckEvery = max(2, int(math.Round(bw*minRTT[af.id]/1000/(4*1448*8))))
			if rt, err := model.SimulateMedium(t, link, model.MediumConfig{QueueLimit: spec.WiFiMedium.QueueLimit}); err == nil {
				tack[af.id] = rt.GoodputMbps * app * share
			}
		}
	}
	return out, tack
}

// senders are the radios of a BSS's saturated transmitters for flow af,
// in SimulateMedium's order (senders, then the receiver), and af's share
// of their total goodput. ok is false for mixes the model has no
// scenario for.
func senders(bss []airFlow, af airFlow) (radios []string, share float64, ok bool) {
	apName := af.ap.Name
	up, down := map[string]int{}, map[string]int{}
	var order []string
	for _, o := range bss {
		switch {
		case o.relay:
			if len(bss) != 1 {
				return nil, 0, false // a relay among other flows
			}
			// the station and the AP both saturated, every frame twice on
			// the air: half of two senders' total
			return []string{o.tx, apName, o.rx}, 0.5, true
		case o.tx == apName:
			down[o.rx]++
		default:
			if up[o.tx] == 0 {
				order = append(order, o.tx)
			}
			up[o.tx]++
		}
	}
	switch {
	case len(up) > 0 && len(down) > 0:
		return nil, 0, false
	case len(down) > 0:
		// the AP is the one sender; its flows share it (one receiver's
		// links stand for all: the model has one destination)
		return []string{apName, af.rx}, 1 / float64(len(bss)), true
	}
	radios = append(order, apName)
	return radios, 1 / float64(len(up)) / float64(up[af.tx]), true
}

// mloStation reports whether flow af's station is a multi-link one.
func mloStation(spec *topo.Spec, af airFlow) bool {
	for _, name := range []string{af.tx, af.rx} {
		if n := spec.Node(name); n != nil && n.Station != nil {
			return n.Station.MLO
		}
	}
	return false
}

// fixedRate is a Wi-Fi node's rate on channel ch of its AP: as written.
func fixedRate(n *topo.Node, ap *topo.WiFiAP, ch topo.WiFiChannel) (model.Rate, bool) {
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
	r, err := topo.MediumRate(ap.Mode, ch, s)
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
