package wifi

import (
	"errors"
	"fmt"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Wiphy is a wireless device (radio) as nl80211 lists it.
type Wiphy struct {
	Index uint32 // NL80211_ATTR_WIPHY, also /sys/class/ieee80211/<name>/index
	Name  string // NL80211_ATTR_WIPHY_NAME
	MLO   bool   // NL80211_ATTR_MLO_SUPPORT: the driver claims multi-link support
}

// dialNL80211 opens nl80211 in the namespace netnsFd (0: the calling thread's).
func dialNL80211(netnsFd int) (*genetlink.Conn, genetlink.Family, error) {
	c, err := genetlink.Dial(&netlink.Config{NetNS: netnsFd})
	if err != nil {
		return nil, genetlink.Family{}, fmt.Errorf("nl80211: generic netlink: %w", err)
	}
	_ = c.SetOption(netlink.ExtendedAcknowledge, true)
	fam, err := c.GetFamily(unix.NL80211_GENL_NAME)
	if err != nil {
		c.Close()
		if errors.Is(err, unix.ENOENT) {
			return nil, genetlink.Family{}, fmt.Errorf("nl80211 missing (cfg80211 not loaded): %w", ErrNotSupported)
		}
		return nil, genetlink.Family{}, fmt.Errorf("nl80211: %w", err)
	}
	return c, fam, nil
}

// Wiphys lists the wiphys in the namespace netnsFd (0: the calling thread's).
func Wiphys(netnsFd int) ([]Wiphy, error) {
	c, fam, err := dialNL80211(netnsFd)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ae := netlink.NewAttributeEncoder()
	ae.Flag(unix.NL80211_ATTR_SPLIT_WIPHY_DUMP, true)
	b, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	msgs, err := c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: unix.NL80211_CMD_GET_WIPHY, Version: fam.Version},
		Data:   b,
	}, fam.ID, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, fmt.Errorf("nl80211: list wiphys: %w", err)
	}
	return decodeWiphys(msgs)
}

// decodeWiphys merges a split GET_WIPHY dump: every part of one wiphy
// repeats its index and name; other attributes appear in one part each.
func decodeWiphys(msgs []genetlink.Message) ([]Wiphy, error) {
	var out []Wiphy
	pos := map[uint32]int{}
	for _, m := range msgs {
		ad, err := netlink.NewAttributeDecoder(m.Data)
		if err != nil {
			return nil, err
		}
		var w Wiphy
		var haveIndex bool
		for ad.Next() {
			switch ad.Type() {
			case unix.NL80211_ATTR_WIPHY:
				w.Index, haveIndex = ad.Uint32(), true
			case unix.NL80211_ATTR_WIPHY_NAME:
				w.Name = ad.String()
			case unix.NL80211_ATTR_MLO_SUPPORT:
				w.MLO = true
			}
		}
		if err := ad.Err(); err != nil {
			return nil, err
		}
		if !haveIndex {
			continue
		}
		i, seen := pos[w.Index]
		if !seen {
			pos[w.Index] = len(out)
			out = append(out, w)
			continue
		}
		if w.Name != "" {
			out[i].Name = w.Name
		}
		out[i].MLO = out[i].MLO || w.MLO
	}
	return out, nil
}

// WiphyByName finds the wiphy called name in the namespace netnsFd.
func WiphyByName(netnsFd int, name string) (Wiphy, error) {
	ws, err := Wiphys(netnsFd)
	if err != nil {
		return Wiphy{}, err
	}
	for _, w := range ws {
		if w.Name == name {
			return w, nil
		}
	}
	return Wiphy{}, fmt.Errorf("nl80211: no wiphy %q in that namespace: %w", name, unix.ENOENT)
}

// SetWiphyNetns moves wiphy (with all its interfaces) from the namespace
// fromNetnsFd, where it is now (0: the calling thread's), into the namespace
// toNetnsFd (NL80211_CMD_SET_WIPHY_NETNS, like `iw phy X set netns`).
func SetWiphyNetns(fromNetnsFd int, wiphy uint32, toNetnsFd int) error {
	c, fam, err := dialNL80211(fromNetnsFd)
	if err != nil {
		return err
	}
	defer c.Close()
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(unix.NL80211_ATTR_WIPHY, wiphy)
	ae.Uint32(unix.NL80211_ATTR_NETNS_FD, uint32(toNetnsFd))
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: unix.NL80211_CMD_SET_WIPHY_NETNS, Version: fam.Version},
		Data:   b,
	}, fam.ID, netlink.Request|netlink.Acknowledge)
	if err != nil {
		return fmt.Errorf("nl80211: move wiphy %d to netns fd %d: %w", wiphy, toNetnsFd, err)
	}
	return nil
}
