package topo

import (
	"fmt"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
)

// Medium defaults: ns-3's log-distance model (exponent 3, 46.6777 dB at
// 1 m) and noise figure (7 dB); A-MPDU on.
const (
	defaultExponent = 3
	defaultRefLoss  = 46.6777
	defaultNF       = 7
)

// ModelMode is the pure model's mode for an AP mode (802.11be is timed as
// 802.11ax: EHT preambles and 4096-QAM are not modelled).
func ModelMode(mode string) model.Mode {
	switch mode {
	case WiFiModeA:
		return model.ModeA
	case WiFiModeB:
		return model.ModeB
	case WiFiModeG:
		return model.ModeG
	case WiFiModeAC:
		return model.ModeAC
	case WiFiModeAX, WiFiModeBE:
		return model.ModeAX
	}
	return model.ModeN
}

// ModelBand is the model's band for a channel's band.
func ModelBand(b string) model.Band {
	switch b {
	case Band5:
		return model.Band5G
	case Band6:
		return model.Band6G
	}
	return model.Band2G4
}

// MediumRate is a fixed rate written as rate: for an AP's mode and channel.
func MediumRate(mode string, ch WiFiChannel, rate string) (model.Rate, error) {
	r, err := model.ParseRate(ModelMode(mode), rate, ch.Width, 1, 800*time.Nanosecond)
	if err != nil {
		if mode == WiFiModeBE {
			err = fmt.Errorf("%w: the medium sends 802.11be at 802.11ax's rates", err)
		}
		return r, err
	}
	if r.Class == model.DSSS && ch.Band != Band24 {
		return r, fmt.Errorf("rate %s is a DSSS/CCK rate, which exists on 2.4 GHz only", rate)
	}
	return r, nil
}

// resolveMedium resolves wifi: {medium: ...}, positions and fixed rates.
func (r *resolver) resolveMedium() {
	if !r.spec.HasWiFi() {
		if m := r.doc.medium; m != nil {
			r.d.errorf(m.loc, "wifi: {medium: ...} needs Wi-Fi nodes (kind: ap and kind: station)")
		}
		if r.doc.wifi.backend != "" {
			r.d.errorf(r.doc.wifi.backendLoc, "wifi: {backend: ...} needs Wi-Fi nodes (kind: ap and kind: station)")
		}
		for _, k := range []string{"hostapd", "wpa_supplicant"} {
			if _, ok := r.doc.wifi.daemons[k]; ok {
				r.d.errorf(r.doc.wifi.daemonLocs[k], "wifi: {%s: ...} needs Wi-Fi nodes (kind: ap and kind: station)", k)
			}
		}
		return
	}
	if ds := r.doc.wifi.daemons; ds != nil {
		w := &WiFiDaemons{}
		if p, ok := ds["hostapd"]; ok {
			w.Hostapd, w.HostapdPos = p, posString(r.spec.Source, r.doc.wifi.daemonLocs["hostapd"])
		}
		if p, ok := ds["wpa_supplicant"]; ok {
			w.WpaSupplicant, w.WpaSupplicantPos = p, posString(r.spec.Source, r.doc.wifi.daemonLocs["wpa_supplicant"])
		}
		r.spec.WiFiDaemons = w
	}
	med := &WiFiMedium{Enabled: true, Backend: WiFiBackendAuto, PathLoss: "logdistance", Exponent: defaultExponent, RefLossDB: defaultRefLoss,
		RefDistM: 1, NoiseFigureDB: defaultNF, AMPDU: true}
	if b := r.doc.wifi.backend; b != "" {
		med.Backend, med.BackendPos = b, posString(r.spec.Source, r.doc.wifi.backendLoc)
	}
	var mloAP string
	for i := range r.spec.Nodes {
		if ap := r.spec.Nodes[i].AP; ap != nil && ap.MLO() {
			mloAP = r.spec.Nodes[i].Name
		}
	}
	if m := r.doc.medium; m != nil {
		med.Explicit, med.Enabled, med.Pos = true, m.enabled, posString(r.spec.Source, m.loc)
		if m.pathLoss != "" {
			med.PathLoss = m.pathLoss
		}
		if m.expSet {
			med.Exponent = m.exponent
		}
		if m.refSet {
			med.RefLossDB = m.refLoss
		}
		if m.distSet {
			med.RefDistM = m.refDist
		}
		if m.nfSet {
			med.NoiseFigureDB = m.nf
		}
		if m.ampdu != nil {
			med.AMPDU = *m.ampdu
		}
		med.Seed = m.seed
		med.RetryLimit, med.QueueLimit = m.retry, m.queue
		if !m.enabled && med.Backend == WiFiBackendEngine {
			r.d.errorf(m.loc, "medium: false is hwsim's instant medium: the engine backend is emuctl's medium and has no instant mode (use backend: hwsim, or drop medium: false)")
		}
		for _, p := range m.pairs {
			if p.a == "" {
				continue
			}
			ok := true
			for _, e := range []struct {
				name string
				l    loc
			}{{p.a, p.aLoc}, {p.b, p.bLoc}} {
				i, found := r.lookup(e.name, e.l)
				if !found {
					ok = false
					continue
				}
				if n := &r.spec.Nodes[i]; n.AP == nil && n.Station == nil {
					r.d.errorf(e.l, "node %s is not a Wi-Fi node (kind: ap or station): pairs name two radios", e.name)
					ok = false
				}
			}
			if ok && p.a == p.b {
				r.d.errorf(p.aLoc, "a pair names two different nodes, not %s twice", p.a)
				ok = false
			}
			if ok {
				med.Pairs = append(med.Pairs, WiFiPair{A: p.a, B: p.b, SNRdB: p.snr, LossDB: p.loss})
			}
		}
	}
	if med.Backend == WiFiBackendEngine && mloAP != "" {
		r.d.errorf(r.doc.wifi.backendLoc, "access point %s is multi-link: the engine backend models single-link radios (multi-link needs backend: hwsim)", mloAP)
	}
	if med.Backend == WiFiBackendHwsim {
		for ni, rn := range r.doc.nodes {
			if st := r.spec.Nodes[ni].Station; st != nil && st.Roaming != nil && st.Roaming.Association == WiFiAssocLLF {
				r.d.errorf(rn.wifi.roamLoc, "association: llf (least loaded first) is the engine backend's medium's decision; on hwsim wpa_supplicant picks its AP by signal (drop association:, or backend: engine)")
			}
		}
	}
	r.spec.WiFiMedium = med
	r.checkAdhocBackend() // decode_adhoc.go
	// positions and fixed rates
	for ni, rn := range r.doc.nodes {
		n := &r.spec.Nodes[ni]
		if n.AP == nil && n.Station == nil {
			continue
		}
		var rate string
		var rateLoc loc
		if rn.wifi != nil {
			rate, rateLoc = rn.wifi.rate, rn.wifi.rateLoc
		}
		if rate == "auto" {
			rate = ""
		}
		var mode string
		var chans []WiFiChannel
		if n.AP != nil {
			n.AP.Position = rn.pos
			mode, chans = n.AP.Mode, []WiFiChannel{n.AP.Channel}
			if n.AP.MLO() {
				chans = n.AP.Links
			}
		} else {
			n.Station.Position = rn.pos
			if a := r.spec.Adhoc(n.Station.Adhoc); a != nil {
				// a member sends at its own rate:, else its network's
				rate, rateLoc = r.adhocRate(n.Station, rn.wifi.rate, rateLoc)
				if rate == "auto" {
					rate = ""
				}
				mode, chans = a.Mode, []WiFiChannel{a.Channel}
			} else if i, ok := r.byName[n.Station.AP]; ok && r.spec.Nodes[i].AP != nil {
				ap := r.spec.Nodes[i].AP
				mode, chans = ap.Mode, []WiFiChannel{ap.Channel}
				if ap.MLO() && n.Station.MLO {
					chans = ap.Links
				}
			}
		}
		if rate == "" || mode == "" {
			continue
		}
		bad := false
		for k, ch := range chans {
			if _, err := MediumRate(mode, ch, rate); err != nil {
				link := ""
				if len(chans) > 1 {
					link = fmt.Sprintf("link %d: ", k)
				}
				r.d.errorf(rateLoc, "%s%v (mode %s, %s GHz, %d MHz; or rate: auto for the driver's rate control)", link, err, mode, ch.Band, ch.Width)
				bad = true
				break
			}
		}
		if bad {
			continue
		}
		if !med.Enabled {
			r.d.errorf(rateLoc, "rate: is the medium's setting, and this lab has no medium (%s)", firstNonEmpty(med.Why, "wifi: {medium: false}"))
			continue
		}
		if n.AP != nil {
			n.AP.Rate = rate
		} else {
			n.Station.Rate = rate
		}
	}
}
