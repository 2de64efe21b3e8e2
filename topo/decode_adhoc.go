package topo

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Ad hoc (IBSS) networks as written: the top level declares each one's
// channel like an access point's (wifi: {adhoc: {NAME: {mode: g, channel:
// 1}}}) and each member says wifi: {adhoc: NAME}. 802.11s mesh is
// refused, saying why (no path selection on the engine medium).

var adhocKeys = []string{"mode", "band", "channel", "width", "preamble", "rate"}

// meshRefusal is why wifi: {mesh: ...} is refused on either backend.
const meshRefusal = "802.11s mesh is not available: the engine backend's medium has no HWMP path selection (mesh points would have to forward frames for each other, which it does not model), and mesh on hwsim (wpa_supplicant mesh mode) is not built yet; an ad hoc network (wifi: {adhoc: NAME}) carries one hop, and stations with forward: true and routes relay over several"

// rawAdhoc is one ad hoc network's declaration.
type rawAdhoc struct {
	name string
	loc  loc // its key under wifi.adhoc
	w    *rawWiFi
}

// adhocTop decodes wifi: {adhoc: {NAME: {...}, ...}}.
func (d *dec) adhocTop(n *yaml.Node, path string, doc *rawDoc) {
	for _, e := range d.entries(n, path) {
		p := joinPath(path, keyPath(e.Key))
		a := rawAdhoc{name: e.Key, loc: at(e.K, p), w: &rawWiFi{loc: at(e.K, p), isAP: true}}
		if len(a.name) == 0 || len(a.name) > 32 || strings.ContainsAny(a.name, "\n\r\x00\"") {
			d.errorf(a.loc, "ad hoc network name %q is not valid: 1-32 bytes (it is the IBSS's SSID), no quotes, newlines or NUL", clip(a.name))
			continue
		}
		w := a.w
		if v := deref(e.V); v == nil || v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || v.Value == "") {
			doc.wifi.adhoc = append(doc.wifi.adhoc, a) // NAME: {} or NAME: — every default
			continue
		}
		for _, f := range d.fields(e.V, p, adhocKeys) {
			fp := joinPath(p, f.Key)
			l := at(f.V, fp)
			switch f.Key {
			case "mode", "band", "channel", "width":
				d.channelKey(w, f.Key, f.V, fp)
			case "preamble":
				w.preamble, _ = d.oneOf(f.V, fp, "preamble", []string{"long", "short"})
				w.preambleLoc = l
			case "rate":
				if s, ok := d.str(f.V, fp, "auto, a legacy rate such as 54mbit, or mcsN"); ok {
					w.rate, w.rateLoc = strings.ToLower(strings.TrimSpace(s)), l
				}
			}
		}
		doc.wifi.adhoc = append(doc.wifi.adhoc, a)
	}
}

// resolveAdhoc resolves the declared ad hoc networks (before stations
// join them): channel and mode as an access point's, open.
func (r *resolver) resolveAdhoc() map[string]int {
	byName := map[string]int{}
	for _, a := range r.doc.wifi.adhoc {
		w := a.w
		if w.band == Band6 {
			r.d.errorf(w.bandLoc, "ad hoc network %s: the 6 GHz band allows only WPA3 networks, and an ad hoc network here is open (no IBSS-RSN): use band 2.4 or 5", a.name)
			continue
		}
		if _, dup := byName[a.name]; dup {
			r.d.errorf(a.loc, "ad hoc network %s is declared twice", a.name)
			continue
		}
		if mode := firstNonEmpty(w.mode, defaultWiFiMode); mode == WiFiModeBE {
			r.d.errorf(firstLoc(w.modeLoc, a.loc), "ad hoc network %s: mode be is for multi-link access points here; an ad hoc network takes a, b, g, n, ac or ax", a.name)
			continue
		}
		ap := r.resolveAP(&rawNode{name: a.name, loc: a.loc, wifi: w})
		byName[a.name] = len(r.spec.WiFiAdhoc)
		r.spec.WiFiAdhoc = append(r.spec.WiFiAdhoc, WiFiAdhoc{Name: a.name, Mode: ap.Mode, Channel: ap.Channel,
			ShortPreamble: ap.ShortPreamble, Pos: posString(r.spec.Source, a.loc)})
		if w.rate != "auto" {
			r.spec.WiFiAdhoc[len(r.spec.WiFiAdhoc)-1].Rate = w.rate
		}
	}
	return byName
}

// joinAdhoc makes station ni a member of the ad hoc network its file
// names; false when it cannot be.
func (r *resolver) joinAdhoc(ni int, rn *rawNode, nets map[string]int) bool {
	w := rn.wifi
	k, ok := nets[w.adhoc]
	if !ok {
		var known []string
		for _, a := range r.spec.WiFiAdhoc {
			known = append(known, a.Name)
		}
		r.d.errorf(w.adhocLoc, "no ad hoc network %q is declared (wifi: {adhoc: {%s: {mode: g, channel: 1}}} at the top level) %s", w.adhoc, w.adhoc, choicesOrNone("ad hoc networks", w.adhoc, known))
		return false
	}
	why := func(key string, l loc, what string) {
		r.d.errorf(l, "%s: a station of the ad hoc network %s %s", key, w.adhoc, what)
	}
	bad := false
	for _, c := range []struct {
		set      bool
		key      string
		l        loc
		whatNext string
	}{
		{w.ap != "", "ap", w.apLoc, "has no access point: give ap: or adhoc:, not both"},
		{w.ssid != "", "ssid", w.ssidLoc, "joins the network named by adhoc: (its SSID): give ssid: or adhoc:, not both"},
		{w.mlo, "mlo", w.mloLoc, "has one link (multi-link is an access point's)"},
		{w.roam != nil, "roaming", w.roamLoc, "does not roam: there are no access points to roam between"},
		{w.hasLink, "link", w.parLoc, "has no hop to an access point to shape (each peer is reached directly on the medium, at the rate and loss its distance gives)"},
	} {
		if c.set {
			why(c.key, c.l, c.whatNext)
			bad = true
		}
	}
	if bad {
		return false
	}
	n := &r.spec.Nodes[ni]
	a := &r.spec.WiFiAdhoc[k]
	n.Station = &WiFiStation{Adhoc: a.Name, SSID: a.Name, Security: WiFiOpen, TxPowerMBm: w.txMBm, AntennaGainDBi: w.gainDBi,
		Pos: posString(r.spec.Source, rn.loc)}
	a.Members = append(a.Members, n.Name)
	n.Station.Iface = r.freeIfName(ni, wlanName(n.Name))
	rec := r.addIface(ni, Interface{Name: n.Station.Iface, Link: -1, Wireless: true, MTU: defaultMTU, MAC: w.mac}, w.loc)
	r.givenMAC(rec, w.macLoc)
	rec.addrs = w.ips // none: the lab's plan gives them
	r.wifiIBSS[rec] = k
	return true
}

// checkAdhoc: every declared network has members.
func (r *resolver) checkAdhoc() {
	for _, a := range r.spec.WiFiAdhoc {
		if len(a.Members) == 0 {
			r.d.errorf(r.adhocLoc(a.Name), "ad hoc network %s has no stations: give its members wifi: {adhoc: %s}", a.Name, a.Name)
		}
	}
}

// checkAdhocBackend: ad hoc networks need the engine's medium.
func (r *resolver) checkAdhocBackend() {
	if len(r.spec.WiFiAdhoc) == 0 || r.spec.WiFiMedium == nil {
		return
	}
	m := r.spec.WiFiMedium
	switch {
	case m.Backend == WiFiBackendHwsim:
		r.d.errorf(r.doc.wifi.backendLoc, "ad hoc networks (%s) run on the engine backend only: IBSS on hwsim radios (wpa_supplicant mode=1) is not built yet; use backend: engine (or auto on a kernel without mac80211_hwsim)", r.adhocNames())
	case !m.Enabled:
		r.d.errorf(r.doc.medium.loc, "ad hoc networks (%s) are carried by emuctl's medium (the engine backend), which medium: false turns off", r.adhocNames())
	}
}

// adhocLoc is where the file declares the ad hoc network name.
func (r *resolver) adhocLoc(name string) loc {
	for _, a := range r.doc.wifi.adhoc {
		if a.name == name {
			return a.loc
		}
	}
	return loc{}
}

func (r *resolver) adhocNames() string {
	var out []string
	for _, a := range r.spec.WiFiAdhoc {
		out = append(out, a.Name)
	}
	return strings.Join(out, ", ")
}

// adhocRate is the fixed rate a member sends at: its own rate:, else its
// network's ("" for auto).
func (r *resolver) adhocRate(st *WiFiStation, own string, ownLoc loc) (string, loc) {
	if own != "" {
		return own, ownLoc
	}
	for _, a := range r.doc.wifi.adhoc {
		if a.name == st.Adhoc {
			return a.w.rate, a.w.rateLoc
		}
	}
	return "", ownLoc
}
