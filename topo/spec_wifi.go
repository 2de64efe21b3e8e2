package topo

import "time"

// Wi-Fi in a resolved Spec. In a file an access point is `kind: ap` and a
// station `kind: station`; resolved, an AP is a switch (it bridges its
// wireless clients and its wired links into one L2 segment, bridge named
// after the node, like every Linux-bridge switch) or, with `routed: true`,
// a router (its wireless side is a subnet of its own). A station is a host
// (or a router with `forward: true`) that has one wireless interface besides
// any wired links. Node.AP / Node.Station carry the Wi-Fi settings; the
// wireless interface is in Node.Interfaces with Link == -1 and Wireless set.

// Wi-Fi modes (the 802.11 amendment an AP runs).
const (
	WiFiModeA  = "a"  // 802.11a, 5 GHz OFDM, 6-54 Mbit/s
	WiFiModeB  = "b"  // 802.11b, 2.4 GHz DSSS/CCK, 1-11 Mbit/s
	WiFiModeG  = "g"  // 802.11g, 2.4 GHz, up to 54 Mbit/s
	WiFiModeN  = "n"  // 802.11n (HT), 2.4 or 5 GHz
	WiFiModeAC = "ac" // 802.11ac (VHT), 5 GHz
	WiFiModeAX = "ax" // 802.11ax (HE), 2.4, 5 or 6 GHz
	WiFiModeBE = "be" // 802.11be (EHT), 2.4, 5 or 6 GHz; multi-link with links:
)

// LegacyMode: 802.11a, b or g, whose BSSs send non-QoS data (no WMM).
func LegacyMode(mode string) bool {
	return mode == WiFiModeA || mode == WiFiModeB || mode == WiFiModeG
}

// Wi-Fi security.
const (
	WiFiOpen = "open"
	WiFiWPA2 = "wpa2" // WPA2-PSK (CCMP)
	WiFiWPA3 = "wpa3" // WPA3-SAE (CCMP, management frame protection required)
)

// Bands, in GHz as written in files.
const (
	Band24 = "2.4"
	Band5  = "5"
	Band6  = "6"
)

// WiFiChannel is one operating channel: an AP's only channel or one link of
// a multi-link (MLO) AP.
type WiFiChannel struct {
	Band    string `json:"band"`     // "2.4", "5" or "6"
	Channel int    `json:"channel"`  // primary channel number
	Width   int    `json:"width"`    // MHz: 20, 40, 80, 160 or 320
	FreqMHz int    `json:"freq_mhz"` // primary channel's centre frequency
	// CenterChannel is the centre channel of the whole width (the
	// primary channel itself at 20 MHz): hostapd's
	// vht/he/eht_oper_centr_freq_seg0_idx.
	CenterChannel int `json:"center_channel"`
}

// WiFiAP is an access point's settings, defaults resolved.
type WiFiAP struct {
	SSID       string `json:"ssid"`
	Mode       string `json:"mode"`     // g, n, ac, ax, be
	Security   string `json:"security"` // open, wpa2, wpa3
	Passphrase string `json:"passphrase,omitempty"`
	// Channel is the AP's channel; with Links, the first link.
	Channel WiFiChannel `json:"channel"`
	// Links lists every link of a multi-link AP (mode be, two or more);
	// Links[0] == Channel. Empty for single-link APs.
	Links []WiFiChannel `json:"links,omitempty"`
	// TxPowerMBm is the transmit power in mBm (100 × dBm); 0 leaves the
	// driver's default.
	TxPowerMBm int `json:"txpower_mbm,omitempty"`
	// AntennaGainDBi is the antenna's gain, on transmission and
	// reception alike (the medium's link budget: power + both gains −
	// path loss); 0: an isotropic antenna.
	AntennaGainDBi float64 `json:"antenna_gain_dbi,omitempty"`
	// Country is the regulatory country code written for hostapd.
	// CountrySet: the file names it; otherwise it is the default (US),
	// which up replaces when the regulatory database lets no access
	// point start on the AP's channels there (emu: wifi_regdom.go).
	Country    string `json:"country"`
	CountrySet bool   `json:"country_set,omitempty"`
	// Routed: the AP is a router (its wireless side a subnet of its own)
	// rather than a bridge.
	Routed bool `json:"routed,omitempty"`
	// ShortPreamble: an 802.11b BSS's DSSS/CCK frames at 2, 5.5 and 11
	// Mbit/s carry the 96 µs short PLCP preamble (preamble: short), not
	// the 192 µs long one.
	ShortPreamble bool `json:"short_preamble,omitempty"`
	// Iface is the wireless interface in the AP's namespace.
	Iface string `json:"iface"`
	// Bridge is the bridge the wireless interface joins (bridged APs: the
	// node's name, as for every Linux-bridge switch); empty when routed.
	Bridge string `json:"bridge,omitempty"`
	// Stations are the station nodes that associate with this AP, in
	// declaration order.
	Stations []string `json:"stations,omitempty"`
	// Pos is "file:line:col" of the node, for messages.
	Pos string `json:"pos,omitempty"`
	// Position is the AP's place in metres (the medium's path loss).
	Position [3]float64 `json:"position"`
	// Rate is a fixed rate on the medium ("" = the driver's rate
	// control): "54mbit", "mcs7", validated for Mode, band and width.
	Rate string `json:"rate,omitempty"`
}

// MLO reports whether the AP is a multi-link device.
func (a *WiFiAP) MLO() bool { return len(a.Links) > 1 }

// WiFiAdhoc is an ad hoc (IBSS) network as the file declares it
// (wifi: {adhoc: {NAME: {...}}} at the top level), defaults resolved as
// an access point's: its stations (wifi: {adhoc: NAME}) send directly to
// each other on its channel, one L2 segment, with no access point to
// relay and nothing forwarded by the network itself (IBSS has no
// forwarding: a station out of another's range is not reached).
//
// Mesh makes it an 802.11s mesh instead (wifi: {mesh: {NAME: ...}}; hwsim
// backend): Name is its mesh ID, and the mesh points forward for each
// other (mac80211's HWMP), so a member out of another's range is reached
// through those between them.
type WiFiAdhoc struct {
	Name    string      `json:"name"`
	Mesh    bool        `json:"mesh,omitempty"`
	Mode    string      `json:"mode"`
	Channel WiFiChannel `json:"channel"`
	// ShortPreamble as for an 802.11b access point.
	ShortPreamble bool `json:"short_preamble,omitempty"`
	// Rate is the members' fixed rate unless a member names its own
	// ("": the ideal rate for each link's SNR).
	Rate string `json:"rate,omitempty"`
	// Members are the station nodes of the network, in declaration order.
	Members []string `json:"members,omitempty"`
	// Pos is "file:line:col" of the declaration, for messages.
	Pos string `json:"pos,omitempty"`
}

// BSS is the network's channel and framing as an access point's settings
// (open, no AP node): what the medium's radios take from their BSS.
func (a *WiFiAdhoc) BSS() *WiFiAP {
	return &WiFiAP{SSID: a.Name, Mode: a.Mode, Security: WiFiOpen, Channel: a.Channel, ShortPreamble: a.ShortPreamble, Country: defaultCountry, Pos: a.Pos}
}

// Adhoc is the ad hoc network called name (nil: none).
func (s *Spec) Adhoc(name string) *WiFiAdhoc {
	for i := range s.WiFiAdhoc {
		if s.WiFiAdhoc[i].Name == name {
			return &s.WiFiAdhoc[i]
		}
	}
	return nil
}

// WiFiStation is a station's settings, defaults resolved.
type WiFiStation struct {
	// AP names the access point node the station associates with; SSID,
	// security and passphrase are the AP's. Empty for a station of an ad
	// hoc network (Adhoc).
	AP string `json:"ap"`
	// Adhoc names the ad hoc (IBSS) network the station is a member of
	// (Spec.Adhoc); SSID is its name and security open.
	Adhoc      string `json:"adhoc,omitempty"`
	SSID       string `json:"ssid"`
	Security   string `json:"security"`
	Passphrase string `json:"passphrase,omitempty"`
	// Iface is the wireless interface in the station's namespace.
	Iface string `json:"iface"`
	// MLO: associate as a multi-link device on every link of the AP.
	MLO bool `json:"mlo,omitempty"`
	// Params shape the wireless hop like a wired link: AtoB is the uplink
	// (station → AP, the station's egress), BtoA the downlink (AP →
	// station, the AP's egress towards this station). Nil: unshaped.
	Params *LinkParams `json:"params,omitempty"`
	// TxPowerMBm as for the AP; 0 leaves the driver's default.
	TxPowerMBm int `json:"txpower_mbm,omitempty"`
	// AntennaGainDBi as for the AP.
	AntennaGainDBi float64 `json:"antenna_gain_dbi,omitempty"`
	// Networks are the SSIDs of a station that roams between several
	// networks (ssid: [a, b]): ESS holds all their access points, and
	// SSID is the first's (on hwsim wpa_supplicant has one network block
	// each). Nil for one network.
	Networks []string `json:"networks,omitempty"`
	// Pos is "file:line:col" of the node, for messages.
	Pos string `json:"pos,omitempty"`
	// Position and Rate as for the AP.
	Position [3]float64 `json:"position"`
	Rate     string     `json:"rate,omitempty"`
	// ESS lists the access points of the station's network when several
	// share the SSID it named (wifi: {ssid: NAME}): it roams between them
	// as Roaming says, and AP is the one it starts on (the one it hears
	// best, chosen when the lab is built). Empty: it stays with AP.
	ESS     []string     `json:"ess,omitempty"`
	Roaming *WiFiRoaming `json:"roaming,omitempty"`
}

// WiFiRoaming is how a station of a network of several access points
// roams (wifi: {roaming: {...}}).
type WiFiRoaming struct {
	// HysteresisDB: another AP must be heard this much better (SNR, dB)
	// before the station hands over.
	HysteresisDB float64 `json:"hysteresis_db"`
	// Scan is the time spent scanning before a handover (added to the
	// exchange's airtime); OffAir, when set, is the whole time off the
	// air instead.
	Scan   time.Duration `json:"scan_ns,omitempty"`
	OffAir time.Duration `json:"off_air_ns,omitempty"`
	// Association is how the station picks its access point on the
	// engine backend: WiFiAssocSSF (""), the strongest signal, or
	// WiFiAssocLLF, the least loaded it hears (Mininet-WiFi's
	// associationControl('llf')).
	Association string `json:"association,omitempty"`
	// Bgscan is wpa_supplicant's background scan module on the hwsim
	// backend (its network's bgscan=), where wpa_supplicant roams as on
	// hardware; "" is DefaultBgscan.
	Bgscan string `json:"bgscan,omitempty"`
}

// DefaultBgscan: wpa_supplicant's simple module scanning every 2 s while
// the signal is below -70 dBm, every 30 s above it.
const DefaultBgscan = "simple:2:-70:30"

// Association policies (wifi: {roaming: {association: ...}}).
const (
	WiFiAssocSSF = "ssf" // strongest signal first (the default)
	WiFiAssocLLF = "llf" // least loaded first
)

// DefaultRoamingHysteresisDB is a station's hysteresis unless it names one.
const DefaultRoamingHysteresisDB = 3

// Wi-Fi backends (wifi: {backend: ...}): what carries a lab's frames.
const (
	// WiFiBackendAuto: hwsim where the kernel has mac80211_hwsim, the
	// engine elsewhere (emu decides; doctor says which).
	WiFiBackendAuto = "auto"
	// WiFiBackendHwsim: mac80211_hwsim radios with hostapd and
	// wpa_supplicant (the kernel's 802.11 stack), served by the medium.
	WiFiBackendHwsim = "hwsim"
	// WiFiBackendEngine: emuctl's medium carries Ethernet frames between
	// veth pairs as 802.11 data frames (airtime, contention, errors,
	// retries); no management plane: stations are associated from the
	// start.
	WiFiBackendEngine = "engine"
)

// WiFiMedium is the lab's wireless medium: emuctl's model of airtime,
// contention and frame errors serving the lab's mac80211_hwsim radios
// (Enabled), or hwsim's own instant medium (not Enabled).
type WiFiMedium struct {
	Enabled bool `json:"enabled"`
	// Backend is the backend asked for: auto, hwsim or engine;
	// BackendPos is "file:line:col" of wifi.backend (empty: defaulted).
	Backend    string `json:"backend"`
	BackendPos string `json:"backend_pos,omitempty"`
	// RetryLimit is the attempts per unicast data frame at a fixed or
	// engine-chosen rate (0: 11, mac80211_hwsim's max_rate_tries).
	RetryLimit int `json:"retry_limit,omitempty"`
	// QueueLimit bounds each radio's backlog per access category (0: 128).
	QueueLimit int `json:"queue_limit,omitempty"`
	// Explicit: the file has wifi: {medium: ...}; otherwise the default
	// (on; also for labs with multi-link radios, whose links each get a
	// channel timeline of their own).
	Explicit bool `json:"explicit,omitempty"`
	// Why says why a defaulted medium is off.
	Why string `json:"why,omitempty"`
	// PathLoss is "logdistance" (Exponent, RefLossDB at RefDistM),
	// "friis" or "itu-indoor".
	PathLoss  string  `json:"path_loss"`
	Exponent  float64 `json:"exponent"`
	RefLossDB float64 `json:"ref_loss_db"`
	RefDistM  float64 `json:"ref_distance_m"`
	// NoiseFigureDB is the receivers' noise figure.
	NoiseFigureDB float64 `json:"noise_figure_db"`
	// AMPDU aggregates queued QoS data frames into A-MPDUs (airtime).
	AMPDU bool   `json:"ampdu"`
	Seed  uint64 `json:"seed"`
	// Pairs override the link between two Wi-Fi nodes.
	Pairs []WiFiPair `json:"pairs,omitempty"`
	// Pos is "file:line:col" of wifi.medium (or empty), for messages.
	Pos string `json:"pos,omitempty"`
}

// WiFiDaemons are the hostapd and wpa_supplicant a lab runs, when its file
// names them (wifi: {hostapd: PATH, wpa_supplicant: PATH}), ahead of the
// EMUCTL_HOSTAPD / EMUCTL_WPA_SUPPLICANT environment and PATH: for
// example an 802.11be-enabled hostapd for multi-link access points, which
// no Debian package provides. Paths are as written (relative ones are
// taken from the directory emuctl runs in); the runtime checks them.
type WiFiDaemons struct {
	Hostapd          string `json:"hostapd,omitempty"`
	HostapdPos       string `json:"hostapd_pos,omitempty"`
	WpaSupplicant    string `json:"wpa_supplicant,omitempty"`
	WpaSupplicantPos string `json:"wpa_supplicant_pos,omitempty"`
}

// WiFiPair fixes the SNR between two nodes, or adds loss to their path.
type WiFiPair struct {
	A      string   `json:"a"`
	B      string   `json:"b"`
	SNRdB  *float64 `json:"snr_db,omitempty"`
	LossDB *float64 `json:"loss_db,omitempty"`
}

// IsAP reports whether the node is a Wi-Fi access point.
func (n *Node) IsAP() bool { return n.AP != nil }

// IsStation reports whether the node is a Wi-Fi station.
func (n *Node) IsStation() bool { return n.Station != nil }

// AdhocStation reports whether the node is a station of an ad hoc network
// (no access point, no wireless hop to one).
func (n *Node) AdhocStation() bool { return n.Station != nil && n.Station.Adhoc != "" }

// DisplayKind is the kind as written in files: ap and station for Wi-Fi
// nodes, else the resolved kind.
func (n *Node) DisplayKind() string {
	switch {
	case n.AP != nil:
		return "ap"
	case n.Station != nil:
		return "station"
	}
	return string(n.Kind)
}

// HasWiFi reports whether the Spec has any Wi-Fi node.
func (s *Spec) HasWiFi() bool {
	for i := range s.Nodes {
		if s.Nodes[i].AP != nil || s.Nodes[i].Station != nil {
			return true
		}
	}
	return false
}
