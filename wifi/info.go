package wifi

import (
	"fmt"
	"net"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// What nl80211 says about wireless interfaces and the peers they are
// associated with, read in a node's network namespace: for `emuctl show`
// style reports and for tests to check what hostapd/wpa_supplicant set up.

// Interface types as IfInfo.Type names them.
const (
	IfTypeAP      = "AP"
	IfTypeStation = "station"
)

// IfInfo is a wireless interface as NL80211_CMD_GET_INTERFACE describes it.
type IfInfo struct {
	Index  int    `json:"ifindex"` // ifindex in its namespace
	Name   string `json:"name"`
	IfType uint32 `json:"iftype"` // NL80211_IFTYPE_*
	// Type names IfType: IfTypeAP, IfTypeStation, "monitor", "IBSS", ...
	Type  string `json:"type"`
	Wiphy uint32 `json:"wiphy"` // the radio's wiphy index
	// MAC is the interface's address, lower-case with colons.
	MAC string `json:"mac"`
	// SSID is the AP's SSID (an access point's own; a station's while
	// associated). Empty otherwise.
	SSID string `json:"ssid,omitempty"`
	// FreqMHz is the primary channel's frequency, 0 when the interface has
	// no channel (a station not associated, an interface down, an MLD whose
	// channels are per link). WidthMHz is the channel width (20 for
	// 20 MHz without HT, NoHT then set; 160 for 80+80); CenterFreq1MHz the
	// centre of the whole width.
	FreqMHz        int  `json:"freq_mhz,omitempty"`
	WidthMHz       int  `json:"width_mhz,omitempty"`
	NoHT           bool `json:"no_ht,omitempty"`
	CenterFreq1MHz int  `json:"center_freq1_mhz,omitempty"`
	// Width is the width for people: "20 MHz (no HT)", "40 MHz",
	// "80+80 MHz", ...; empty without a channel.
	Width string `json:"width,omitempty"`
	// TxPowerMBm is the transmit power in mBm (100 × dBm) the driver
	// reports (mac80211 works in whole dBm); HasTxPower says whether it
	// reported one.
	TxPowerMBm int  `json:"txpower_mbm,omitempty"`
	HasTxPower bool `json:"-"`
	// Links are the links of a multi-link (MLD) interface.
	Links []IfLink `json:"links,omitempty"`
}

// IfLink is one link of a multi-link interface.
type IfLink struct {
	ID             int    `json:"id"`
	MAC            string `json:"mac"`
	FreqMHz        int    `json:"freq_mhz,omitempty"`
	WidthMHz       int    `json:"width_mhz,omitempty"`
	NoHT           bool   `json:"no_ht,omitempty"`
	CenterFreq1MHz int    `json:"center_freq1_mhz,omitempty"`
	Width          string `json:"width,omitempty"`
}

// StationInfo is a peer of a wireless interface, from
// NL80211_CMD_GET_STATION: on an access point each associated station, on
// a station the AP it is associated with (MAC is then the BSSID).
type StationInfo struct {
	// MAC is the peer's address, lower-case with colons.
	MAC string `json:"mac"`
	// MLDAddr is the peer's MLD address and LinkID the link it associated
	// on, for multi-link peers (on kernels that report them); empty and -1
	// otherwise.
	MLDAddr string `json:"mld_addr,omitempty"`
	LinkID  int    `json:"link_id"`
	// SignalDBm is the signal of the last frame received from the peer;
	// SignalAvgDBm its average. 0 when not reported.
	SignalDBm    int `json:"signal_dbm"`
	SignalAvgDBm int `json:"signal_avg_dbm,omitempty"`
	// TxBitrateKbps is the bitrate (kbit/s) of the last frame sent to the
	// peer, RxBitrateKbps of the last one received: TxRate.Kbps and
	// RxRate.Kbps, which also say how (MCS, streams, width).
	TxBitrateKbps int64    `json:"tx_bitrate_kbps"`
	RxBitrateKbps int64    `json:"rx_bitrate_kbps"`
	TxRate        RateInfo `json:"tx_rate"`
	RxRate        RateInfo `json:"rx_rate"`
	// Connected is how long the peer has been associated (whole seconds);
	// Inactive since when nothing was heard from it.
	Connected time.Duration `json:"connected_ns"`
	Inactive  time.Duration `json:"inactive_ns"`
	// Byte and packet counters (64-bit byte counters where the kernel
	// reports them).
	RxBytes   uint64 `json:"rx_bytes"`
	TxBytes   uint64 `json:"tx_bytes"`
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	TxRetries uint64 `json:"tx_retries,omitempty"`
	// PlinkState is a mesh peer's link state ("ESTAB" once peered;
	// NL80211_PLINK_*), empty for peers outside a mesh.
	PlinkState string `json:"plink_state,omitempty"`
	TxFailed   uint64 `json:"tx_failed,omitempty"`
	// Links are per-link figures of a multi-link peer, on kernels that
	// report them (NL80211_ATTR_MLO_LINKS); each has LinkID and MAC set.
	Links []StationInfo `json:"links,omitempty"`
}

// RateInfo is a transmit or receive rate (nested NL80211_RATE_INFO_*).
type RateInfo struct {
	// Kbps is the bitrate in kbit/s (NL80211_RATE_INFO_BITRATE32, or the
	// 16-bit BITRATE on old kernels); 0 when not reported.
	Kbps int64 `json:"kbps"`
	// Mode is "legacy", "HT", "VHT", "HE" or "EHT"; MCS and NSS apply to
	// the latter (NSS derived from the MCS index for HT).
	Mode     string `json:"mode,omitempty"`
	MCS      int    `json:"mcs,omitempty"`
	NSS      int    `json:"nss,omitempty"`
	WidthMHz int    `json:"width_mhz,omitempty"`
	ShortGI  bool   `json:"short_gi,omitempty"`
}

// Interfaces lists the wireless interfaces in the namespace netnsFd (0:
// the calling thread's).
func Interfaces(netnsFd int) ([]IfInfo, error) {
	c, fam, err := dialNL80211(netnsFd)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return interfaces(c, fam)
}

func interfaces(c *genetlink.Conn, fam genetlink.Family) ([]IfInfo, error) {
	msgs, err := c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: unix.NL80211_CMD_GET_INTERFACE, Version: fam.Version},
	}, fam.ID, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, fmt.Errorf("nl80211: list interfaces: %w", err)
	}
	out := make([]IfInfo, 0, len(msgs))
	for _, m := range msgs {
		inf, err := decodeInterface(m.Data)
		if err != nil {
			return nil, fmt.Errorf("nl80211: interface: %w", err)
		}
		out = append(out, inf)
	}
	return out, nil
}

// InterfaceInfo describes the wireless interface ifname in the namespace
// netnsFd: type, SSID, channel, MAC, wiphy, transmit power. An error
// wrapping ENODEV when there is no such wireless interface there.
func InterfaceInfo(netnsFd int, ifname string) (IfInfo, error) {
	c, fam, err := dialNL80211(netnsFd)
	if err != nil {
		return IfInfo{}, err
	}
	defer c.Close()
	return interfaceByName(c, fam, ifname)
}

func interfaceByName(c *genetlink.Conn, fam genetlink.Family, ifname string) (IfInfo, error) {
	ifs, err := interfaces(c, fam)
	if err != nil {
		return IfInfo{}, err
	}
	for _, inf := range ifs {
		if inf.Name == ifname {
			return inf, nil
		}
	}
	return IfInfo{}, fmt.Errorf("nl80211: no wireless interface %q in that namespace: %w", ifname, unix.ENODEV)
}

// Stations lists the peers of the wireless interface ifname in the
// namespace netnsFd (NL80211_CMD_GET_STATION dump): the stations
// associated with an access point, or the AP a station is associated with.
func Stations(netnsFd int, ifname string) ([]StationInfo, error) {
	msgs, err := ifaceDump(netnsFd, ifname, unix.NL80211_CMD_GET_STATION, "stations")
	if err != nil {
		return nil, err
	}
	out := make([]StationInfo, 0, len(msgs))
	for _, m := range msgs {
		st, err := decodeStation(m.Data)
		if err != nil {
			return nil, fmt.Errorf("nl80211: station of %s: %w", ifname, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// onIface runs fn with nl80211 open in the namespace netnsFd and the
// wireless interface ifname found there.
func onIface(netnsFd int, ifname string, fn func(c *genetlink.Conn, fam genetlink.Family, inf IfInfo) error) error {
	c, fam, err := dialNL80211(netnsFd)
	if err != nil {
		return err
	}
	defer c.Close()
	inf, err := interfaceByName(c, fam, ifname)
	if err != nil {
		return err
	}
	return fn(c, fam, inf)
}

// ifaceDump runs the nl80211 dump cmd (what names it in errors) on the
// wireless interface ifname in the namespace netnsFd.
func ifaceDump(netnsFd int, ifname string, cmd uint8, what string) (msgs []genetlink.Message, err error) {
	err = onIface(netnsFd, ifname, func(c *genetlink.Conn, fam genetlink.Family, inf IfInfo) error {
		ae := netlink.NewAttributeEncoder()
		ae.Uint32(unix.NL80211_ATTR_IFINDEX, uint32(inf.Index))
		b, err := ae.Encode()
		if err != nil {
			return err
		}
		msgs, err = c.Execute(genetlink.Message{
			Header: genetlink.Header{Command: cmd, Version: fam.Version},
			Data:   b,
		}, fam.ID, netlink.Request|netlink.Dump)
		if err != nil {
			return fmt.Errorf("nl80211: %s of %s: %w", what, ifname, err)
		}
		return nil
	})
	return msgs, err
}

// ifaceDo sends the request build makes for the wireless interface ifname
// in the namespace netnsFd (build returns command 0: nothing to send).
func ifaceDo(netnsFd int, ifname string, build func(IfInfo) (cmd uint8, data []byte, err error)) error {
	return onIface(netnsFd, ifname, func(c *genetlink.Conn, fam genetlink.Family, inf IfInfo) error {
		cmd, b, err := build(inf)
		if err != nil || cmd == 0 {
			return err
		}
		_, err = c.Execute(genetlink.Message{
			Header: genetlink.Header{Command: cmd, Version: fam.Version},
			Data:   b,
		}, fam.ID, netlink.Request|netlink.Acknowledge)
		return err
	})
}

// SetTxPower fixes the transmit power of the wireless interface ifname in
// the namespace netnsFd at mBm (100 × dBm; mac80211 rounds down to whole
// dBm, and regulatory limits still cap it), like `iw dev IF set txpower
// fixed MBM`: NL80211_CMD_SET_WIPHY with NL80211_TX_POWER_FIXED.
func SetTxPower(netnsFd int, ifname string, mBm int) error {
	return setTxPower(netnsFd, ifname, unix.NL80211_TX_POWER_FIXED, mBm)
}

// SetTxPowerAuto returns the interface's transmit power to the driver's
// choice (NL80211_TX_POWER_AUTOMATIC).
func SetTxPowerAuto(netnsFd int, ifname string) error {
	return setTxPower(netnsFd, ifname, unix.NL80211_TX_POWER_AUTOMATIC, 0)
}

func setTxPower(netnsFd int, ifname string, setting uint32, mBm int) error {
	return onIface(netnsFd, ifname, func(c *genetlink.Conn, fam genetlink.Family, inf IfInfo) error {
		b, err := encodeTxPower(inf.Index, setting, mBm)
		if err != nil {
			return err
		}
		_, err = c.Execute(genetlink.Message{
			Header: genetlink.Header{Command: unix.NL80211_CMD_SET_WIPHY, Version: fam.Version},
			Data:   b,
		}, fam.ID, netlink.Request|netlink.Acknowledge)
		if err != nil {
			if setting == unix.NL80211_TX_POWER_AUTOMATIC {
				return fmt.Errorf("nl80211: %s: automatic transmit power: %w", ifname, err)
			}
			return fmt.Errorf("nl80211: %s: transmit power %d mBm: %w", ifname, mBm, err)
		}
		return nil
	})
}

func encodeTxPower(ifindex int, setting uint32, mBm int) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(unix.NL80211_ATTR_IFINDEX, uint32(ifindex))
	ae.Uint32(unix.NL80211_ATTR_WIPHY_TX_POWER_SETTING, setting)
	if setting != unix.NL80211_TX_POWER_AUTOMATIC {
		// the kernel reads the level as a signed 32-bit number
		ae.Uint32(unix.NL80211_ATTR_WIPHY_TX_POWER_LEVEL, uint32(int32(mBm)))
	}
	return ae.Encode()
}

// NewInterface creates a managed-mode (station) interface called name on
// the wiphy, which must be in the namespace netnsFd; the interface appears
// there. hostapd switches it to AP mode itself. Radios created with
// RadioConfig.NoVif have no interface until one is added, which lets the
// interface have the topology's name (like `iw phy X interface add NAME
// type managed`).
func NewInterface(netnsFd int, wiphy uint32, name string) error {
	if err := checkIfName("interface", name); err != nil {
		return err
	}
	c, fam, err := dialNL80211(netnsFd)
	if err != nil {
		return err
	}
	defer c.Close()
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(unix.NL80211_ATTR_WIPHY, wiphy)
	ae.String(unix.NL80211_ATTR_IFNAME, name)
	ae.Uint32(unix.NL80211_ATTR_IFTYPE, unix.NL80211_IFTYPE_STATION)
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: unix.NL80211_CMD_NEW_INTERFACE, Version: fam.Version},
		Data:   b,
	}, fam.ID, netlink.Request|netlink.Acknowledge)
	if err != nil {
		return fmt.Errorf("nl80211: new interface %s on wiphy %d: %w", name, wiphy, err)
	}
	return nil
}

func decodeInterface(b []byte) (IfInfo, error) {
	var inf IfInfo
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return inf, err
	}
	var ch chanDef
	for ad.Next() {
		switch ad.Type() {
		case unix.NL80211_ATTR_IFINDEX:
			inf.Index = int(ad.Uint32())
		case unix.NL80211_ATTR_IFNAME:
			inf.Name = ad.String()
		case unix.NL80211_ATTR_IFTYPE:
			inf.IfType = ad.Uint32()
		case unix.NL80211_ATTR_WIPHY:
			inf.Wiphy = ad.Uint32()
		case unix.NL80211_ATTR_MAC:
			inf.MAC = hwAddr(ad.Bytes())
		case unix.NL80211_ATTR_SSID:
			inf.SSID = string(ad.Bytes())
		case unix.NL80211_ATTR_WIPHY_TX_POWER_LEVEL:
			inf.TxPowerMBm, inf.HasTxPower = int(ad.Int32()), true
		case unix.NL80211_ATTR_MLO_LINKS:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					nad.Nested(func(lad *netlink.AttributeDecoder) error {
						l := IfLink{ID: -1}
						var lch chanDef
						for lad.Next() {
							switch lad.Type() {
							case unix.NL80211_ATTR_MLO_LINK_ID:
								l.ID = int(lad.Uint8())
							case unix.NL80211_ATTR_MAC:
								l.MAC = hwAddr(lad.Bytes())
							default:
								lch.take(lad)
							}
						}
						l.FreqMHz, l.WidthMHz, l.NoHT, l.CenterFreq1MHz, l.Width = lch.freq, lch.widthMHz(), lch.noHT(), lch.center1, lch.widthText()
						inf.Links = append(inf.Links, l)
						return nil
					})
				}
				return nil
			})
		default:
			ch.take(ad)
		}
	}
	if err := ad.Err(); err != nil {
		return inf, err
	}
	inf.Type = ifTypeName(inf.IfType)
	inf.FreqMHz, inf.WidthMHz, inf.NoHT, inf.CenterFreq1MHz, inf.Width = ch.freq, ch.widthMHz(), ch.noHT(), ch.center1, ch.widthText()
	return inf, nil
}

// chanDef collects the channel attributes nl80211_send_chandef writes.
type chanDef struct {
	freq, center1 int
	width         uint32
	haveWidth     bool
}

func (c *chanDef) take(ad *netlink.AttributeDecoder) {
	switch ad.Type() {
	case unix.NL80211_ATTR_WIPHY_FREQ:
		c.freq = int(ad.Uint32())
	case unix.NL80211_ATTR_CHANNEL_WIDTH:
		c.width, c.haveWidth = ad.Uint32(), true
	case unix.NL80211_ATTR_CENTER_FREQ1:
		c.center1 = int(ad.Uint32())
	}
}

func (c *chanDef) noHT() bool { return c.haveWidth && c.width == unix.NL80211_CHAN_WIDTH_20_NOHT }

func (c *chanDef) widthMHz() int {
	if !c.haveWidth {
		return 0
	}
	return chanWidthMHz(c.width)
}

func (c *chanDef) widthText() string {
	switch {
	case !c.haveWidth:
		return ""
	case c.width == unix.NL80211_CHAN_WIDTH_20_NOHT:
		return "20 MHz (no HT)"
	case c.width == unix.NL80211_CHAN_WIDTH_80P80:
		return "80+80 MHz"
	case chanWidthMHz(c.width) == 0:
		return fmt.Sprintf("width %d", c.width)
	}
	return fmt.Sprintf("%d MHz", chanWidthMHz(c.width))
}

// chanWidthMHz converts enum nl80211_chan_width to MHz (80+80 counts 160).
func chanWidthMHz(w uint32) int {
	switch w {
	case unix.NL80211_CHAN_WIDTH_20_NOHT, unix.NL80211_CHAN_WIDTH_20:
		return 20
	case unix.NL80211_CHAN_WIDTH_40:
		return 40
	case unix.NL80211_CHAN_WIDTH_80:
		return 80
	case unix.NL80211_CHAN_WIDTH_80P80, unix.NL80211_CHAN_WIDTH_160:
		return 160
	case unix.NL80211_CHAN_WIDTH_320:
		return 320
	case unix.NL80211_CHAN_WIDTH_5:
		return 5
	case unix.NL80211_CHAN_WIDTH_10:
		return 10
	case unix.NL80211_CHAN_WIDTH_1:
		return 1
	case unix.NL80211_CHAN_WIDTH_2:
		return 2
	case unix.NL80211_CHAN_WIDTH_4:
		return 4
	case unix.NL80211_CHAN_WIDTH_8:
		return 8
	case unix.NL80211_CHAN_WIDTH_16:
		return 16
	}
	return 0
}

func ifTypeName(t uint32) string {
	switch t {
	case unix.NL80211_IFTYPE_AP:
		return IfTypeAP
	case unix.NL80211_IFTYPE_STATION:
		return IfTypeStation
	case unix.NL80211_IFTYPE_ADHOC:
		return "IBSS"
	case unix.NL80211_IFTYPE_AP_VLAN:
		return "AP/VLAN"
	case unix.NL80211_IFTYPE_WDS:
		return "WDS"
	case unix.NL80211_IFTYPE_MONITOR:
		return "monitor"
	case unix.NL80211_IFTYPE_MESH_POINT:
		return "mesh point"
	case unix.NL80211_IFTYPE_P2P_CLIENT:
		return "P2P-client"
	case unix.NL80211_IFTYPE_P2P_GO:
		return "P2P-GO"
	case unix.NL80211_IFTYPE_P2P_DEVICE:
		return "P2P-device"
	case unix.NL80211_IFTYPE_OCB:
		return "OCB"
	case unix.NL80211_IFTYPE_NAN:
		return "NAN"
	}
	return fmt.Sprintf("iftype %d", t)
}

func decodeStation(b []byte) (StationInfo, error) {
	st := StationInfo{LinkID: -1}
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return st, err
	}
	for ad.Next() {
		switch ad.Type() {
		case unix.NL80211_ATTR_MAC:
			st.MAC = hwAddr(ad.Bytes())
		case unix.NL80211_ATTR_MLD_ADDR:
			st.MLDAddr = hwAddr(ad.Bytes())
		case unix.NL80211_ATTR_MLO_LINK_ID:
			st.LinkID = int(ad.Uint8())
		case unix.NL80211_ATTR_STA_INFO:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				decodeStaInfo(nad, &st)
				return nil
			})
		case unix.NL80211_ATTR_MLO_LINKS:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					nad.Nested(func(lad *netlink.AttributeDecoder) error {
						l := StationInfo{LinkID: -1}
						for lad.Next() {
							switch lad.Type() {
							case unix.NL80211_ATTR_MLO_LINK_ID:
								l.LinkID = int(lad.Uint8())
							case unix.NL80211_ATTR_MAC:
								l.MAC = hwAddr(lad.Bytes())
							case unix.NL80211_ATTR_STA_INFO:
								lad.Nested(func(sad *netlink.AttributeDecoder) error {
									decodeStaInfo(sad, &l)
									return nil
								})
							}
						}
						st.Links = append(st.Links, l)
						return nil
					})
				}
				return nil
			})
		}
	}
	return st, ad.Err()
}

// decodeStaInfo reads nested NL80211_STA_INFO_* attributes into st.
func decodeStaInfo(ad *netlink.AttributeDecoder, st *StationInfo) {
	var rx32, tx32 uint64
	var have64rx, have64tx bool
	for ad.Next() {
		switch ad.Type() {
		case unix.NL80211_STA_INFO_INACTIVE_TIME:
			st.Inactive = time.Duration(ad.Uint32()) * time.Millisecond
		case unix.NL80211_STA_INFO_CONNECTED_TIME:
			st.Connected = time.Duration(ad.Uint32()) * time.Second
		case unix.NL80211_STA_INFO_RX_BYTES:
			rx32 = uint64(ad.Uint32())
		case unix.NL80211_STA_INFO_TX_BYTES:
			tx32 = uint64(ad.Uint32())
		case unix.NL80211_STA_INFO_RX_BYTES64:
			st.RxBytes, have64rx = ad.Uint64(), true
		case unix.NL80211_STA_INFO_TX_BYTES64:
			st.TxBytes, have64tx = ad.Uint64(), true
		case unix.NL80211_STA_INFO_RX_PACKETS:
			st.RxPackets = uint64(ad.Uint32())
		case unix.NL80211_STA_INFO_TX_PACKETS:
			st.TxPackets = uint64(ad.Uint32())
		case unix.NL80211_STA_INFO_TX_RETRIES:
			st.TxRetries = uint64(ad.Uint32())
		case unix.NL80211_STA_INFO_TX_FAILED:
			st.TxFailed = uint64(ad.Uint32())
		case unix.NL80211_STA_INFO_PLINK_STATE:
			st.PlinkState = plinkState(ad.Uint8())
		case unix.NL80211_STA_INFO_SIGNAL:
			st.SignalDBm = int(ad.Int8())
		case unix.NL80211_STA_INFO_SIGNAL_AVG:
			st.SignalAvgDBm = int(ad.Int8())
		case unix.NL80211_STA_INFO_TX_BITRATE:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				st.TxRate = decodeRate(nad)
				return nil
			})
		case unix.NL80211_STA_INFO_RX_BITRATE:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				st.RxRate = decodeRate(nad)
				return nil
			})
		}
	}
	if !have64rx {
		st.RxBytes = rx32
	}
	if !have64tx {
		st.TxBytes = tx32
	}
	st.TxBitrateKbps, st.RxBitrateKbps = st.TxRate.Kbps, st.RxRate.Kbps
}

// decodeRate reads nested NL80211_RATE_INFO_* attributes.
func decodeRate(ad *netlink.AttributeDecoder) RateInfo {
	r := RateInfo{Mode: "legacy", WidthMHz: 20}
	var bitrate16, bitrate32 uint32
	var have32 bool
	for ad.Next() {
		switch ad.Type() {
		case unix.NL80211_RATE_INFO_BITRATE:
			bitrate16 = uint32(ad.Uint16())
		case unix.NL80211_RATE_INFO_BITRATE32:
			bitrate32, have32 = ad.Uint32(), true
		case unix.NL80211_RATE_INFO_MCS:
			r.Mode, r.MCS = "HT", int(ad.Uint8())
			r.NSS = r.MCS/8 + 1
		case unix.NL80211_RATE_INFO_VHT_MCS:
			r.Mode, r.MCS = "VHT", int(ad.Uint8())
		case unix.NL80211_RATE_INFO_VHT_NSS:
			r.NSS = int(ad.Uint8())
		case unix.NL80211_RATE_INFO_HE_MCS:
			r.Mode, r.MCS = "HE", int(ad.Uint8())
		case unix.NL80211_RATE_INFO_HE_NSS:
			r.NSS = int(ad.Uint8())
		case unix.NL80211_RATE_INFO_EHT_MCS:
			r.Mode, r.MCS = "EHT", int(ad.Uint8())
		case unix.NL80211_RATE_INFO_EHT_NSS:
			r.NSS = int(ad.Uint8())
		case unix.NL80211_RATE_INFO_SHORT_GI:
			r.ShortGI = true
		case unix.NL80211_RATE_INFO_5_MHZ_WIDTH:
			r.WidthMHz = 5
		case unix.NL80211_RATE_INFO_10_MHZ_WIDTH:
			r.WidthMHz = 10
		case unix.NL80211_RATE_INFO_40_MHZ_WIDTH:
			r.WidthMHz = 40
		case unix.NL80211_RATE_INFO_80_MHZ_WIDTH:
			r.WidthMHz = 80
		case unix.NL80211_RATE_INFO_80P80_MHZ_WIDTH, unix.NL80211_RATE_INFO_160_MHZ_WIDTH:
			r.WidthMHz = 160
		case unix.NL80211_RATE_INFO_320_MHZ_WIDTH:
			r.WidthMHz = 320
		}
	}
	if have32 {
		r.Kbps = int64(bitrate32) * 100
	} else {
		r.Kbps = int64(bitrate16) * 100
	}
	return r
}

// hwAddr renders a MAC address attribute, lower-case with colons.
func hwAddr(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return net.HardwareAddr(b).String()
}
