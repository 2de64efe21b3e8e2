package topo

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Ad hoc (IBSS) networks and 802.11s meshes as written: the top level
// declares each one's channel like an access point's (wifi: {adhoc:
// {NAME: {mode: g, channel: 1}}}, or wifi: {mesh: {NAME: ...}}) and each
// member says wifi: {adhoc: NAME} (or mesh: NAME). A mesh needs the hwsim
// backend (mac80211's peering and HWMP path selection); the engine's
// medium forwards nothing, so it is refused there, saying why.

var adhocKeys = []string{"mode", "band", "channel", "width", "preamble", "rate"}

// MeshEngineRefusal is why a mesh is refused on the engine backend.
const MeshEngineRefusal = "802.11s mesh runs on the hwsim backend only (mac80211's mesh: peering, HWMP path selection and forwarding by the mesh points): the engine backend's medium has no path selection and forwards nothing, so a mesh there would not be one; use mac80211_hwsim (backend: hwsim or auto on a kernel with it), or on the engine an ad hoc network (wifi: {adhoc: NAME}) for one hop, with stations that forward: true and routes to relay over several"

// rawAdhoc is one ad hoc network's declaration.
type rawAdhoc struct {
	name string
	loc  loc // its key under wifi.adhoc or wifi.mesh
	w    *rawWiFi
	mesh bool // declared under wifi.mesh
}

// kind names the network's kind for messages.
func (a rawAdhoc) kind() string {
	if a.mesh {
		return "mesh"
	}
	return "ad hoc network"
}

// article is the kind with its article.
func (a rawAdhoc) article() string {
	if a.mesh {
		return "a mesh"
	}
	return "an ad hoc network"
}

// adhocTop decodes wifi: {adhoc: {NAME: {...}, ...}} (or wifi: {mesh:
// ...} when mesh).
func (d *dec) adhocTop(n *yaml.Node, path string, doc *rawDoc, mesh bool) {
	for _, e := range d.entries(n, path) {
		p := joinPath(path, keyPath(e.Key))
		a := rawAdhoc{name: e.Key, loc: at(e.K, p), w: &rawWiFi{loc: at(e.K, p), isAP: true}, mesh: mesh}
		if len(a.name) == 0 || len(a.name) > 32 || strings.ContainsAny(a.name, "\n\r\x00\"") {
			id := "the IBSS's SSID"
			if mesh {
				id = "the mesh ID"
			}
			d.errorf(a.loc, "%s name %q is not valid: 1-32 bytes (it is %s), no quotes, newlines or NUL", a.kind(), clip(a.name), id)
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
			r.d.errorf(w.bandLoc, "%s %s: the 6 GHz band allows only WPA3 networks, and %s here is open (no IBSS-RSN or mesh SAE): use band 2.4 or 5", a.kind(), a.name, a.article())
			continue
		}
		if _, dup := byName[a.name]; dup {
			r.d.errorf(a.loc, "%s %s is declared twice (ad hoc networks and meshes share one set of names)", a.kind(), a.name)
			continue
		}
		mode := firstNonEmpty(w.mode, defaultWiFiMode)
		if mode == WiFiModeBE {
			r.d.errorf(firstLoc(w.modeLoc, a.loc), "%s %s: mode be is for multi-link access points here; %s takes a, b, g, n, ac or ax", a.kind(), a.name, a.article())
			continue
		}
		if mode == WiFiModeB && a.mesh {
			r.d.errorf(firstLoc(w.modeLoc, a.loc), "mesh %s: mode b: mac80211's mesh points advertise every 2.4 GHz rate, OFDM included, so a mesh cannot be 802.11b only; use mode g or n", a.name)
			continue
		}
		ap := r.resolveAP(&rawNode{name: a.name, loc: a.loc, wifi: w})
		byName[a.name] = len(r.spec.WiFiAdhoc)
		r.spec.WiFiAdhoc = append(r.spec.WiFiAdhoc, WiFiAdhoc{Name: a.name, Mesh: a.mesh, Mode: ap.Mode, Channel: ap.Channel,
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
	key, kind := "adhoc", "ad hoc network"
	if w.meshMember {
		key, kind = "mesh", "mesh"
	}
	k, ok := nets[w.adhoc]
	if !ok || r.spec.WiFiAdhoc[k].Mesh != w.meshMember {
		var known []string
		for _, a := range r.spec.WiFiAdhoc {
			if a.Mesh == w.meshMember {
				known = append(known, a.Name)
			}
		}
		other := ""
		if ok { // declared, as the other kind
			otherKey := "mesh"
			if w.meshMember {
				otherKey = "adhoc"
			}
			other = fmt.Sprintf("; %s is declared under wifi.%s: name it with %s: %s", w.adhoc, otherKey, otherKey, w.adhoc)
		}
		r.d.errorf(w.adhocLoc, "no %s %q is declared (wifi: {%s: {%s: {mode: g, channel: 1}}} at the top level) %s%s", kind, w.adhoc, key, w.adhoc, choicesOrNone(kind+"s", w.adhoc, known), other)
		return false
	}
	why := func(key string, l loc, what string) {
		r.d.errorf(l, "%s: a station of the %s %s %s", key, kind, w.adhoc, what)
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
			key, kind := "adhoc", "ad hoc network"
			if a.Mesh {
				key, kind = "mesh", "mesh"
			}
			r.d.errorf(r.adhocLoc(a.Name), "%s %s has no stations: give its members wifi: {%s: %s}", kind, a.Name, key, a.Name)
		}
	}
}

// checkAdhocBackend: a mesh needs hwsim (an explicit engine backend is
// refused here; auto is decided where the kernel is probed).
func (r *resolver) checkAdhocBackend() {
	if r.spec.WiFiMedium == nil || r.spec.WiFiMedium.Backend != WiFiBackendEngine {
		return
	}
	if names := r.meshNames(); names != "" {
		r.d.errorf(r.doc.wifi.backendLoc, "mesh %s: %s", names, MeshEngineRefusal)
	}
}

// meshNames lists the lab's meshes ("" for none).
func (r *resolver) meshNames() string {
	var out []string
	for _, a := range r.spec.WiFiAdhoc {
		if a.Mesh {
			out = append(out, a.Name)
		}
	}
	return strings.Join(out, ", ")
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
