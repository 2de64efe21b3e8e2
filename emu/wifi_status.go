package emu

import (
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/emuctl/emuctl/wifi/model"
	"golang.org/x/sys/unix"
)

// mediumNodes turns a medium snapshot into per-node views.
func mediumNodes(ms *wifi.MediumStats) map[string]*MediumNode {
	out := map[string]*MediumNode{}
	for node, rs := range ms.Radios {
		mn := &MediumNode{RadioStats: rs, Position: ms.Positions[node]}
		if ms.Uptime > 0 {
			mn.AirtimeShare = float64(rs.Airtime) / float64(ms.Uptime)
		}
		if n := rs.Errors + rs.Delivered; n > 0 {
			mn.PER = float64(rs.Errors) / float64(n)
		}
		for _, l := range ms.Links {
			if l.From == node {
				mn.Links = append(mn.Links, l)
			}
		}
		for _, f := range slices.Sorted(maps.Keys(ms.PerLink[node])) {
			ls := ms.PerLink[node][f]
			c := MediumChannel{FreqMHz: f, RadioStats: ls}
			if ms.Uptime > 0 {
				c.AirtimeShare = float64(ls.Airtime) / float64(ms.Uptime)
			}
			if n := ls.Errors + ls.Delivered; n > 0 {
				c.PER = float64(ls.Errors) / float64(n)
			}
			mn.Channels = append(mn.Channels, c)
		}
		out[node] = mn
	}
	return out
}

// WiFiStatus reads the live Wi-Fi state of every AP and station of a lab.
func WiFiStatus(st *State) []WiFiNodeStatus {
	if st.Spec == nil || !st.Spec.HasWiFi() {
		return nil
	}
	var media map[string]*MediumNode
	var ms *wifi.MediumStats
	if st.Medium != nil {
		if m, err := LabMediumStats(st.Lab); err == nil {
			ms, media = m, mediumNodes(m)
		}
	}
	if st.Medium != nil && st.Medium.Backend == WiFiEngine {
		return engineStatus(st, media, ms)
	}
	var out []WiFiNodeStatus
	kept := map[string]DaemonStatus{}
	if ds, err := Daemons(st.Lab); err == nil {
		for _, d := range ds {
			kept[d.Node+"/"+d.What] = d
		}
	}
	for i := range st.Spec.Nodes {
		n := &st.Spec.Nodes[i]
		if n.AP == nil && n.Station == nil {
			continue
		}
		s := WiFiNodeStatus{Node: n.Name, Role: n.DisplayKind(), Medium: media[n.Name]}
		key := "wpa_state"
		if n.AP != nil {
			s.Iface, s.Daemon, key = n.AP.Iface, "hostapd", "state"
		} else {
			s.Iface, s.Daemon = n.Station.Iface, "wpa_supplicant"
		}
		adhoc := n.AdhocStation() && st.Spec.Adhoc(n.Station.Adhoc) != nil
		if adhoc {
			adhocRow(st, n, &s) // wifi_adhoc.go: no daemon to ask
		} else {
			if d, ok := kept[n.Name+"/"+s.Daemon]; ok {
				s.Starts, s.GaveUp = d.Starts, d.GaveUp
			}
			if out2, err := wifi.CtrlRequest(ctrlPath(st.Lab, n), "STATUS", time.Second); err == nil {
				s.Running = true // the daemon answers on its control socket
				kv := wifi.ParseStatus(out2)
				s.State, s.SSID = kv[key], kv["ssid"]
				if n.Station != nil {
					s.BSSID = kv["bssid"]
				} else {
					s.BSSID = kv["bssid[0]"]
				}
				if s.SSID == "" {
					s.SSID = kv["ssid[0]"]
				}
			}
		}
		fd, err := unix.Open(filepath.Join(NetnsDir, topo.Namespace(st.Lab, n.Name)), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			s.Error = err.Error()
			out = append(out, s)
			continue
		}
		if info, err := wifi.InterfaceInfo(fd, s.Iface); err == nil {
			s.FreqMHz, s.Width = info.FreqMHz, info.Width
			for _, l := range info.Links { // multi-link: every active link
				s.MLOLinks = append(s.MLOLinks, fmt.Sprintf("link %d %s %d MHz %s", l.ID, l.MAC, l.FreqMHz, l.Width))
			}
			s.MLD = mldStatus(st, n, info, s.Running)
			if m := s.MLD; m != nil && n.AP != nil {
				// the row's state is link 0's (its socket answers for
				// STATUS): an AP MLD is enabled while any link is up
				for _, l := range m.Links {
					if l.State == "up" {
						s.State = "ENABLED"
					}
				}
			}
		} else {
			s.Error = err.Error()
		}
		if peers, err := wifi.Stations(fd, s.Iface); err == nil {
			s.Peers = peers
		} else if s.Error == "" {
			s.Error = err.Error()
		}
		if adhoc {
			adhocRowJoined(st, n, &s, fd, ms) // wifi_adhoc.go
		}
		unix.Close(fd)
		if n.Station != nil && len(n.Station.ESS) > 1 {
			// wpa_supplicant roams: its AP is the one whose BSSID it has
			s.Network = n.Station.ESS
			for _, name := range n.Station.ESS {
				if a := st.Spec.Node(name); a != nil && a.AP != nil {
					if ifc := findIface(a, a.AP.Iface); ifc != nil && strings.EqualFold(ifc.MAC, s.BSSID) {
						s.AP = name
					}
				}
			}
			if ms != nil {
				for _, h := range ms.Handovers {
					if h.Station == n.Name {
						s.Handovers = append(s.Handovers, h)
					}
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// engineStatus is the Wi-Fi state of an engine-backed lab: its BSSs as
// the file set them up (stations are associated for the lab's lifetime,
// with the access point the medium has them on: a station of a network of
// several roams) and the medium's view of every radio.
func engineStatus(st *State, media map[string]*MediumNode, ms *wifi.MediumStats) []WiFiNodeStatus {
	var out []WiFiNodeStatus
	for i := range st.Spec.Nodes {
		n := &st.Spec.Nodes[i]
		if n.AP == nil && n.Station == nil {
			continue
		}
		s := WiFiNodeStatus{Node: n.Name, Role: n.DisplayKind(), Daemon: "none (engine backend)", Running: media != nil, Medium: media[n.Name]}
		ap := n.AP
		if n.AP != nil {
			s.Iface, s.State = n.AP.Iface, "ENABLED"
		} else if a := st.Spec.Adhoc(n.Station.Adhoc); a != nil {
			// an ad hoc member: in its network from up to down (no
			// beacons, no joining); its peers are the medium's links
			s.Iface, s.State, s.Adhoc = n.Station.Iface, "IBSS", a.Name
			s.SSID, s.FreqMHz, s.Width = a.Name, a.Channel.FreqMHz, fmt.Sprintf("%d MHz", a.Channel.Width)
			bssid := wifi.AdhocBSSID(adhocNumber(st.Spec, a.Name))
			s.BSSID = net.HardwareAddr(bssid[:]).String()
			if media == nil {
				s.State, s.Error = "", "the lab's medium is not answering"
			}
			s.AdhocPeers = adhocPeers(st.Spec, n, a, ms)
			out = append(out, s)
			continue
		} else {
			s.Iface, s.State = n.Station.Iface, "COMPLETED"
			s.AP, s.Network = n.Station.AP, n.Station.ESS
			if ms != nil && ms.Assoc[n.Name] != "" {
				s.AP = ms.Assoc[n.Name]
			}
			if ms != nil {
				for _, h := range ms.Handovers {
					if h.Station == n.Name {
						s.Handovers = append(s.Handovers, h)
					}
				}
			}
			ap = st.Spec.Node(s.AP).AP
		}
		if media == nil {
			s.State, s.Error = "", "the lab's medium is not answering"
		}
		s.SSID, s.FreqMHz, s.Width = ap.SSID, ap.Channel.FreqMHz, fmt.Sprintf("%d MHz", ap.Channel.Width)
		apNode := n
		if n.Station != nil {
			apNode = st.Spec.Node(s.AP)
		}
		if ifc := findIface(apNode, ap.Iface); ifc != nil {
			s.BSSID = ifc.MAC
		}
		out = append(out, s)
	}
	return out
}

// mldStatus is the multi-link view of an AP MLD or station MLD (nil for
// other nodes).
func mldStatus(st *State, n *topo.Node, info wifi.IfInfo, running bool) *MLDStatus {
	var ap *topo.WiFiAP
	switch {
	case n.AP != nil && n.AP.MLO():
		ap = n.AP
	case n.Station != nil && n.Station.MLO:
		ap = st.Spec.Node(n.Station.AP).AP
	default:
		return nil
	}
	m := &MLDStatus{Addr: info.MAC}
	have := map[int]wifi.IfLink{}
	for _, l := range info.Links {
		have[l.ID] = l
	}
	var sta []wifi.MLOLink
	if n.Station != nil && running {
		if r, err := wifi.CtrlRequest(ctrlPath(st.Lab, n), "MLO_STATUS", time.Second); err == nil {
			sta = wifi.ParseMLOStatus(r)
		}
		if r, err := wifi.CtrlRequest(ctrlPath(st.Lab, n), "STATUS", time.Second); err == nil {
			m.APAddr = wifi.ParseStatus(r)["ap_mld_addr"]
		}
	}
	dir := filepath.Join(wifiDir(st.Lab, n.Name), "ctrl")
	for id, c := range ap.Links {
		l := MLDLink{ID: id, FreqMHz: c.FreqMHz, Width: fmt.Sprintf("%d MHz", c.Width), State: "absent"}
		if k, ok := have[id]; ok {
			l.Addr, l.State = k.MAC, "up"
			if k.FreqMHz != 0 {
				l.FreqMHz, l.Width = k.FreqMHz, k.Width
			}
		}
		if n.AP != nil {
			l.BSSID = l.Addr
			if p, err := wifi.FindCtrlSocket(filepath.Join(dir, fmt.Sprintf("link%d", id)), n.AP.Iface, id); err == nil && running {
				if r, err := wifi.CtrlRequest(p, "STATUS", time.Second); err == nil {
					kv := wifi.ParseStatus(r)
					if s := kv["state"]; s != "ENABLED" && l.State == "up" {
						l.State = strings.ToLower(s)
					}
					l.Stations, _ = strconv.Atoi(kv["num_sta[0]"])
					if l.BSSID == "" {
						l.BSSID = kv["bssid[0]"]
					}
				}
			}
		} else {
			for _, x := range sta {
				if x.ID == id {
					l.BSSID, l.Assoc = x.APAddr, x.FreqMHz != 0
				}
			}
			if l.BSSID == "" && l.State == "up" {
				l.State = "up (not associated)"
			}
		}
		m.Links = append(m.Links, l)
	}
	return m
}

// adhocPeers lists member n's peers in its network from the medium's
// live links (positions as they are now); nil without a medium.
func adhocPeers(spec *topo.Spec, n *topo.Node, a *topo.WiFiAdhoc, ms *wifi.MediumStats) []AdhocPeer {
	if ms == nil {
		return nil
	}
	var fixed *model.Rate
	if n.Station.Rate != "" {
		if r, err := topo.MediumRate(a.Mode, a.Channel, n.Station.Rate); err == nil {
			fixed = &r
		}
	}
	var out []AdhocPeer
	for _, l := range ms.Links {
		if l.From != n.Name || !slices.Contains(a.Members, l.To) {
			continue
		}
		// in range: its preamble is detected (ns-3's threshold model,
		// as the medium judges every frame)
		in := model.Link{RxDBm: l.RxDBm, SNRdB: l.SNRdB, OK: l.Detect}.Detected(model.DefaultDetectDBm, model.DefaultDetectSNRdB)
		p := AdhocPeer{Node: l.To, RxDBm: l.RxDBm, SNRdB: l.SNRdB, InRange: in}
		switch {
		case !in:
		case fixed != nil:
			p.Rate = fixed.String()
		default:
			p.Rate = wifi.IdealRate(a.Mode, topo.ModelBand(a.Channel.Band), a.Channel.Width, l.SNRdB).String()
		}
		out = append(out, p)
	}
	return out
}
