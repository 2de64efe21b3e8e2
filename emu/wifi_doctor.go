package emu

// The Wi-Fi part of `emuctl doctor`.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
)

// wifiBackends is the Wi-Fi part of `emuctl doctor`: what runs APs and
// stations here, which modes the installed daemons can do, and whether
// multi-link (MLO) can work, naming what is missing.
func wifiBackends(hwsim bool) []Backend {
	t := wifi.ProbeTools()
	desc := func(x wifi.Tool) string {
		if x.Path == "" || x.Err != nil && x.Version == "" {
			if x.Err != nil {
				return x.Name + ": " + x.Err.Error()
			}
			return x.Name + ": not found"
		}
		var modes []string
		modes = append(modes, "g", "n")
		if x.VHT || x.Name == "wpa_supplicant" {
			modes = append(modes, "ac")
		}
		if x.HE {
			modes = append(modes, "ax")
		}
		if x.EHT {
			modes = append(modes, "be")
		}
		sec := "open, wpa2"
		if x.SAE {
			sec += ", wpa3"
		}
		s := fmt.Sprintf("%s %s (%s", x.Name, x.Version, x.Path)
		if x.Source != "" && x.Source != "PATH" {
			s += ", from " + x.Source
		}
		if len(x.Loader) > 0 {
			s += ", started through its tree's loader " + x.Loader[0]
		}
		s += ")"
		if x.Name == "hostapd" {
			s += "; modes " + strings.Join(modes, "/")
		}
		s += "; security " + sec
		switch {
		case x.MLO && x.Name == "hostapd":
			s += "; multi-link (AP MLD)"
			if x.LinkRemove {
				s += " with LINK_REMOVE (a link can be taken down at run time)"
			} else {
				s += " without LINK_REMOVE (CONFIG_TESTING_OPTIONS: no run-time link removal)"
			}
		case x.MLO:
			s += "; multi-link (station MLD)"
		case x.MLD:
			s += "; multi-link code, refused: hostapd < 2.12 crashes when a station MLD reconnects"
		default:
			s += "; no multi-link"
		}
		return s
	}
	if !hwsim {
		return []Backend{{"Wi-Fi (kind: ap / station)", "engine: emuctl's medium carries the nodes' Ethernet frames between veth pairs as 802.11 data frames (airtime, EDCA contention, collisions, retries, SNR-based errors from ns-3's Yans model, A-MPDU; fixed or ideal rates)",
			"no mac80211_hwsim in this kernel (`modprobe mac80211_hwsim radios=0` where the kernel has it: then hwsim radios, hostapd and wpa_supplicant); the engine has no management plane (stations are associated from the start; no beacons, scanning, authentication or minstrel) and no multi-link"},
			{"Wi-Fi medium (wifi: {medium: ...})", "emuctl's medium in the lab's supervisor (engine backend)", "medium: false (hwsim's instant medium) needs mac80211_hwsim"},
			{"Wi-Fi daemons (hwsim backend only)", "unused here (no mac80211_hwsim)", desc(t.Hostapd) + "; " + desc(t.WpaSupplicant)}}
	}
	out := []Backend{{"Wi-Fi (kind: ap / station)", "mac80211_hwsim radios (one per node, created over generic netlink) + hostapd / wpa_supplicant in the nodes",
		desc(t.Hostapd) + "; " + desc(t.WpaSupplicant)}}
	probe := &topo.WiFiAP{Mode: topo.WiFiModeBE, Security: topo.WiFiWPA3,
		Channel: topo.WiFiChannel{Band: topo.Band24, Channel: 1, Width: 20, FreqMHz: 2412, CenterChannel: 1},
		Links:   []topo.WiFiChannel{{Band: topo.Band24, Channel: 1, Width: 20, FreqMHz: 2412, CenterChannel: 1}, {Band: topo.Band5, Channel: 36, Width: 80, FreqMHz: 5180, CenterChannel: 42}}}
	var why []string
	if err := t.CheckAP(probe); err != nil {
		why = append(why, toolNeeds(err))
	}
	if err := t.CheckStation(&topo.WiFiStation{MLO: true, Security: topo.WiFiWPA3}, probe); err != nil {
		why = append(why, toolNeeds(err))
	}
	if err := wifi.ProbeHwsimMLO(); err != nil {
		why = append(why, err.Error())
	}
	out = append(out, Backend{"Wi-Fi medium (wifi: {medium: ...})", "emuctl's medium in the lab's supervisor (the default): airtime, EDCA contention, collisions, retries, SNR-based errors (ns-3 Yans), A-MPDU; minstrel or fixed rates (rate:)",
		"hwsim's own medium (instant delivery, capacity = CPU) with medium: false; multi-link radios are on it too, each link on its own channel timeline (the radios have one hwsim channel each: the kernel refuses a medium while any radio has more); wifi: {backend: engine} runs the medium over veth pairs instead of radios"})
	if len(why) == 0 {
		out = append(out, Backend{"Wi-Fi multi-link (mode be, links:)", "MLD access points and stations", "hostapd, wpa_supplicant and mac80211_hwsim support it"})
	} else {
		out = append(out, Backend{"Wi-Fi multi-link (mode be, links:)", "unavailable: such labs are refused before anything changes", strings.Join(why, "; ")})
	}
	return out
}

// toolNeeds drops the "<ErrToolMissing>: access point NAME (POS): " prefix
// of a wifi.Tools check error, for messages that name the node themselves.
func toolNeeds(err error) string {
	msg := err.Error()
	if !errors.Is(err, wifi.ErrToolMissing) {
		return msg
	}
	rest := strings.TrimPrefix(msg, wifi.ErrToolMissing.Error()+": ")
	if i := strings.Index(rest, "): "); i >= 0 && strings.Count(rest[:i], " ") <= 3 {
		return rest[i+3:]
	}
	if i := strings.Index(rest, ": "); i >= 0 {
		return rest[i+2:]
	}
	return rest
}
