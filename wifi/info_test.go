package wifi

import (
	"reflect"
	"testing"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

func encode(t *testing.T, fn func(ae *netlink.AttributeEncoder)) []byte {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	fn(ae)
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	macAP  = []byte{0x02, 0x00, 0x00, 0x00, 0x01, 0x00}
	macSTA = []byte{0x02, 0x00, 0x00, 0x00, 0x02, 0x00}
)

func TestDecodeInterface(t *testing.T) {
	b := encode(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(unix.NL80211_ATTR_IFINDEX, 7)
		ae.String(unix.NL80211_ATTR_IFNAME, "ap1-wlan0")
		ae.Uint32(unix.NL80211_ATTR_WIPHY, 3)
		ae.Uint32(unix.NL80211_ATTR_IFTYPE, unix.NL80211_IFTYPE_AP)
		ae.Uint64(unix.NL80211_ATTR_WDEV, 0x300000001)
		ae.Bytes(unix.NL80211_ATTR_MAC, macAP)
		ae.Uint32(unix.NL80211_ATTR_GENERATION, 5)
		ae.Bytes(unix.NL80211_ATTR_SSID, []byte("emulab"))
		ae.Uint32(unix.NL80211_ATTR_WIPHY_FREQ, 5180)
		ae.Uint32(unix.NL80211_ATTR_WIPHY_CHANNEL_TYPE, 1)
		ae.Uint32(unix.NL80211_ATTR_CHANNEL_WIDTH, unix.NL80211_CHAN_WIDTH_80)
		ae.Uint32(unix.NL80211_ATTR_CENTER_FREQ1, 5210)
		ae.Uint32(unix.NL80211_ATTR_WIPHY_TX_POWER_LEVEL, 2000)
		ae.Uint8(unix.NL80211_ATTR_4ADDR, 0)
	})
	inf, err := decodeInterface(b)
	if err != nil {
		t.Fatal(err)
	}
	want := IfInfo{Index: 7, Name: "ap1-wlan0", IfType: unix.NL80211_IFTYPE_AP, Type: IfTypeAP, Wiphy: 3,
		MAC: "02:00:00:00:01:00", SSID: "emulab", FreqMHz: 5180, WidthMHz: 80, CenterFreq1MHz: 5210, Width: "80 MHz",
		TxPowerMBm: 2000, HasTxPower: true}
	if !equalIf(inf, want) {
		t.Errorf("got  %+v\nwant %+v", inf, want)
	}

	// a station, not associated: no channel, no SSID; an 11g channel
	b = encode(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(unix.NL80211_ATTR_IFINDEX, 9)
		ae.String(unix.NL80211_ATTR_IFNAME, "sta1-wlan0")
		ae.Uint32(unix.NL80211_ATTR_IFTYPE, unix.NL80211_IFTYPE_STATION)
	})
	inf, err = decodeInterface(b)
	if err != nil || inf.Type != IfTypeStation || inf.FreqMHz != 0 || inf.Width != "" || inf.HasTxPower {
		t.Errorf("bare station: %+v %v", inf, err)
	}
	b = encode(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(unix.NL80211_ATTR_IFTYPE, unix.NL80211_IFTYPE_MONITOR)
		ae.Uint32(unix.NL80211_ATTR_WIPHY_FREQ, 2437)
		ae.Uint32(unix.NL80211_ATTR_CHANNEL_WIDTH, unix.NL80211_CHAN_WIDTH_20_NOHT)
		ae.Uint32(unix.NL80211_ATTR_WIPHY_TX_POWER_LEVEL, uint32(0xFFFFFF9C)) // -100 mBm
	})
	inf, _ = decodeInterface(b)
	if inf.Type != "monitor" || inf.WidthMHz != 20 || !inf.NoHT || inf.Width != "20 MHz (no HT)" || inf.TxPowerMBm != -100 {
		t.Errorf("no-HT monitor: %+v", inf)
	}
}

func equalIf(a, b IfInfo) bool { return reflect.DeepEqual(a, b) }

func TestDecodeInterfaceMLOLinks(t *testing.T) {
	b := encode(t, func(ae *netlink.AttributeEncoder) {
		ae.String(unix.NL80211_ATTR_IFNAME, "ap1-wlan0")
		ae.Uint32(unix.NL80211_ATTR_IFTYPE, unix.NL80211_IFTYPE_AP)
		ae.Bytes(unix.NL80211_ATTR_MAC, macAP)
		ae.Nested(unix.NL80211_ATTR_MLO_LINKS, func(nae *netlink.AttributeEncoder) error {
			for i, f := range []uint32{5180, 2437} {
				nae.Nested(uint16(i+1), func(lae *netlink.AttributeEncoder) error {
					lae.Uint8(unix.NL80211_ATTR_MLO_LINK_ID, uint8(i))
					lae.Bytes(unix.NL80211_ATTR_MAC, []byte{2, 0, 0, 0, 1, byte(i + 1)})
					lae.Uint32(unix.NL80211_ATTR_WIPHY_FREQ, f)
					if i == 0 {
						lae.Uint32(unix.NL80211_ATTR_CHANNEL_WIDTH, unix.NL80211_CHAN_WIDTH_80P80)
						lae.Uint32(unix.NL80211_ATTR_CENTER_FREQ1, 5210)
					} else {
						lae.Uint32(unix.NL80211_ATTR_CHANNEL_WIDTH, unix.NL80211_CHAN_WIDTH_20)
						lae.Uint32(unix.NL80211_ATTR_CENTER_FREQ1, 2437)
					}
					return nil
				})
			}
			return nil
		})
	})
	inf, err := decodeInterface(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []IfLink{
		{ID: 0, MAC: "02:00:00:00:01:01", FreqMHz: 5180, WidthMHz: 160, CenterFreq1MHz: 5210, Width: "80+80 MHz"},
		{ID: 1, MAC: "02:00:00:00:01:02", FreqMHz: 2437, WidthMHz: 20, CenterFreq1MHz: 2437, Width: "20 MHz"},
	}
	if inf.FreqMHz != 0 || len(inf.Links) != 2 || inf.Links[0] != want[0] || inf.Links[1] != want[1] {
		t.Errorf("links: %+v", inf)
	}
}

func rateAttrs(ae *netlink.AttributeEncoder, kind string) {
	switch kind {
	case "he80":
		ae.Uint16(unix.NL80211_RATE_INFO_BITRATE, 0xffff) // saturated: BITRATE32 wins
		ae.Uint32(unix.NL80211_RATE_INFO_BITRATE32, 12010)
		ae.Flag(unix.NL80211_RATE_INFO_80_MHZ_WIDTH, true)
		ae.Uint8(unix.NL80211_RATE_INFO_HE_MCS, 11)
		ae.Uint8(unix.NL80211_RATE_INFO_HE_NSS, 2)
		ae.Uint8(unix.NL80211_RATE_INFO_HE_GI, 0)
		ae.Uint8(unix.NL80211_RATE_INFO_HE_DCM, 0)
	case "ht40":
		ae.Uint16(unix.NL80211_RATE_INFO_BITRATE, 3000)
		ae.Uint8(unix.NL80211_RATE_INFO_MCS, 15)
		ae.Flag(unix.NL80211_RATE_INFO_40_MHZ_WIDTH, true)
		ae.Flag(unix.NL80211_RATE_INFO_SHORT_GI, true)
	case "legacy":
		ae.Uint16(unix.NL80211_RATE_INFO_BITRATE, 540)
		ae.Uint32(unix.NL80211_RATE_INFO_BITRATE32, 540)
	}
}

func staInfoAttrs(ae *netlink.AttributeEncoder, signal int8, tx, rx string) {
	ae.Uint32(unix.NL80211_STA_INFO_INACTIVE_TIME, 120)
	ae.Uint32(unix.NL80211_STA_INFO_RX_BYTES, 1000)
	ae.Uint64(unix.NL80211_STA_INFO_RX_BYTES64, 1<<33)
	ae.Uint32(unix.NL80211_STA_INFO_TX_BYTES, 2000)
	ae.Uint32(unix.NL80211_STA_INFO_RX_PACKETS, 30)
	ae.Uint32(unix.NL80211_STA_INFO_TX_PACKETS, 40)
	ae.Uint32(unix.NL80211_STA_INFO_TX_RETRIES, 2)
	ae.Uint32(unix.NL80211_STA_INFO_TX_FAILED, 1)
	ae.Int8(unix.NL80211_STA_INFO_SIGNAL, signal)
	ae.Int8(unix.NL80211_STA_INFO_SIGNAL_AVG, signal+1)
	ae.Uint32(unix.NL80211_STA_INFO_CONNECTED_TIME, 12)
	ae.Nested(unix.NL80211_STA_INFO_TX_BITRATE, func(nae *netlink.AttributeEncoder) error { rateAttrs(nae, tx); return nil })
	ae.Nested(unix.NL80211_STA_INFO_RX_BITRATE, func(nae *netlink.AttributeEncoder) error { rateAttrs(nae, rx); return nil })
	ae.Nested(unix.NL80211_STA_INFO_STA_FLAGS, func(nae *netlink.AttributeEncoder) error { return nil })
	ae.Uint64(unix.NL80211_STA_INFO_ASSOC_AT_BOOTTIME, 123456789)
}

func TestDecodeStation(t *testing.T) {
	b := encode(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(unix.NL80211_ATTR_IFINDEX, 7)
		ae.Bytes(unix.NL80211_ATTR_MAC, macSTA)
		ae.Uint32(unix.NL80211_ATTR_GENERATION, 9)
		ae.Nested(unix.NL80211_ATTR_STA_INFO, func(nae *netlink.AttributeEncoder) error {
			staInfoAttrs(nae, -30, "he80", "ht40")
			return nil
		})
	})
	st, err := decodeStation(b)
	if err != nil {
		t.Fatal(err)
	}
	if st.MAC != "02:00:00:00:02:00" || st.MLDAddr != "" || st.LinkID != -1 || st.SignalDBm != -30 || st.SignalAvgDBm != -29 {
		t.Errorf("identity/signal: %+v", st)
	}
	if st.TxBitrateKbps != 1201000 || st.TxRate != (RateInfo{Kbps: 1201000, Mode: "HE", MCS: 11, NSS: 2, WidthMHz: 80}) {
		t.Errorf("tx rate: %d %+v", st.TxBitrateKbps, st.TxRate)
	}
	if st.RxBitrateKbps != 300000 || st.RxRate != (RateInfo{Kbps: 300000, Mode: "HT", MCS: 15, NSS: 2, WidthMHz: 40, ShortGI: true}) {
		t.Errorf("rx rate: %d %+v", st.RxBitrateKbps, st.RxRate)
	}
	if st.RxBytes != 1<<33 || st.TxBytes != 2000 || st.RxPackets != 30 || st.TxPackets != 40 || st.TxRetries != 2 || st.TxFailed != 1 {
		t.Errorf("counters: %+v", st)
	}
	if st.Connected != 12*time.Second || st.Inactive != 120*time.Millisecond {
		t.Errorf("times: %v %v", st.Connected, st.Inactive)
	}
}

func TestDecodeStationMLO(t *testing.T) {
	b := encode(t, func(ae *netlink.AttributeEncoder) {
		ae.Bytes(unix.NL80211_ATTR_MAC, macSTA)
		ae.Uint8(unix.NL80211_ATTR_MLO_LINK_ID, 1)
		ae.Bytes(unix.NL80211_ATTR_MLD_ADDR, []byte{2, 0, 0, 0, 2, 0xff})
		ae.Nested(unix.NL80211_ATTR_STA_INFO, func(nae *netlink.AttributeEncoder) error {
			staInfoAttrs(nae, -40, "legacy", "legacy")
			return nil
		})
		ae.Nested(unix.NL80211_ATTR_MLO_LINKS, func(nae *netlink.AttributeEncoder) error {
			for i := 0; i < 2; i++ {
				nae.Nested(uint16(i+1), func(lae *netlink.AttributeEncoder) error {
					lae.Uint8(unix.NL80211_ATTR_MLO_LINK_ID, uint8(i))
					lae.Bytes(unix.NL80211_ATTR_MAC, []byte{2, 0, 0, 0, 2, byte(i)})
					lae.Nested(unix.NL80211_ATTR_STA_INFO, func(sae *netlink.AttributeEncoder) error {
						staInfoAttrs(sae, int8(-50-i), "he80", "legacy")
						return nil
					})
					return nil
				})
			}
			return nil
		})
	})
	st, err := decodeStation(b)
	if err != nil {
		t.Fatal(err)
	}
	if st.MLDAddr != "02:00:00:00:02:ff" || st.LinkID != 1 || st.TxBitrateKbps != 54000 || len(st.Links) != 2 {
		t.Fatalf("MLO station: %+v", st)
	}
	for i, l := range st.Links {
		if l.LinkID != i || l.MAC != "02:00:00:00:02:0"+string(rune('0'+i)) || l.SignalDBm != -50-i || l.TxBitrateKbps != 1201000 || l.RxRate.Mode != "legacy" {
			t.Errorf("link %d: %+v", i, l)
		}
	}
}

func TestEncodeTxPower(t *testing.T) {
	b, err := encodeTxPower(7, unix.NL80211_TX_POWER_FIXED, -300)
	if err != nil {
		t.Fatal(err)
	}
	ad, _ := netlink.NewAttributeDecoder(b)
	got := map[uint16]uint32{}
	for ad.Next() {
		got[ad.Type()] = ad.Uint32()
	}
	if got[unix.NL80211_ATTR_IFINDEX] != 7 || got[unix.NL80211_ATTR_WIPHY_TX_POWER_SETTING] != unix.NL80211_TX_POWER_FIXED ||
		int32(got[unix.NL80211_ATTR_WIPHY_TX_POWER_LEVEL]) != -300 {
		t.Errorf("fixed: %v", got)
	}
	b, _ = encodeTxPower(7, unix.NL80211_TX_POWER_AUTOMATIC, 0)
	ad, _ = netlink.NewAttributeDecoder(b)
	n := 0
	for ad.Next() {
		n++
		if ad.Type() == unix.NL80211_ATTR_WIPHY_TX_POWER_LEVEL {
			t.Errorf("automatic power carries a level")
		}
	}
	if n != 2 {
		t.Errorf("automatic: %d attributes, want 2", n)
	}
}

func TestDecodeMaxAttr(t *testing.T) {
	msg := genetlink.Message{Data: encode(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint16(unix.CTRL_ATTR_FAMILY_ID, 0x22)
		ae.String(unix.CTRL_ATTR_FAMILY_NAME, HwsimFamily)
		ae.Uint32(unix.CTRL_ATTR_VERSION, 1)
		ae.Uint32(unix.CTRL_ATTR_HDRSIZE, 0)
		ae.Uint32(unix.CTRL_ATTR_MAXATTR, 28)
	})}
	if m, err := decodeMaxAttr([]genetlink.Message{msg}); err != nil || m != 28 {
		t.Errorf("maxattr %d %v", m, err)
	}
	if _, err := decodeMaxAttr([]genetlink.Message{{}}); err == nil {
		t.Errorf("reply without maxattr accepted")
	}
}
