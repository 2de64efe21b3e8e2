package topo

import (
	"bytes"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Wi-Fi node kinds as written in files; resolved, an AP is a switch (or a
// router when routed) and a station a host (spec_wifi.go).
const (
	kindAP      = "ap"
	kindStation = "station"
)

var (
	apWiFiKeys  = []string{"ssid", "mode", "band", "channel", "width", "security", "passphrase", "txpower", "country", "links", "routed", "rate", "preamble", "ip", "mac", "antenna_gain"}
	staWiFiKeys = []string{"ap", "adhoc", "mesh", "ssid", "mlo", "txpower", "antenna_gain", "link", "rate", "roaming", "ip", "mac"}
	roamingKeys = []string{"hysteresis", "scan", "off_air", "bgscan", "association"}
	mloLinkKeys = []string{"band", "channel", "width", "link"}
	securities  = []string{WiFiOpen, WiFiWPA2, WiFiWPA3}
	bands       = []string{Band24, Band5, Band6}
)

// rawWiFi is a node's wifi: block as written.
type rawWiFi struct {
	loc  loc // the wifi: key (or the node, when the block is absent)
	isAP bool
	// AP keys
	ssid, mode, band, security, passphrase, country string
	ssids                                           []string // a station's networks (ssid: [a, b])
	ssidLocs                                        []loc
	ssidLoc, modeLoc, bandLoc, secLoc, passLoc      loc
	channel, width                                  int
	chanLoc, widthLoc                               loc
	links                                           []rawMLOLink
	linksLoc                                        loc
	routed                                          bool
	txMBm                                           int
	txSet                                           bool
	gainDBi                                         float64 // antenna_gain (both kinds)
	// station keys
	ap    string
	apLoc loc
	// adhoc: the ad hoc network the station is a member of
	adhoc    string
	adhocLoc loc
	// meshMember: the station named its network with mesh: (adhoc
	// names the network either way)
	meshMember bool
	mlo        bool
	mloLoc     loc
	params     lp
	dirs       [2]*lp
	parLoc     loc
	dirLocs    [2]loc
	hasLink    bool
	// rate: a fixed rate on the medium ("" or auto: rate control)
	rate    string
	rateLoc loc
	// preamble: short or long (802.11b)
	preamble    string
	preambleLoc loc
	// roaming: how the station roams between its network's APs
	roam    *WiFiRoaming
	roamLoc loc
	// ip: the wireless interface's addresses (stations, routed APs);
	// none: the lab's plan gives them
	ips   []rawAddr
	ipLoc loc
	// mac: the wireless interface's MAC ("": hashed, as every interface's)
	mac    string
	macLoc loc
}

type rawMLOLink struct {
	loc            loc
	band           string
	channel, width int
	bandLoc        loc
}

// wifiPrescan finds wifi.routed of an AP before the node's other keys are
// checked, because it decides whether the AP is a switch or a router.
func wifiPrescan(v *yaml.Node) (routed bool) {
	w := deref(v)
	if w == nil || w.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(w.Content); i += 2 {
		if deref(w.Content[i]).Value == "wifi" {
			b := deref(w.Content[i+1])
			if b == nil || b.Kind != yaml.MappingNode {
				return false
			}
			for j := 0; j+1 < len(b.Content); j += 2 {
				if deref(b.Content[j]).Value == "routed" {
					x := deref(b.Content[j+1])
					return x != nil && x.Kind == yaml.ScalarNode && (x.Value == "true" || x.Value == "yes")
				}
			}
		}
	}
	return false
}

// wifiBlock decodes an AP's or a station's wifi: block.
func (d *dec) wifiBlock(n *yaml.Node, path string, isAP bool, keyLoc loc) *rawWiFi {
	w := &rawWiFi{loc: keyLoc, isAP: isAP}
	valid := staWiFiKeys
	if isAP {
		valid = apWiFiKeys
	}
	for _, e := range d.fields(n, path, valid) {
		p := joinPath(path, e.Key)
		l := at(e.V, p)
		switch e.Key {
		case "ssid":
			// a station may name several networks (a list): it roams
			// between all their access points
			items := []*yaml.Node{e.V}
			if !isAP {
				items = d.list(e.V, p, true)
			}
			for i, v := range items {
				s, ok := d.str(v, p, "a network name of 1-32 bytes")
				if !ok {
					continue
				}
				if len(s) == 0 || len(s) > 32 || strings.ContainsAny(s, "\n\r\x00\"") {
					d.errorf(at(v, p), "ssid %q is not valid: 1-32 bytes, no quotes, newlines or NUL", clip(s))
					continue
				}
				if slices.Contains(w.ssids, s) {
					d.errorf(at(v, p), "ssid %q is named twice", clip(s))
					continue
				}
				if i == 0 {
					w.ssid, w.ssidLoc = s, l
				}
				w.ssids, w.ssidLocs = append(w.ssids, s), append(w.ssidLocs, at(v, p))
			}
		case "mode", "band", "channel", "width":
			d.channelKey(w, e.Key, e.V, p)
		case "security":
			w.security, _ = d.oneOf(e.V, p, "security", securities)
			w.secLoc = l
		case "passphrase":
			if s, ok := d.str(e.V, p, "a passphrase of 8-63 printable ASCII characters"); ok {
				w.passphrase, w.passLoc = s, l
			}
		case "country":
			if s, ok := d.str(e.V, p, "a two-letter country code such as US or DE"); ok {
				if len(s) != 2 || strings.ToUpper(s) != s || s[0] < 'A' || s[0] > 'Z' || s[1] < 'A' || s[1] > 'Z' {
					d.errorf(l, "country %q is not a two-letter upper-case country code (e.g. US, DE, JP)", clip(s))
					continue
				}
				w.country = s
			}
		case "mac":
			if s, ok := d.scalar(e.V, p, "a unicast MAC such as 02:00:00:00:00:01"); ok {
				if msg := checkMAC(s); msg != "" {
					d.errorf(l, "mac %q %s", clip(s), msg)
					continue
				}
				hw, _ := net.ParseMAC(s)
				w.mac, w.macLoc = hw.String(), l
			}
		case "antenna_gain":
			if s, ok := d.scalar(e.V, p, "an antenna gain such as 5dBi"); ok {
				t := strings.TrimSpace(strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), "dbi"))
				g, err := strconv.ParseFloat(t, 64)
				if err != nil || math.IsNaN(g) || g < -10 || g > 30 {
					d.errorf(l, "antenna_gain %q is not valid: give dBi from -10 to 30, such as 5dBi", clip(s))
					continue
				}
				w.gainDBi = g
			}
		case "txpower":
			if s, ok := d.scalar(e.V, p, "a transmit power such as 20dBm"); ok {
				mbm, msg := parseTxPower(s)
				if msg != "" {
					d.errorf(l, "%s", msg)
					continue
				}
				w.txMBm, w.txSet = mbm, true
			}
		case "rate":
			if s, ok := d.str(e.V, p, "auto, a legacy rate such as 54mbit, or mcsN"); ok {
				w.rate, w.rateLoc = strings.ToLower(strings.TrimSpace(s)), l
			}
		case "routed":
			w.routed, _ = d.boolean(e.V, p)
		case "preamble":
			w.preamble, _ = d.oneOf(e.V, p, "preamble", []string{"long", "short"})
			w.preambleLoc = l
		case "links":
			w.linksLoc = at(e.K, p)
			for i, item := range d.list(e.V, p, false) {
				ip := idx(p, i)
				ml := rawMLOLink{loc: at(item, ip)}
				for _, f := range d.fields(item, ip, mloLinkKeys) {
					fp := joinPath(ip, f.Key)
					switch f.Key {
					case "band":
						ml.band, ml.bandLoc = d.band(f.V, fp)
					case "channel":
						if v, ok := d.integer(f.V, fp, 1, 233); ok {
							ml.channel = int(v)
						}
					case "width":
						ml.width, _ = d.width(f.V, fp)
					case "link":
						// known, to say why it cannot be: the qdisc sits
						// on the MLD's one interface, above link selection
						d.errorf(at(f.K, fp), "one link of a multi-link AP cannot be shaped on its own: tc's qdiscs sit on the MLD's single interface, above mac80211's choice of link (each flow's frames go over every link); shape a station's hop as a whole (wifi: {link: ...} on the station) — a link's capacity is the Wi-Fi medium's to model")
					}
				}
				if ml.channel == 0 && !d.failedAt(ml.loc) {
					d.errorf(ml.loc, "a multi-link entry needs channel: (and band:, width: unless 2.4 GHz at 20 MHz)")
				}
				w.links = append(w.links, ml)
			}
		case "ap":
			if s, ok := d.str(e.V, p, "the name of an AP node"); ok {
				w.ap, w.apLoc = s, l
			}
		case "adhoc", "mesh":
			what := "the name of an ad hoc network declared under the top-level wifi: {adhoc: ...}"
			if e.Key == "mesh" {
				what = "the name of a mesh declared under the top-level wifi: {mesh: ...}"
			}
			if s, ok := d.str(e.V, p, what); ok {
				if w.adhoc != "" {
					d.errorf(l, "a station is a member of one network: give adhoc: or mesh:, not both")
					continue
				}
				w.adhoc, w.adhocLoc, w.meshMember = s, l, e.Key == "mesh"
			}
		case "mlo":
			w.mlo, _ = d.boolean(e.V, p)
			w.mloLoc = l
		case "roaming":
			w.roam, w.roamLoc = &WiFiRoaming{HysteresisDB: DefaultRoamingHysteresisDB}, at(e.K, p)
			for _, f := range d.fields(e.V, p, roamingKeys) {
				fp := joinPath(p, f.Key)
				switch f.Key {
				case "hysteresis":
					if v, ok := d.decibels(f.V, fp, 0, 40); ok {
						w.roam.HysteresisDB = v
					}
				case "association":
					if s, ok := d.str(f.V, fp, "ssf (strongest signal first) or llf (least loaded first)"); ok {
						switch s {
						case WiFiAssocSSF:
						case WiFiAssocLLF:
							w.roam.Association = s
						default:
							d.errorf(at(f.V, fp), "association %q: want ssf (strongest signal first, the default) or llf (least loaded first: the access point with the fewest stations among those heard)", clip(s))
						}
					}
				case "bgscan":
					if s, ok := d.str(f.V, fp, `a wpa_supplicant bgscan module such as "simple:2:-70:30" or "learn:2:-70:30"`); ok {
						if !validBgscan(s) {
							d.errorf(at(f.V, fp), "bgscan %q: want simple:SHORT:SIGNAL:LONG or learn:SHORT:SIGNAL:LONG (seconds, dBm, seconds), as wpa_supplicant's bgscan=", clip(s))
							continue
						}
						w.roam.Bgscan = s
					}
				case "scan", "off_air":
					v, ok := d.duration(f.V, fp, "a duration such as 50ms")
					if ok && (v < 0 || v > 10*time.Second) {
						d.errorf(at(f.V, fp), "%s %v: want 0 to 10s", f.Key, v)
						ok = false
					}
					if ok && f.Key == "scan" {
						w.roam.Scan = v
					} else if ok {
						w.roam.OffAir = v
						if v == 0 {
							d.errorf(at(f.V, fp), "off_air 0: a handover takes time (leave off_air out for the exchange's airtime, plus scan)")
						}
					}
				}
			}
		case "ip":
			w.ips, w.ipLoc = d.addrs(e.V, p), at(e.K, p)
		case "link":
			w.params, w.dirs, w.dirLocs = d.linkBlock(e.V, p, true)
			w.parLoc, w.hasLink = at(e.K, p), true
		}
	}
	return w
}

// checkMAC says what is wrong with a MAC given for an interface ("" if
// nothing): six octets, unicast, not all zero.
func checkMAC(s string) string {
	hw, err := net.ParseMAC(s)
	switch {
	case err != nil || len(hw) != 6:
		return "is not a MAC: six hexadecimal octets, e.g. 02:00:00:00:00:01"
	case hw[0]&1 != 0:
		return "is a group (multicast) address: an interface's MAC is unicast (the first octet even)"
	case bytes.Equal(hw, make(net.HardwareAddr, 6)):
		return "is all zero: give an interface a unicast MAC, e.g. 02:00:00:00:00:01"
	}
	return ""
}

// validBgscan: wpa_supplicant's simple or learn module with a short
// interval (s), a signal threshold (dBm) and a long interval (s).
func validBgscan(s string) bool {
	p := strings.Split(s, ":")
	if len(p) != 4 || p[0] != "simple" && p[0] != "learn" {
		return false
	}
	short, e1 := strconv.Atoi(p[1])
	sig, e2 := strconv.Atoi(p[2])
	long, e3 := strconv.Atoi(p[3])
	return e1 == nil && e2 == nil && e3 == nil && short >= 1 && long >= short && sig <= -30 && sig >= -100
}

// band decodes 2.4, 5 or 6 (GHz; "2.4GHz" and "5ghz" are accepted).
func (d *dec) band(n *yaml.Node, path string) (string, loc) {
	s, ok := d.scalar(n, path, "a band: 2.4, 5 or 6 (GHz)")
	if !ok {
		return "", at(n, path)
	}
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), "ghz"), " ")
	if !slices.Contains(bands, t) {
		d.errorf(at(n, path), "band %q is not valid (valid: 2.4, 5, 6 — in GHz)", clip(s))
		return "", at(n, path)
	}
	return t, at(n, path)
}

// width decodes a channel width in MHz: 20, 40, 80, 160, 320 ("80MHz" too).
func (d *dec) width(n *yaml.Node, path string) (int, loc) {
	s, ok := d.scalar(n, path, "a channel width in MHz: 20, 40, 80, 160 or 320")
	if !ok {
		return 0, at(n, path)
	}
	v, err := strconv.Atoi(strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), "mhz"))
	switch v {
	case 20, 40, 80, 160, 320:
		if err == nil {
			return v, at(n, path)
		}
	}
	d.errorf(at(n, path), "width %q is not valid (valid: 20, 40, 80, 160, 320 — in MHz)", clip(s))
	return 0, at(n, path)
}

// parseTxPower parses "20dBm", "20 dBm", "20" (dBm) or "100mW" into mBm.
func parseTxPower(s string) (int, string) {
	t := strings.ToLower(strings.TrimSpace(s))
	bad := fmt.Sprintf("txpower %q is not valid: give dBm such as 20dBm (0-30 dBm) or milliwatts such as 100mW", clip(s))
	var dbm float64
	switch {
	case strings.HasSuffix(t, "mw"):
		mw, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "mw")), 64)
		if err != nil || mw < 1 || mw > 1000 {
			return 0, bad
		}
		dbm = 10 * math.Log10(mw)
	default:
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "dbm")), 64)
		if err != nil {
			return 0, bad
		}
		dbm = v
	}
	if dbm < 0 || dbm > 30 {
		return 0, bad
	}
	return int(dbm*100 + 0.5), ""
}

// channelKey decodes a key an access point and an ad hoc network share:
// the radio's mode, band, channel or width.
func (d *dec) channelKey(w *rawWiFi, key string, v *yaml.Node, p string) {
	switch key {
	case "mode":
		w.mode, _ = d.oneOf(v, p, "Wi-Fi mode", WiFiModes)
		w.modeLoc = at(v, p)
	case "band":
		w.band, w.bandLoc = d.band(v, p)
	case "channel":
		if n, ok := d.integer(v, p, 1, 233); ok {
			w.channel, w.chanLoc = int(n), at(v, p)
		}
	case "width":
		w.width, w.widthLoc = d.width(v, p)
	}
}
