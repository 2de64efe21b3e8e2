package wifi

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/topo"
)

// Configuration files for hostapd (access points) and wpa_supplicant
// (stations), generated from the resolved topology.
//
// The generated files use only options hostapd/wpa_supplicant 2.10 know,
// except for 802.11be (ieee80211be, eht_*) and multi-link (mld_ap), which
// need 2.11 built with CONFIG_IEEE80211BE: check the installed tools with
// ProbeTools and Tools.Check before starting them.
//
// Notes:
//   - Before starting on a 40 MHz (or wider) channel hostapd scans for
//     overlapping networks (20/40 MHz coexistence; seconds under emulation)
//     and may fall back to 20 MHz, or swap primary and secondary channel,
//     when another network, emulated ones included, overlaps on 2.4 GHz or
//     has its primary on this AP's secondary channel on 5 GHz. Upstream
//     hostapd has no option to skip that (OpenWrt's noscan is a patch).
//   - country_code with ieee80211d=1 sets the kernel's regulatory domain
//     (global, shared by every radio of the machine); the kernel needs
//     wireless-regdb's regulatory.db for any country other than the world
//     domain, which forbids starting an AP on 5 GHz channels.
//   - WPA3 uses SAE with hash-to-element allowed (sae_pwe=2), or required
//     (sae_pwe=1) on 6 GHz, where it is mandatory, and management frame
//     protection required (ieee80211w=2).

// Values hostapd uses for vht/he/eht_oper_chwidth (enum oper_chan_width).
const (
	operChwidthUseHT = 0 // 20 or 40 MHz, from ht_capab
	operChwidth80    = 1
	operChwidth160   = 2
	operChwidth320   = 9 // EHT only
)

// HostapdFile is one configuration file of an access point. hostapd runs an
// access point from all of its files at once: `hostapd FILE...`, in the AP's
// network namespace.
type HostapdFile struct {
	// Name is the file name to write it under (in a directory of the
	// caller's choice): hostapd.conf, or hostapd-link<N>.conf for link N of
	// a multi-link AP.
	Name string
	// LinkID is the MLD link id of the file's BSS, -1 for a single-link AP.
	LinkID int
	// CtrlDir is the file's ctrl_interface directory. hostapd creates it
	// and its control socket in it: FindCtrlSocket(CtrlDir, ap.Iface,
	// LinkID) finds the socket's path once hostapd has started.
	CtrlDir string
	// Data is the file's content.
	Data []byte
}

// HostapdConfig returns the hostapd.conf of a single-link access point:
// its wireless interface ap.Iface driven through nl80211, its control
// socket in ctrlDir (ctrlDir/<ap.Iface>), SSID, regulatory country, band
// and channel, the mode's 802.11n/ac/ax/be settings with the channel width,
// the bridge the interface joins (ap.Bridge, when set) and the security.
// Multi-link APs have one file per link: use HostapdConfigs.
func HostapdConfig(ap *topo.WiFiAP, ctrlDir string) ([]byte, error) {
	if ap != nil && ap.MLO() {
		return nil, fmt.Errorf("hostapd config for %s: a multi-link access point (%d links) needs one file per link: use HostapdConfigs", apName(ap), len(ap.Links))
	}
	files, err := HostapdConfigs(ap, ctrlDir)
	if err != nil {
		return nil, err
	}
	return files[0].Data, nil
}

// HostapdConfigs returns the configuration files of an access point: one
// (hostapd.conf, LinkID -1) for a single-link AP; for a multi-link AP
// (len(ap.Links) ≥ 2, mode be) one per link, hostapd-link<N>.conf with
// LinkID N in the order of ap.Links, as hostapd ≥ 2.11 runs an AP MLD
// (the same layout as hostap's own tests, tests/hwsim/test_eht.py):
//
//   - every file names the same interface (ap.Iface) and sets mld_ap=1;
//     hostapd joins the BSSs of files with the same interface into one AP
//     MLD, link ids in file order, the first file's interface address being
//     the MLD address; the other links' addresses are derived by hostapd;
//   - each file carries its own link's band, channel and width, and the
//     same SSID and security;
//   - each link has its own control directory, ctrlDir/link<N>: hostapd
//     2.11 names every link's socket after the interface, so the links
//     cannot share one directory (later versions name them
//     <iface>_link<N> and add an MLD-wide socket);
//   - security must be wpa3: wpa_supplicant sets up a multi-link
//     association only with management frame protection and an AKM other
//     than PSK (it drops WPA-PSK, FT-PSK and WPA-PSK-SHA256 from MLD
//     candidates), so an open or WPA2 AP MLD would only ever see
//     single-link clients;
//   - group rekeying is off (wpa_group_rekey=0): 2.11 derives wrong
//     packet numbers for multi-link group keys on rekey (fixed later);
//   - the AP's radio must claim MLO (RadioConfig.MLO, which makes hwsim use
//     channel contexts). Verified in the kernel lab (Debian's 6.12 kernel,
//     hostapd 2.12 built with CONFIG_IEEE80211BE, wpa_supplicant 2.11):
//     2.4 + 2.4 GHz and 2.4 + 5 GHz APs with two links, and a station MLD
//     associated on both.
//
// Start hostapd with every file, in order: `hostapd hostapd-link0.conf
// hostapd-link1.conf ...`.
//
// Impossible settings (an unknown mode, a channel that is not one of the
// band's or does not fit the width, a passphrase WPA rejects, open or WPA2
// on 6 GHz, a socket path longer than a Unix socket allows, ...) are
// errors naming the AP.
func HostapdConfigs(ap *topo.WiFiAP, ctrlDir string) ([]HostapdFile, error) {
	if err := checkAP(ap, ctrlDir); err != nil {
		return nil, err
	}
	if !ap.MLO() {
		var b confBuf
		b.header("hostapd", fmt.Sprintf("access point %s", apName(ap)))
		writeAPBSS(&b, ap, ap.Channel, ctrlDir, false)
		return []HostapdFile{{Name: "hostapd.conf", LinkID: -1, CtrlDir: ctrlDir, Data: b.Bytes()}}, nil
	}
	files := make([]HostapdFile, len(ap.Links))
	for i, link := range ap.Links {
		dir := filepath.Join(ctrlDir, fmt.Sprintf("link%d", i))
		var b confBuf
		b.header("hostapd", fmt.Sprintf("access point %s, link %d of %d (%s GHz channel %d, %d MHz); start hostapd with every link's file", apName(ap), i, len(ap.Links), link.Band, link.Channel, link.Width))
		writeAPBSS(&b, ap, link, dir, true)
		files[i] = HostapdFile{Name: fmt.Sprintf("hostapd-link%d.conf", i), LinkID: i, CtrlDir: dir, Data: b.Bytes()}
	}
	return files, nil
}

// APFreqs lists the frequencies (MHz) an access point operates on: its
// channel's, or every link's for a multi-link AP. A station's
// WpaSupplicantConfig takes these (a station that is not a multi-link
// device needs only the first).
func APFreqs(ap *topo.WiFiAP) []int {
	if ap.MLO() {
		out := make([]int, len(ap.Links))
		for i, l := range ap.Links {
			out[i] = l.FreqMHz
		}
		return out
	}
	return []int{ap.Channel.FreqMHz}
}

// writeAPBSS writes one BSS of an AP on channel ch.
func writeAPBSS(b *confBuf, ap *topo.WiFiAP, ch topo.WiFiChannel, ctrlDir string, mld bool) {
	b.kv("interface", ap.Iface)
	b.kv("driver", "nl80211")
	b.kv("ctrl_interface", ctrlDir)
	if ap.Bridge != "" {
		b.kv("bridge", ap.Bridge)
	}
	b.blank()
	if isPrintableASCII(ap.SSID) {
		b.kv("ssid", ap.SSID)
	} else {
		b.kv("ssid2", hex.EncodeToString([]byte(ap.SSID)))
	}
	b.kv("country_code", ap.Country)
	b.kv("ieee80211d", "1")
	switch {
	case ap.Mode == topo.WiFiModeB:
		b.kv("hw_mode", "b")
		if ap.ShortPreamble {
			b.kv("preamble", "1")
		}
	case ch.Band == topo.Band24:
		b.kv("hw_mode", "g")
	default:
		b.kv("hw_mode", "a")
	}
	if ch.Band == topo.Band6 {
		b.kv("op_class", strconv.Itoa(opClass6(ch.Width)))
	}
	b.kv("channel", strconv.Itoa(ch.Channel))
	b.kv("auth_algs", "1")

	mode := ap.Mode
	legacy := mode == topo.WiFiModeA || mode == topo.WiFiModeB || mode == topo.WiFiModeG
	ht := !legacy && ch.Band != topo.Band6
	vht := (mode == topo.WiFiModeAC || mode == topo.WiFiModeAX || mode == topo.WiFiModeBE) && ch.Band == topo.Band5
	he := mode == topo.WiFiModeAX || mode == topo.WiFiModeBE
	eht := mode == topo.WiFiModeBE
	if !legacy {
		b.kv("wmm_enabled", "1")
	}
	if ht {
		b.blank()
		b.kv("ieee80211n", "1")
		if ch.Width >= 40 {
			if htSecondaryAbove(ch) {
				b.kv("ht_capab", "[HT40+]")
			} else {
				b.kv("ht_capab", "[HT40-]")
			}
		}
	}
	// Centre channels and widths of the VHT/HE/EHT operation elements.
	// 320 MHz exists for EHT only: HE (and VHT) then describe the 160 MHz
	// half that holds the primary channel.
	opw, seg0 := operWidth(ch.Width), ch.CenterChannel
	if ch.Width == 320 {
		opw = operChwidth160
		if ch.Channel < ch.CenterChannel {
			seg0 = ch.CenterChannel - 16
		} else {
			seg0 = ch.CenterChannel + 16
		}
	}
	if vht {
		b.blank()
		b.kv("ieee80211ac", "1")
		if ch.Width == 160 {
			b.kv("vht_capab", "[VHT160]")
		}
		b.kv("vht_oper_chwidth", strconv.Itoa(opw))
		b.kv("vht_oper_centr_freq_seg0_idx", strconv.Itoa(seg0))
	}
	if he {
		b.blank()
		b.kv("ieee80211ax", "1")
		if ch.Band != topo.Band24 {
			// On 6 GHz hostapd takes the width from op_class and ignores
			// he_oper_chwidth; it is written for readers.
			b.kv("he_oper_chwidth", strconv.Itoa(opw))
			b.kv("he_oper_centr_freq_seg0_idx", strconv.Itoa(seg0))
		}
	}
	if eht {
		b.blank()
		b.kv("ieee80211be", "1")
		if ch.Band != topo.Band24 {
			b.kv("eht_oper_chwidth", strconv.Itoa(operWidth(ch.Width)))
			b.kv("eht_oper_centr_freq_seg0_idx", strconv.Itoa(ch.CenterChannel))
		}
	}
	if mld {
		b.kv("mld_ap", "1")
	}

	b.blank()
	switch ap.Security {
	case topo.WiFiOpen:
		b.comment("open network: no encryption")
	case topo.WiFiWPA2:
		b.kv("wpa", "2")
		b.kv("wpa_key_mgmt", "WPA-PSK")
		b.kv("rsn_pairwise", "CCMP")
		b.kv("wpa_passphrase", ap.Passphrase)
	case topo.WiFiWPA3:
		b.kv("wpa", "2")
		b.kv("wpa_key_mgmt", "SAE")
		b.kv("rsn_pairwise", "CCMP")
		b.kv("ieee80211w", "2")
		b.kv("sae_pwe", strconv.Itoa(saePWE(apOn6(ap))))
		// SAE takes its password from wpa_passphrase when sae_password is
		// unset; sae_password would read "|mac=", "|id=", ... in the
		// passphrase as options.
		b.kv("wpa_passphrase", ap.Passphrase)
	}
	if mld {
		b.kv("wpa_group_rekey", "0")
	}
}

// WpaSupplicantConfig returns the wpa_supplicant.conf of a station: its
// control socket in ctrlDir (ctrlDir/<sta.Iface>) and one network, the
// station's AP's (others: one more block each, for a station of several
// networks): SSID and security (key_mgmt NONE, WPA-PSK, or SAE with
// management frame protection required). freqs (MHz) are the AP's
// frequencies (APFreqs): scanning and network selection are limited to
// them (scan_freq, freq_list), so the station associates after scanning a
// channel or two instead of the whole spectrum. Empty freqs scan
// everything. For WPA3, sae_pwe allows hash-to-element, or requires it
// when a frequency is on 6 GHz.
//
// Start it as `wpa_supplicant -D nl80211 -i <sta.Iface> -c FILE` in the
// station's namespace. A multi-link station (sta.MLO) needs wpa_supplicant
// ≥ 2.11 and a radio that claims MLO, and every link's frequency in freqs;
// wpa_supplicant sets up every link the AP MLD offers. It scans passively
// (passive_scan=1): with active scans mac80211_hwsim's 30 ms dwell was too
// short for the AP to answer under emulation, and the station then
// associated on one link only (2 of ~65 associations in the kernel lab;
// with passive scans 16 of 16 used both).
func WpaSupplicantConfig(sta *topo.WiFiStation, ctrlDir string, freqs []int, others ...StaNetwork) ([]byte, error) {
	if err := checkStation(sta, ctrlDir, freqs); err != nil {
		return nil, err
	}
	for _, o := range others {
		if err := checkSSID(o.SSID); err != nil {
			return nil, fmt.Errorf("wpa_supplicant config for station %s: another network: %v", staName(sta), err)
		}
		if err := checkSecurity(o.Security, o.Passphrase); err != nil {
			return nil, fmt.Errorf("wpa_supplicant config for station %s: network %q: %v", staName(sta), o.SSID, err)
		}
	}
	on6 := slices.ContainsFunc(freqs, is6GHz)
	var b confBuf
	b.header("wpa_supplicant", fmt.Sprintf("station %s joining %q", sta.Iface, sta.SSID))
	b.kv("ctrl_interface", ctrlDir)
	b.kv("update_config", "0")
	if sta.MLO {
		b.kv("passive_scan", "1")
	}
	sae := sta.Security == topo.WiFiWPA3
	for _, o := range others {
		sae = sae || o.Security == topo.WiFiWPA3
	}
	if sae {
		b.kv("sae_pwe", strconv.Itoa(saePWE(on6)))
	}
	nets := append([]StaNetwork{{SSID: sta.SSID, Security: sta.Security, Passphrase: sta.Passphrase}}, others...)
	for _, n := range nets {
		b.blank()
		b.line("network={")
		if isPrintableASCII(n.SSID) {
			b.line("\tssid=" + quote(n.SSID))
		} else {
			b.line("\tssid=" + hex.EncodeToString([]byte(n.SSID)))
		}
		switch n.Security {
		case topo.WiFiOpen:
			b.line("\tkey_mgmt=NONE")
		case topo.WiFiWPA2:
			b.line("\tkey_mgmt=WPA-PSK")
			b.line("\tproto=RSN")
			b.line("\tpairwise=CCMP")
			b.line("\tpsk=" + quote(n.Passphrase))
		case topo.WiFiWPA3:
			b.line("\tkey_mgmt=SAE")
			b.line("\tproto=RSN")
			b.line("\tpairwise=CCMP")
			b.line("\tieee80211w=2")
			b.line("\tsae_password=" + quote(n.Passphrase))
		}
		if len(sta.ESS) > 1 && sta.Roaming != nil {
			// a network of several APs: wpa_supplicant scans in the
			// background and roams as on hardware
			bg := sta.Roaming.Bgscan
			if bg == "" {
				bg = topo.DefaultBgscan
			}
			b.line("\tbgscan=" + quote(bg))
		}
		if len(freqs) > 0 {
			fs := make([]string, len(freqs))
			for i, f := range freqs {
				fs[i] = strconv.Itoa(f)
			}
			list := strings.Join(fs, " ")
			b.line("\tscan_freq=" + list)
			b.line("\tfreq_list=" + list)
		}
		b.line("}")
	}
	return b.Bytes(), nil
}

// StaNetwork is one more network a station may join (a station of several
// networks, ssid: [a, b]): its SSID and security as its access points'.
// wpa_supplicant keeps its network while it hears it and picks among all
// of them by signal when it scans (bgscan) or loses it.
type StaNetwork struct {
	SSID, Security, Passphrase string
}

// checkAP rejects settings hostapd cannot run or that would corrupt its
// configuration file.
func checkAP(ap *topo.WiFiAP, ctrlDir string) error {
	if ap == nil {
		return errors.New("hostapd config: no access point settings (nil)")
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("hostapd config for %s: %s", apName(ap), fmt.Sprintf(format, a...))
	}
	if err := checkIfName("interface", ap.Iface); err != nil {
		return fail("%v", err)
	}
	if ap.Bridge != "" {
		if err := checkIfName("bridge", ap.Bridge); err != nil {
			return fail("%v", err)
		}
	}
	if err := checkSSID(ap.SSID); err != nil {
		return fail("%v", err)
	}
	if len(ap.Country) != 2 || ap.Country[0] < 'A' || ap.Country[0] > 'Z' || ap.Country[1] < 'A' || ap.Country[1] > 'Z' {
		return fail("country %q is not a two-letter ISO 3166-1 code in capitals (such as US or DE)", ap.Country)
	}
	if !slices.Contains(topo.WiFiModes, ap.Mode) {
		return fail("mode %q is not a Wi-Fi mode (modes: %s)", ap.Mode, strings.Join(topo.WiFiModes, ", "))
	}
	if err := checkSecurity(ap.Security, ap.Passphrase); err != nil {
		return fail("%v", err)
	}
	chans := []topo.WiFiChannel{ap.Channel}
	linkID := -1
	if len(ap.Links) == 1 {
		return fail("links lists one link: a multi-link AP needs two or more (a single-link AP leaves links empty)")
	}
	if ap.MLO() {
		if ap.Mode != topo.WiFiModeBE {
			return fail("multi-link operation (links) needs mode be, not %s", ap.Mode)
		}
		if ap.Links[0] != ap.Channel {
			return fail("channel (%s GHz channel %d) is not the first link (%s GHz channel %d)", ap.Channel.Band, ap.Channel.Channel, ap.Links[0].Band, ap.Links[0].Channel)
		}
		if ap.Security != topo.WiFiWPA3 {
			return fail("a multi-link AP needs security wpa3, not %s: stations set up multi-link associations only with SAE and protected management frames", ap.Security)
		}
		if len(ap.Links) > 15 {
			return fail("%d links: an AP MLD has at most 15", len(ap.Links))
		}
		chans = ap.Links
		linkID = len(ap.Links) - 1
	}
	seen := map[int]int{}
	for i, c := range chans {
		what := "channel"
		if ap.MLO() {
			what = fmt.Sprintf("link %d", i)
		}
		if err := checkChannel(ap.Mode, c); err != nil {
			return fail("%s: %v", what, err)
		}
		if j, dup := seen[c.FreqMHz]; dup {
			return fail("%s is on the same channel as link %d (%d MHz): every link needs its own channel", what, j, c.FreqMHz)
		}
		seen[c.FreqMHz] = i
		if c.Band == topo.Band6 && ap.Security != topo.WiFiWPA3 {
			return fail("%s is on 6 GHz, which allows only WPA3 (SAE): security %s cannot run there", what, ap.Security)
		}
	}
	if err := checkCtrlDir(ctrlDir, ap.Iface, linkID, ap.MLO()); err != nil {
		return fail("%v", err)
	}
	return nil
}

// checkChannel re-derives the channel's frequency and centre from the
// topology's channel plan and requires the given ones to agree.
func checkChannel(mode string, c topo.WiFiChannel) error {
	want, msg := topo.ResolveChannel(mode, c.Band, c.Channel, c.Width)
	if msg != "" {
		return errors.New(msg)
	}
	if c.FreqMHz != want.FreqMHz || c.CenterChannel != want.CenterChannel {
		return fmt.Errorf("%s GHz channel %d at %d MHz width has frequency %d MHz and centre channel %d, not %d MHz and %d", c.Band, c.Channel, c.Width, want.FreqMHz, want.CenterChannel, c.FreqMHz, c.CenterChannel)
	}
	return nil
}

func checkStation(sta *topo.WiFiStation, ctrlDir string, freqs []int) error {
	if sta == nil {
		return errors.New("wpa_supplicant config: no station settings (nil)")
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("wpa_supplicant config for station %s: %s", staName(sta), fmt.Sprintf(format, a...))
	}
	if err := checkIfName("interface", sta.Iface); err != nil {
		return fail("%v", err)
	}
	if err := checkSSID(sta.SSID); err != nil {
		return fail("%v", err)
	}
	if err := checkSecurity(sta.Security, sta.Passphrase); err != nil {
		return fail("%v", err)
	}
	seen := map[int]bool{}
	for _, f := range freqs {
		if !validFreq(f) {
			return fail("frequency %d MHz is not a Wi-Fi channel's (2412-2484, 5160-5885 or 5955-7115 MHz)", f)
		}
		if seen[f] {
			return fail("frequency %d MHz is listed twice", f)
		}
		seen[f] = true
		if is6GHz(f) && sta.Security != topo.WiFiWPA3 {
			return fail("%d MHz is on 6 GHz, which allows only WPA3 (SAE): security %s cannot associate there", f, sta.Security)
		}
	}
	if sta.MLO && len(freqs) == 1 {
		return fail("a multi-link station needs every link's frequency, got only %d MHz", freqs[0])
	}
	if err := checkCtrlDir(ctrlDir, sta.Iface, -1, false); err != nil {
		return fail("%v", err)
	}
	return nil
}

func checkSecurity(sec, pass string) error {
	switch sec {
	case topo.WiFiOpen:
		if pass != "" {
			return errors.New("a passphrase is set but security is open")
		}
		return nil
	case topo.WiFiWPA2, topo.WiFiWPA3:
		if len(pass) < 8 || len(pass) > 63 {
			return fmt.Errorf("security %s needs a passphrase of 8-63 characters, this one has %d", sec, len(pass))
		}
		if !isPrintableASCII(pass) {
			return errors.New("the passphrase must be printable ASCII without double quotes")
		}
		return nil
	}
	return fmt.Errorf("security %q is not one of open, wpa2, wpa3", sec)
}

func checkSSID(ssid string) error {
	if ssid == "" || len(ssid) > 32 {
		return fmt.Errorf("SSID %q has %d bytes: 802.11 allows 1-32", ssid, len(ssid))
	}
	return nil
}

func checkIfName(what, name string) error {
	if name == "" || len(name) > 15 || strings.ContainsAny(name, "/ \t\r\n:") {
		return fmt.Errorf("%s name %q is not a valid Linux interface name (1-15 characters, no '/', ':' or spaces)", what, name)
	}
	return nil
}

// sunPathMax is the longest path a Unix socket address holds (108 bytes
// with the terminating NUL).
const sunPathMax = 107

// checkCtrlDir checks that the control sockets hostapd/wpa_supplicant
// will create under dir fit a Unix socket address: <dir>/<iface>, or for
// an AP MLD <dir>/link<N>/<iface>_link<N> for N up to lastLink.
func checkCtrlDir(dir, iface string, lastLink int, mld bool) error {
	if dir == "" || strings.ContainsAny(dir, "\r\n") {
		return fmt.Errorf("control directory %q must be a non-empty path on one line", dir)
	}
	longest := filepath.Join(dir, iface)
	if mld {
		longest = filepath.Join(dir, fmt.Sprintf("link%d", lastLink), fmt.Sprintf("%s_link%d", iface, lastLink))
	}
	if len(longest) > sunPathMax {
		return fmt.Errorf("control socket path %s has %d bytes, more than a Unix socket address holds (%d): use a shorter control directory", longest, len(longest), sunPathMax)
	}
	return nil
}

// htSecondaryAbove reports whether the 40 MHz pair holding the primary
// channel has its secondary channel above (HT40+) or below (HT40-).
func htSecondaryAbove(c topo.WiFiChannel) bool {
	switch c.Band {
	case topo.Band24:
		return c.CenterChannel > c.Channel
	case topo.Band5:
		// 40 MHz pairs start at 36, 44, ..., 140 and at 149, 157, ...
		base := 36
		if c.Channel >= 149 {
			base = 149
		}
		return ((c.Channel-base)/4)%2 == 0
	}
	return ((c.Channel-1)/4)%2 == 0 // 6 GHz: pairs start at 1, 9, 17, ...
}

// operWidth is hostapd's oper_chwidth for a channel width.
func operWidth(width int) int {
	switch width {
	case 80:
		return operChwidth80
	case 160:
		return operChwidth160
	case 320:
		return operChwidth320
	}
	return operChwidthUseHT
}

// opClass6 is the global operating class of a 6 GHz channel width (IEEE
// 802.11 Annex E, Table E-4): on 6 GHz it is what tells hostapd the width.
func opClass6(width int) int {
	switch width {
	case 40:
		return 132
	case 80:
		return 133
	case 160:
		return 134
	case 320:
		return 137
	}
	return 131
}

// saePWE is the sae_pwe value: hash-to-element only on 6 GHz (required
// there), else both hunting-and-pecking and hash-to-element.
func saePWE(on6 bool) int {
	if on6 {
		return 1
	}
	return 2
}

func apOn6(ap *topo.WiFiAP) bool {
	if ap.Channel.Band == topo.Band6 {
		return true
	}
	for _, l := range ap.Links {
		if l.Band == topo.Band6 {
			return true
		}
	}
	return false
}

func is6GHz(f int) bool { return f >= 5955 && f <= 7115 }

func validFreq(f int) bool {
	return (f >= 2412 && f <= 2484) || (f >= 5160 && f <= 5885) || is6GHz(f)
}

// isPrintableASCII reports whether s can be written between double quotes
// (wpa_supplicant, which takes everything up to the last quote literally,
// without escapes) or raw to the end of a line (hostapd).
func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' {
			return false
		}
	}
	return true
}

// quote puts s between double quotes as wpa_supplicant reads strings.
func quote(s string) string { return `"` + s + `"` }

func staName(sta *topo.WiFiStation) string {
	if sta.Pos != "" {
		return fmt.Sprintf("%s (%s)", sta.Iface, sta.Pos)
	}
	return sta.Iface
}

func apName(ap *topo.WiFiAP) string {
	if ap.Pos != "" {
		return fmt.Sprintf("%q (%s)", ap.SSID, ap.Pos)
	}
	return strconv.Quote(ap.SSID)
}

// confBuf builds a key=value configuration file.
type confBuf struct{ bytes.Buffer }

func (b *confBuf) header(tool, what string) {
	what = strings.NewReplacer("\n", " ", "\r", " ").Replace(what)
	fmt.Fprintf(b, "# %s configuration written by emuctl: %s\n", tool, what)
}
func (b *confBuf) kv(k, v string)   { fmt.Fprintf(b, "%s=%s\n", k, v) }
func (b *confBuf) line(s string)    { b.WriteString(s + "\n") }
func (b *confBuf) comment(s string) { b.WriteString("# " + s + "\n") }
func (b *confBuf) blank()           { b.WriteString("\n") }
