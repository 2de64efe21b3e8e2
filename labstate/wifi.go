package labstate

import (
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/emuctl/emuctl/wifi/model"
)

// MediumState is a lab's Wi-Fi medium as recorded: the namespace whose
// netgroup it serves, its radios (known by permanent address before they
// exist) and the topology's medium settings.
type MediumState struct {
	// Backend is hwsim (the medium serves mac80211_hwsim radios) or
	// engine (it carries the frames of veth ports: emu/wifi_engine.go).
	Backend string             `json:"backend,omitempty"`
	Netns   string             `json:"netns"`
	Radios  []wifi.MediumRadio `json:"radios"`
	Spec    topo.WiFiMedium    `json:"spec"`
}

// WiFiHop is the shaping of one station's wireless hop: Up on the
// station's egress, Down on its AP's egress towards it (zero: unshaped).
type WiFiHop struct {
	Station string `json:"station"`
	AP      string `json:"ap"`
	Up      tc.Dir `json:"up"`
	Down    tc.Dir `json:"down"`
}

// WiFiNodeStatus is what inspect shows of a Wi-Fi node, read live from the
// kernel (nl80211) and the node's daemon.
type WiFiNodeStatus struct {
	Node    string `json:"node"`
	Role    string `json:"role"` // ap or station
	Iface   string `json:"iface"`
	Daemon  string `json:"daemon"`  // hostapd or wpa_supplicant
	Running bool   `json:"running"` // the daemon answers on its control socket
	// Starts counts the daemon's processes the lab's supervisor started
	// (1 + restarts); GaveUp says it stopped restarting it (5 exits within
	// a minute: see the daemon's log).
	Starts int  `json:"starts,omitempty"`
	GaveUp bool `json:"gave_up,omitempty"`
	// State is hostapd's state or wpa_supplicant's wpa_state.
	State string `json:"state,omitempty"`
	SSID  string `json:"ssid,omitempty"`
	// BSSID is the AP's address (stations: the AP they are associated with).
	BSSID   string `json:"bssid,omitempty"`
	FreqMHz int    `json:"freq_mhz,omitempty"`
	Width   string `json:"width,omitempty"`
	// Stations (APs) or the AP (stations) as nl80211 reports them.
	Peers []wifi.StationInfo `json:"peers,omitempty"`
	// MLOLinks lists the active links of a multi-link association.
	MLOLinks []string `json:"mlo_links,omitempty"`
	// MLD is the node's multi-link device: a multi-link AP, or an mlo:
	// true station; nil otherwise.
	MLD *MLDStatus `json:"mld,omitempty"`
	// Medium is the node's radio as the lab's medium sees it.
	Medium *MediumNode `json:"medium,omitempty"`
	// AP is a station's access point now, Network (ESS) the access
	// points it roams between and Handovers its handovers so far (engine
	// backend: the medium's).
	AP string `json:"ap,omitempty"`
	// Adhoc is an ad hoc member's network (engine backend; no AP), and
	// AdhocPeers how it reaches each other member, live from the medium.
	Adhoc      string      `json:"adhoc,omitempty"`
	AdhocPeers []AdhocPeer `json:"adhoc_peers,omitempty"`
	// Mesh: Adhoc is an 802.11s mesh (hwsim backend), and MeshPaths the
	// member's path table (HWMP: destination, next hop, metric, hops).
	Mesh      bool            `json:"mesh,omitempty"`
	MeshPaths []wifi.MeshPath `json:"mesh_paths,omitempty"`
	Network   []string        `json:"network,omitempty"`
	Handovers []wifi.Handover `json:"handovers,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// MLDStatus is a multi-link device (an AP MLD or a station MLD) and each
// of its links, read live: nl80211 (the links the kernel has, their
// addresses and channels) and the daemon (hostapd's per-link STATUS,
// wpa_supplicant's MLO_STATUS).
type MLDStatus struct {
	// Addr is the node's MLD address (its interface's); APAddr, for a
	// station, the AP MLD's (empty while not associated).
	Addr   string `json:"addr"`
	APAddr string `json:"ap_addr,omitempty"`
	// Links are the AP's links as the file lists them (link id = index),
	// or for a station those of its AP; a link the kernel does not have
	// (any more) is listed with State "absent".
	Links []MLDLink `json:"links"`
}

// MLDLink is one link of an MLD.
type MLDLink struct {
	ID int `json:"id"`
	// FreqMHz and Width are the link's channel (nl80211; the file's while
	// the link is absent).
	FreqMHz int    `json:"freq_mhz"`
	Width   string `json:"width,omitempty"`
	// BSSID is the AP's address on this link; Addr this node's own link
	// address (an AP's equals BSSID).
	BSSID string `json:"bssid,omitempty"`
	Addr  string `json:"addr,omitempty"`
	// State: "up" (the kernel has the link and, on an AP, hostapd reports
	// it ENABLED; on a station, it is part of the association), "absent"
	// (configured, but the kernel has no such link: removed, or a station
	// that did not set it up), or hostapd's state of the link.
	State string `json:"state"`
	// Stations on an AP's link (hostapd's num_sta).
	Stations int `json:"stations,omitempty"`
	// Assoc marks a station's association link: the link it
	// authenticated and associated on (wpa_supplicant's MLO_STATUS gives
	// a frequency for it only).
	Assoc bool `json:"assoc,omitempty"`
}

// MediumNode is one radio on the lab's medium: its counters, what they
// mean for the node, where it is and what its links look like.
type MediumNode struct {
	model.RadioStats
	// AirtimeShare is the share of the medium's time the radio's own
	// PPDUs took.
	AirtimeShare float64 `json:"airtime_share"`
	// PER is the share of its MPDU attempts that reached the air without a
	// collision and were lost to the channel.
	PER      float64         `json:"per"`
	Position [3]float64      `json:"position"`
	Links    []wifi.LinkInfo `json:"links,omitempty"` // from this radio to each other one
	// Channels: a multi-link radio's counters per channel it used (each
	// link has its own channel access on the medium), by frequency.
	Channels []MediumChannel `json:"channels,omitempty"`
}

// MediumChannel is one link of a multi-link radio on the medium.
type MediumChannel struct {
	FreqMHz int `json:"freq_mhz"`
	model.RadioStats
	AirtimeShare float64 `json:"airtime_share"`
	PER          float64 `json:"per"`
}

// AdhocPeer is another member of an ad hoc network as one member's radio
// reaches it: the SNR (and power) of its frames there, whether they are
// detected at all (out of range: no frame arrives, nothing relays), and
// the rate its unicast data goes at (fixed, or the ideal rate for the SNR).
type AdhocPeer struct {
	Node    string  `json:"node"`
	RxDBm   float64 `json:"rx_dbm"`
	SNRdB   float64 `json:"snr_db"`
	InRange bool    `json:"in_range"`
	Rate    string  `json:"rate,omitempty"`
}
