// Package wifi is emuctl's Wi-Fi plumbing: what the runtime needs to run
// access points (hostapd) and stations (wpa_supplicant) on mac80211_hwsim
// radios, one radio per node.
//
//   - hwsim.go, hwsim_nl80211.go, hwsim_probe.go: a minimal client for the
//     mac80211_hwsim generic netlink family (create and delete simulated
//     radios at run time, optionally MLO-capable; ProbeHwsim,
//     ProbeHwsimMLO) and the nl80211 calls that move a radio (wiphy) into a
//     node's network namespace and add an interface with a chosen name.
//   - conf.go: hostapd and wpa_supplicant configuration files generated
//     from the resolved topology (topo.WiFiAP, topo.WiFiStation), one file
//     per link for multi-link (MLO) access points.
//   - tools.go: which hostapd/wpa_supplicant run (EMUCTL_HOSTAPD,
//     EMUCTL_WPA_SUPPLICANT or the topology's wifi: settings, else PATH;
//     a binary in an unpacked distribution tree through that tree's
//     loader), their versions and build options (802.11ax/be, MLO, SAE,
//     LINK_REMOVE), and what a given AP or station would lack.
//   - ctrl.go: the daemons' control socket (STATUS and friends); mlo.go:
//     multi-link state from wpa_supplicant's MLO_STATUS and hostapd's STA
//     replies (Debian's kernels have no mac80211 debugfs).
//   - info.go: what nl80211 reports about an interface (type, SSID,
//     channel, width, power) and its peers (signal, rates, counters), and
//     the transmit power setting.
//   - The lab's medium (the model of wifi/model in real time), in two
//     backends sharing medium_core.go (the model under a lock, links
//     changed at run time, counters, lateness, the ppoll wait) and
//     medium_tap.go (a capture that never blocks the medium's thread,
//     written by aircap.go as pcapng with radiotap headers):
//     medium_nl.go and medium_run.go serve hwsim radios (REGISTER, FRAME,
//     TX_INFO_FRAME); ether.go and ether_sock.go carry the Ethernet frames
//     of veth ports as 802.11 data frames on kernels without hwsim (the
//     engine backend), with ideal.go's rate choice (ns-3's
//     IdealWifiManager). medium_spec.go turns a topology into the medium's
//     configuration.
//
// Radios only hear each other when they were created from the same network
// namespace (the same hwsim "netgroup"), so create every radio of a lab from
// one namespace and then move each wiphy into its node with SetWiphyNetns.
// DEL_RADIO sees only radios whose wiphy is in the socket's namespace: dial
// the namespace the radio is in to delete it.
//
// The package owns radios it creates and nothing else: it must not delete
// radios by pattern, load kernel modules, start or stop hostapd and
// wpa_supplicant (the runtime does, with the files this package writes), or
// log; it returns errors, wrapping ErrNotSupported when the running kernel
// lacks a feature and ErrToolMissing when the installed daemons do.
//
// Kernels without mac80211_hwsim (such as emuctl's build/CI kernel) run
// Wi-Fi labs on the engine backend; the hwsim path is covered by the
// kernel lab: `make test-kernel` runs this package's tests in
// a VM with Debian's kernel, where TestLabWiFiModes associates a station
// with an access point in modes g, n, ac and ax. Access points on 5 or
// 6 GHz need wireless-regdb (regulatory.db) there as on any machine.
package wifi
