package wifi

import (
	"errors"
	"fmt"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// ProbeHwsimMLO reports whether the running kernel's mac80211_hwsim knows
// HWSIM_ATTR_MLO_SUPPORT, that is whether RadioConfig.MLO can create a radio
// that claims multi-link operation (Debian 12's 6.1 has it):
// nil when it does, else an error wrapping ErrNotSupported (also when
// mac80211_hwsim is not loaded). Older kernels ignore the attribute
// silently, which is why this asks instead: the family's highest attribute
// number (CTRL_ATTR_MAXATTR of the generic netlink controller's GETFAMILY
// reply) tells whether the attribute exists, the enum only ever growing.
// Nothing is created.
func ProbeHwsimMLO() error {
	maxAttr, err := hwsimMaxAttr()
	if err != nil {
		return err
	}
	if maxAttr < hwsimAttrMLOSupport {
		return fmt.Errorf("hwsim: this kernel's mac80211_hwsim predates multi-link radios (no HWSIM_ATTR_MLO_SUPPORT; its highest attribute is %d): %w", maxAttr, ErrNotSupported)
	}
	return nil
}

// hwsimMaxAttr asks the generic netlink controller for the hwsim family's
// maxattr.
func hwsimMaxAttr() (uint32, error) {
	c, err := genetlink.Dial(nil)
	if err != nil {
		return 0, fmt.Errorf("hwsim: generic netlink: %w", err)
	}
	defer c.Close()
	ae := netlink.NewAttributeEncoder()
	ae.String(unix.CTRL_ATTR_FAMILY_NAME, HwsimFamily)
	b, err := ae.Encode()
	if err != nil {
		return 0, err
	}
	msgs, err := c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: unix.CTRL_CMD_GETFAMILY, Version: 1},
		Data:   b,
	}, unix.GENL_ID_CTRL, netlink.Request)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return 0, fmt.Errorf("hwsim: family %s missing (mac80211_hwsim not loaded): %w", HwsimFamily, ErrNotSupported)
		}
		return 0, fmt.Errorf("hwsim: family %s: %w", HwsimFamily, err)
	}
	return decodeMaxAttr(msgs)
}

func decodeMaxAttr(msgs []genetlink.Message) (uint32, error) {
	for _, m := range msgs {
		ad, err := netlink.NewAttributeDecoder(m.Data)
		if err != nil {
			return 0, err
		}
		var maxAttr uint32
		var found bool
		for ad.Next() {
			if ad.Type() == unix.CTRL_ATTR_MAXATTR {
				maxAttr, found = ad.Uint32(), true
			}
		}
		if err := ad.Err(); err != nil {
			return 0, err
		}
		if found {
			return maxAttr, nil
		}
	}
	return 0, fmt.Errorf("hwsim: the controller's reply for %s has no CTRL_ATTR_MAXATTR", HwsimFamily)
}
