package topo

import (
	"fmt"
	"slices"
	"strings"
)

// Wi-Fi defaults.
const (
	defaultWiFiMode = WiFiModeN
	defaultCountry  = "US"
	wlanSuffix      = "-wlan0"
)

// wlanName is Mininet-WiFi's <node>-wlan0, or wlan0 when that would not
// fit the 15-byte interface name limit.
func wlanName(node string) string {
	if len(node)+len(wlanSuffix) <= 15 {
		return node + wlanSuffix
	}
	return "wlan0"
}

// defaultBand is the band a mode uses when the file names none.
func defaultBand(mode string) string {
	if mode == WiFiModeAC || mode == WiFiModeA {
		return Band5
	}
	return Band24
}

// defaultChannel is the channel used when the file names none.
func defaultChannel(band string) int {
	switch band {
	case Band5:
		return 36
	case Band6:
		return 5
	}
	return 6
}

// makeWiFi resolves access points and stations: their settings, their
// wireless interfaces (after every wired one) and which AP each station
// joins. wifiRecs maps each wireless interface record to its AP's node.
func (r *resolver) makeWiFi() {
	r.wifiAP, r.wifiIBSS = map[*ifRec]int{}, map[*ifRec]int{}
	nets := r.resolveAdhoc()   // decode_adhoc.go
	bySSID := map[string]int{} // the first AP of each SSID
	ess := map[string][]int{}  // every AP of each SSID
	var aps []int
	for ni, rn := range r.doc.nodes {
		if rn.wifiKind != kindAP || rn.wifi == nil {
			continue
		}
		ap := r.resolveAP(rn)
		n := &r.spec.Nodes[ni]
		n.AP = ap
		if prev, dup := bySSID[ap.SSID]; dup {
			if why := essMismatch(r.spec.Nodes[prev].AP, ap); why != "" {
				r.d.errorf(firstLoc(rn.wifi.ssidLoc, rn.loc), "ssid %q is also access point %s's: %s", ap.SSID, r.spec.Nodes[prev].Name, why)
			}
		} else {
			bySSID[ap.SSID] = ni
		}
		ess[ap.SSID] = append(ess[ap.SSID], ni)
		aps = append(aps, ni)
		ap.Iface = r.freeIfName(ni, wlanName(n.Name))
		if !ap.Routed {
			ap.Bridge = n.Name
		}
		rec := r.addIface(ni, Interface{Name: ap.Iface, Link: -1, Wireless: true, MTU: defaultMTU, MAC: rn.wifi.mac}, rn.wifi.loc)
		r.givenMAC(rec, rn.wifi.macLoc)
		r.wifiAP[rec] = ni
		if len(rn.wifi.ips) > 0 {
			if ap.Routed {
				rec.addrs = rn.wifi.ips
			} else {
				r.d.errorf(rn.wifi.ipLoc, "a bridged access point has no address on its wireless side (its stations are on the wired segment it bridges to); give ip: to a routed one (routed: true), or to the stations")
			}
		}
	}
	for ni, rn := range r.doc.nodes {
		if rn.wifiKind != kindStation || rn.wifi == nil {
			continue
		}
		w := rn.wifi
		n := &r.spec.Nodes[ni]
		if w.adhoc != "" {
			r.joinAdhoc(ni, rn, nets)
			continue
		}
		api := -1
		switch {
		case w.ap != "":
			i, ok := r.lookup(w.ap, w.apLoc)
			if !ok {
				continue
			}
			if r.spec.Nodes[i].AP == nil {
				r.d.errorf(w.apLoc, "%s is not an access point (kind: ap) %s", w.ap, choicesOrNone("access points", w.ap, r.names(aps)))
				continue
			}
			api = i
			if len(w.ssids) > 1 {
				r.d.errorf(w.ssidLoc, "a station that names its access point (ap: %s) joins its one network: drop ap: to roam between the networks %s", w.ap, strings.Join(w.ssids, ", "))
				continue
			}
			if w.ssid != "" && w.ssid != r.spec.Nodes[i].AP.SSID {
				r.d.errorf(w.ssidLoc, "ssid %q is not %s's SSID (%q): give ap: or ssid:, or make them agree", w.ssid, w.ap, r.spec.Nodes[i].AP.SSID)
				continue
			}
		case w.ssid != "":
			api = -1
			for k, ssid := range w.ssids {
				i, ok := bySSID[ssid]
				if !ok {
					var known []string
					for _, a := range aps {
						if s := r.spec.Nodes[a].AP.SSID; !slices.Contains(known, s) {
							known = append(known, s)
						}
					}
					r.d.errorf(w.ssidLocs[k], "no access point has ssid %q %s", ssid, choicesOrNone("SSIDs", ssid, known))
					api = -1
					break
				}
				if api == -1 {
					api = i
				} else if why := essMismatch(r.spec.Nodes[api].AP, r.spec.Nodes[i].AP); why != "" {
					r.d.errorf(w.ssidLoc, "the station roams between the networks %s, whose access points must agree as one network's do: %s (%s, %s)", strings.Join(w.ssids, ", "), why, r.spec.Nodes[api].Name, r.spec.Nodes[i].Name)
					api = -1
					break
				}
			}
			if api == -1 {
				continue
			}
		case len(aps) == 1:
			api = aps[0]
		case len(aps) == 0:
			r.d.errorf(rn.loc, "station %s has no access point to join: add a node with kind: ap, or make it a member of an ad hoc network (wifi: {adhoc: NAME})", rn.name)
			continue
		default:
			r.d.errorf(rn.loc, "station %s must say which access point it joins: wifi: {ap: NAME} or wifi: {ssid: NAME} (access points: %s)", rn.name, strings.Join(r.names(aps), ", "))
			continue
		}
		ap := r.spec.Nodes[api].AP
		st := &WiFiStation{AP: r.spec.Nodes[api].Name, SSID: ap.SSID, Security: ap.Security, Passphrase: ap.Passphrase,
			MLO: w.mlo, TxPowerMBm: w.txMBm, AntennaGainDBi: w.gainDBi, Pos: posString(r.spec.Source, rn.loc)}
		// a station that named a network of several APs roams between
		// them; one that named its AP stays with it
		nets := ess[ap.SSID]
		if len(w.ssids) > 1 {
			st.Networks = w.ssids
			nets = nil
			for _, s := range w.ssids {
				nets = append(nets, ess[s]...)
			}
		}
		if w.ap == "" && len(nets) > 1 {
			st.ESS = r.names(nets)
			st.Roaming = w.roam
			if st.Roaming == nil {
				st.Roaming = &WiFiRoaming{HysteresisDB: DefaultRoamingHysteresisDB}
			}
			if w.mlo {
				r.d.errorf(w.mloLoc, "mlo: a station of a network of several access points (%s) cannot be a multi-link device here", strings.Join(st.ESS, ", "))
			}
			if w.hasLink {
				r.d.errorf(w.parLoc, "link: a station that roams between access points (%s) cannot have its hop shaped: its downlink is shaped at its access point, which changes; shape the wired side instead", strings.Join(st.ESS, ", "))
			}
		} else if w.roam != nil {
			why := fmt.Sprintf("its network %q has one access point", ap.SSID)
			if w.ap != "" {
				why = fmt.Sprintf("it names its access point (ap: %s); name the network instead (ssid: %s) to roam between its access points", w.ap, ap.SSID)
			}
			r.d.errorf(w.roamLoc, "roaming: the station does not roam: %s", why)
		}
		if w.mlo && !ap.MLO() {
			r.d.errorf(w.mloLoc, "mlo: true needs an access point with two or more links (mode: be, links: [...]); %s has one channel", st.AP)
		}
		if w.hasLink {
			st.Params = r.wirelessParams(w)
		}
		n.Station = st
		ap.Stations = append(ap.Stations, n.Name)
		st.Iface = r.freeIfName(ni, wlanName(n.Name))
		rec := r.addIface(ni, Interface{Name: st.Iface, Link: -1, Wireless: true, MTU: defaultMTU, MAC: w.mac}, w.loc)
		r.givenMAC(rec, w.macLoc)
		rec.addrs = w.ips // none: the lab's plan gives them
		r.wifiAP[rec] = api
	}
	r.checkAdhoc()
	r.resolveMedium()   // resolve_medium.go
	r.resolveMobility() // decode_mobility.go
}

// essMismatch says why two access points cannot be one network (one
// SSID) a station roams in: both bridged (a station keeps its address as
// it moves, on one wired segment: checkESS), the same mode, band and
// security, no multi-link; "" when they can.
func essMismatch(a, b *WiFiAP) string {
	switch {
	case a.Routed || b.Routed:
		return "access points that share an SSID form one network a station roams in, and must bridge it to one wired segment (routed: false): a station keeps its address as it moves"
	case a.MLO() || b.MLO():
		return "a multi-link access point cannot share its SSID with another here (roaming between MLDs is not modelled)"
	case a.Mode != b.Mode:
		return fmt.Sprintf("one network, one mode: %s is not %s", b.Mode, a.Mode)
	case a.Channel.Band != b.Channel.Band:
		return fmt.Sprintf("one network, one band: %s GHz is not %s GHz", b.Channel.Band, a.Channel.Band)
	case a.Channel.Width != b.Channel.Width:
		return fmt.Sprintf("one network, one channel width: %d MHz is not %d MHz", b.Channel.Width, a.Channel.Width)
	case a.Security != b.Security || a.Passphrase != b.Passphrase:
		return "one network, one security: give both the same security and passphrase"
	}
	return ""
}

// checkESS: the access points of one network are bridged to one wired
// segment (a chain of switches joins them), so a station that roams
// keeps its address and the wired side can learn where it is.
func (r *resolver) checkESS() {
	uf := newUnionFind(len(r.spec.Nodes))
	for _, e := range r.linkEnds() {
		if e[0] != nil && e[1] != nil && r.isSwitch(e[0].node) && r.isSwitch(e[1].node) {
			uf.union(e[0].node, e[1].node)
		}
	}
	bySSID := map[string][]int{}
	for i := range r.spec.Nodes {
		if ap := r.spec.Nodes[i].AP; ap != nil && !ap.Routed && !ap.MLO() {
			bySSID[ap.SSID] = append(bySSID[ap.SSID], i)
		}
	}
	for ssid, aps := range bySSID {
		for _, i := range aps[1:] {
			if essMismatch(r.spec.Nodes[aps[0]].AP, r.spec.Nodes[i].AP) == "" && uf.find(i) != uf.find(aps[0]) {
				n := &r.spec.Nodes[i]
				r.d.errorf(r.doc.nodes[i].loc, "access point %s shares ssid %q with %s but no chain of switches joins them: link both to one switch (a network's access points bridge one wired segment, where a roaming station keeps its address)", n.Name, ssid, r.spec.Nodes[aps[0]].Name)
			}
		}
	}
	// a station of several networks keeps its address in all of them
	for i := range r.spec.Nodes {
		st := r.spec.Nodes[i].Station
		if st == nil || len(st.Networks) < 2 {
			continue
		}
		first := r.byName[st.ESS[0]]
		for _, name := range st.ESS[1:] {
			if j := r.byName[name]; uf.find(j) != uf.find(first) {
				r.d.errorf(r.doc.nodes[i].wifi.ssidLoc, "the station roams between the networks %s, but no chain of switches joins %s and %s: link their access points to one wired segment (where the station keeps its address)", strings.Join(st.Networks, ", "), st.ESS[0], name)
				break
			}
		}
	}
}

func firstLoc(ls ...loc) loc {
	for _, l := range ls {
		if l.line > 0 {
			return l
		}
	}
	return ls[len(ls)-1]
}

func (r *resolver) names(idx []int) []string {
	out := make([]string, len(idx))
	for i, n := range idx {
		out[i] = r.spec.Nodes[n].Name
	}
	return out
}

// freeIfName returns want, or want with a number when the node already
// has an interface of that name.
func (r *resolver) freeIfName(ni int, want string) string {
	n := &r.spec.Nodes[ni]
	name := want
	for k := 1; ; k++ {
		if !slices.ContainsFunc(n.Interfaces, func(i Interface) bool { return i.Name == name }) {
			return name
		}
		name = fmt.Sprintf("%s%d", strings.TrimSuffix(want, "0"), k)
	}
}

// resolveAP applies defaults and checks an AP's settings.
func (r *resolver) resolveAP(rn *rawNode) *WiFiAP {
	w := rn.wifi
	ap := &WiFiAP{SSID: w.ssid, Mode: w.mode, Security: w.security, Passphrase: w.passphrase, Country: w.country,
		CountrySet: w.country != "", Routed: w.routed, TxPowerMBm: w.txMBm, AntennaGainDBi: w.gainDBi, Pos: posString(r.spec.Source, rn.loc)}
	if ap.SSID == "" {
		ap.SSID = rn.name
	}
	if ap.Mode == "" {
		ap.Mode = defaultWiFiMode
	}
	if w.preamble != "" && ap.Mode != WiFiModeB {
		r.d.errorf(w.preambleLoc, "preamble: is 802.11b's (DSSS/CCK; mode: b), not mode %s's", ap.Mode)
	}
	ap.ShortPreamble = w.preamble == "short"
	if ap.Country == "" {
		ap.Country = defaultCountry
	}
	band := w.band
	if band == "" {
		band = defaultBand(ap.Mode)
	}
	ch, width := w.channel, w.width
	if ch == 0 {
		ch = defaultChannel(band)
	}
	if width == 0 {
		width = 20
	}
	modeLoc := firstLoc(w.modeLoc, w.loc)
	if len(w.links) > 0 {
		if ap.Mode != WiFiModeBE {
			r.d.errorf(w.linksLoc, "links: (multi-link operation) needs mode: be, not mode: %s", ap.Mode)
		}
		if w.band != "" || w.channel != 0 || w.width != 0 {
			r.d.errorf(firstLoc(w.bandLoc, w.chanLoc, w.widthLoc), "with links: give band, channel and width per link, not on the AP")
		}
		if len(w.links) < 2 {
			r.d.errorf(w.linksLoc, "links: needs two or more links (one link is a plain AP: use band/channel/width)")
		}
		seen := map[int]int{}
		for i, ml := range w.links {
			b := ml.band
			if b == "" {
				b = defaultBand(ap.Mode)
			}
			wd := ml.width
			if wd == 0 {
				wd = 20
			}
			c, msg := ResolveChannel(ap.Mode, b, ml.channel, wd)
			if msg != "" {
				if ml.channel != 0 {
					r.d.errorf(ml.loc, "%s", msg)
				}
				continue
			}
			if j, dup := seen[c.FreqMHz]; dup {
				r.d.errorf(ml.loc, "link %d uses the same channel as link %d (%d MHz): every link of a multi-link AP needs its own channel", i, j, c.FreqMHz)
				continue
			}
			seen[c.FreqMHz] = i
			ap.Links = append(ap.Links, c)
		}
		if len(ap.Links) > 0 {
			ap.Channel = ap.Links[0]
		}
	} else {
		c, msg := ResolveChannel(ap.Mode, band, ch, width)
		if msg != "" {
			r.d.errorf(firstLoc(w.chanLoc, w.widthLoc, w.bandLoc, modeLoc), "%s", msg)
		}
		ap.Channel = c
	}
	// security: default WPA2 with a passphrase, open without; WPA3 on 6 GHz
	on6 := ap.Channel.Band == Band6
	for _, l := range ap.Links {
		on6 = on6 || l.Band == Band6
	}
	if ap.Security == "" {
		switch {
		case on6:
			ap.Security = WiFiWPA3
		case ap.Passphrase != "":
			ap.Security = WiFiWPA2
		default:
			ap.Security = WiFiOpen
		}
	}
	secLoc := firstLoc(w.secLoc, w.loc)
	switch ap.Security {
	case WiFiOpen:
		if len(ap.Links) > 1 {
			r.d.errorf(secLoc, "a multi-link AP needs security: wpa3 with a passphrase (802.11be multi-link is not allowed on open networks)")
		}
		if ap.Passphrase != "" {
			r.d.errorf(w.passLoc, "a passphrase needs security: wpa2 or wpa3 (security is open)")
		}
		if on6 {
			r.d.errorf(secLoc, "the 6 GHz band allows only WPA3 (security: wpa3 with a passphrase), not open networks")
		}
	case WiFiWPA2, WiFiWPA3:
		if ap.Security == WiFiWPA2 && len(ap.Links) > 1 {
			r.d.errorf(secLoc, "a multi-link AP needs security: wpa3 (802.11be multi-link requires SAE with management frame protection; WPA2-PSK is refused by wpa_supplicant)")
		}
		if ap.Passphrase == "" {
			r.d.errorf(secLoc, "security: %s needs a passphrase: (8-63 printable ASCII characters)", ap.Security)
		} else if msg := checkPassphrase(ap.Passphrase); msg != "" {
			r.d.errorf(w.passLoc, "%s", msg)
		}
		if ap.Security == WiFiWPA2 && on6 {
			r.d.errorf(secLoc, "the 6 GHz band allows only WPA3 (security: wpa3), not WPA2")
		}
	}
	return ap
}

func checkPassphrase(p string) string {
	if len(p) < 8 || len(p) > 63 {
		return fmt.Sprintf("passphrase has %d characters: WPA needs 8-63", len(p))
	}
	for _, c := range p {
		if c < 32 || c > 126 || c == '"' {
			return "passphrase must be printable ASCII without double quotes"
		}
	}
	return ""
}

// wirelessParams resolves a station's link: block. a->b is the uplink
// (station → AP), b->a the downlink. The link-shaping defaults do not
// apply to wireless hops: only what the station's block says.
func (r *resolver) wirelessParams(w *rawWiFi) *LinkParams {
	eff := w.params
	if eff.empty() && w.dirs[0] == nil && w.dirs[1] == nil {
		return nil
	}
	if eff.backend != nil && *eff.backend == BackendUserspace {
		r.d.errorf(w.parLoc, "backend: userspace cannot shape a wireless hop (the link engine sits between two veths); wireless hops are shaped with netem: use backend: auto or kernel")
	}
	p := eff.params()
	for j, dp := range w.dirs {
		if dp == nil {
			continue
		}
		dd := eff.over(*dp).params()
		if j == 0 {
			p.AtoB = &dd
		} else {
			p.BtoA = &dd
		}
	}
	for j := range w.dirs {
		dir := eff
		if w.dirs[j] != nil {
			dir = eff.over(*w.dirs[j])
		}
		for _, msg := range dir.check() {
			wl := w.parLoc
			if w.dirLocs[j].line > 0 {
				wl = w.dirLocs[j]
			}
			r.d.errorf(wl, "%s", msg)
		}
	}
	return &p
}
