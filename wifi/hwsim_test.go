package wifi

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/kernellab"
	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

func TestEncodeNewRadio(t *testing.T) {
	b, err := encodeNewRadio(RadioConfig{Name: "phy-ap", Channels: 2, MLO: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint16][]byte{}
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		t.Fatal(err)
	}
	for ad.Next() {
		got[ad.Type()] = ad.Bytes()
	}
	if string(got[hwsimAttrRadioName]) != "phy-ap\x00" {
		t.Errorf("name attribute = %q, want NUL-terminated phy-ap", got[hwsimAttrRadioName])
	}
	if c := got[hwsimAttrChannels]; len(c) != 4 || c[0] != 2 {
		t.Errorf("channels attribute = %v, want u32 2", c)
	}
	if _, ok := got[hwsimAttrMLOSupport]; !ok {
		t.Errorf("MLO flag missing")
	}
	if _, ok := got[hwsimAttrNoVif]; ok {
		t.Errorf("NO_VIF flag set although NoVif is false")
	}

	b, _ = encodeNewRadio(RadioConfig{})
	if len(b) != 0 {
		t.Errorf("zero config encodes %d bytes, want none (kernel defaults)", len(b))
	}
}

func TestRadioIDFromAck(t *testing.T) {
	if id, err := radioIDFromAck(nil); id != 0 || err != nil {
		t.Errorf("plain ACK: id %d err %v, want 0 nil", id, err)
	}
	// The kernel's positive id 7 comes back as errno -7.
	ack := &netlink.OpError{Op: "receive", Err: syscall.Errno(^uintptr(6))}
	if id, err := radioIDFromAck(ack); id != 7 || err != nil {
		t.Errorf("id ACK: id %d err %v, want 7 nil", id, err)
	}
	other := &netlink.OpError{Op: "receive", Err: unix.EINVAL}
	if _, err := radioIDFromAck(other); !errors.Is(err, unix.EINVAL) {
		t.Errorf("EINVAL: err %v, want EINVAL", err)
	}
}

func TestDecodeWiphysMergesSplitDump(t *testing.T) {
	msg := func(index uint32, name string, mlo bool) genetlink.Message {
		ae := netlink.NewAttributeEncoder()
		ae.Uint32(unix.NL80211_ATTR_WIPHY, index)
		ae.String(unix.NL80211_ATTR_WIPHY_NAME, name)
		ae.Flag(unix.NL80211_ATTR_MLO_SUPPORT, mlo)
		b, err := ae.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return genetlink.Message{Data: b}
	}
	ws, err := decodeWiphys([]genetlink.Message{msg(3, "a", false), msg(3, "a", true), msg(5, "b", false)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0] != (Wiphy{3, "a", true}) || ws[1] != (Wiphy{5, "b", false}) {
		t.Errorf("got %+v", ws)
	}
}

// TestHwsimRoundTrip creates a radio, moves it into a new namespace,
// deletes it there and checks it is gone. Kernel lab only (it creates a
// radio on the machine).
func TestHwsimRoundTrip(t *testing.T) {
	kernellab.RequireLab(t, "creates a mac80211_hwsim radio")
	err := ProbeHwsim()
	kernellab.Require(t, "mac80211_hwsim", err == nil, errText(err))

	const name = "emuctl-rt0"
	h, err := DialHwsim(0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.NewRadio(RadioConfig{Name: name, NoVif: true}); err != nil {
		t.Fatal(err)
	}
	ns := testutil.NewNetns(t)
	t.Cleanup(func() {
		if _, err := os.Stat("/sys/class/ieee80211/" + name); err == nil {
			for _, fd := range []int{int(ns), 0} {
				if h, err := DialHwsim(fd); err == nil {
					_ = h.DelRadio(name)
					h.Close()
				}
			}
		}
	})
	w, err := WiphyByName(0, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := SetWiphyNetns(0, w.Index, int(ns)); err != nil {
		t.Fatal(err)
	}
	if _, err := WiphyByName(0, name); err == nil {
		t.Errorf("radio still listed in the root namespace after the move")
	}
	if _, err := WiphyByName(int(ns), name); err != nil {
		t.Errorf("radio not in the new namespace: %v", err)
	}
	if err := h.DelRadio(name); !errors.Is(err, unix.ENODEV) {
		t.Errorf("deleting from the root namespace: %v, want ENODEV (radio is elsewhere)", err)
	}
	hn, err := DialHwsim(int(ns))
	if err != nil {
		t.Fatal(err)
	}
	defer hn.Close()
	if err := hn.DelRadio(name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/sys/class/ieee80211/" + name); err == nil {
		t.Errorf("radio %s still exists", name)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
