package wifi

import (
	"sort"
	"strconv"
	"strings"
)

// Multi-link (MLO) state as the daemons report it. Debian's kernels have
// no mac80211 debugfs (valid_links, active_links and hwsim's per-link
// files, which hostap's own tests read), so links are observed through
// nl80211 (IfInfo.Links: each link's id, address and channel) and the
// daemons' control sockets: wpa_supplicant's MLO_STATUS and hostapd's
// per-link STATUS.

// MLOLink is one link of a station MLD's association, from
// wpa_supplicant's MLO_STATUS.
type MLOLink struct {
	ID int `json:"link_id"`
	// FreqMHz is the link's frequency as wpa_supplicant knows it; 2.11
	// reports 0 for every link but the one it associated on (nl80211's
	// IfInfo.Links has them all).
	FreqMHz int `json:"freq_mhz"`
	// APAddr is the AP's address on this link (the link's BSSID), StaAddr
	// the station's own link address.
	APAddr  string `json:"ap_link_addr"`
	StaAddr string `json:"sta_link_addr"`
}

// ParseMLOStatus parses wpa_supplicant's MLO_STATUS reply (a block of
// link_id=, freq=, ap_link_addr=, sta_link_addr= lines per link), ordered
// by link id. An empty reply (no multi-link association) gives none.
func ParseMLOStatus(reply string) []MLOLink {
	var out []MLOLink
	var cur *MLOLink
	for _, line := range strings.Split(reply, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		if k == "link_id" {
			id, err := strconv.Atoi(v)
			if err != nil {
				cur = nil
				continue
			}
			out = append(out, MLOLink{ID: id})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			continue
		}
		switch k {
		case "freq":
			cur.FreqMHz, _ = strconv.Atoi(v)
		case "ap_link_addr":
			cur.APAddr = strings.ToLower(v)
		case "sta_link_addr":
			cur.StaAddr = strings.ToLower(v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// PeerLinks lists the link addresses hostapd's STA reply gives for a
// station MLD (peer_addr[<link id>]=...), by link id; none for a
// single-link station.
func PeerLinks(sta map[string]string) map[int]string {
	out := map[int]string{}
	for k, v := range sta {
		if rest, ok := strings.CutPrefix(k, "peer_addr["); ok {
			if id, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); err == nil {
				out[id] = strings.ToLower(v)
			}
		}
	}
	return out
}
