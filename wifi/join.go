package wifi

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Ad hoc (IBSS) and 802.11s mesh on hwsim radios, joined by the kernel
// itself (nl80211, as `iw dev X ibss join` and `iw dev X mesh join` do):
// mac80211 runs the IBSS (beacons, merging by TSF) and the mesh (its own
// peering manager for an open mesh, HWMP path selection and forwarding),
// so no daemon is needed and none is left to supervise.

// JoinSpec says which network a radio joins and on which channel.
type JoinSpec struct {
	// Mesh: an 802.11s mesh (ID is the mesh ID); otherwise an IBSS (ID is
	// its SSID).
	Mesh bool
	ID   string
	// BSSID fixes an IBSS's BSSID (zero: the kernel picks one and merges
	// cells by TSF). Fixed, every member joins one cell at once.
	BSSID [6]byte
	// FreqMHz is the primary channel; WidthMHz 20, 40, 80 or 160, NoHT a
	// 20 MHz channel without HT (802.11a/b/g); CenterFreq1MHz the centre
	// of a wider channel.
	FreqMHz, WidthMHz, CenterFreq1MHz int
	NoHT                              bool
}

// what names the network for messages.
func (j JoinSpec) what() string {
	if j.Mesh {
		return fmt.Sprintf("mesh %q", j.ID)
	}
	return fmt.Sprintf("ad hoc network %q", j.ID)
}

// SetIfType changes the type of the wireless interface ifname in the
// namespace netnsFd (NL80211_CMD_SET_INTERFACE, as `iw dev X set type`);
// the interface must be down. iftype is NL80211_IFTYPE_*.
func SetIfType(netnsFd int, ifname string, iftype uint32) error {
	err := ifaceDo(netnsFd, ifname, func(inf IfInfo) (uint8, []byte, error) {
		if inf.IfType == iftype {
			return 0, nil, nil
		}
		ae := netlink.NewAttributeEncoder()
		ae.Uint32(unix.NL80211_ATTR_IFINDEX, uint32(inf.Index))
		ae.Uint32(unix.NL80211_ATTR_IFTYPE, iftype)
		b, err := ae.Encode()
		return unix.NL80211_CMD_SET_INTERFACE, b, err
	})
	switch {
	case errors.Is(err, unix.EOPNOTSUPP):
		return fmt.Errorf("nl80211: %s: the radio cannot be of type %s (this kernel's mac80211_hwsim or mac80211 lacks it: %w)", ifname, ifTypeName(iftype), err)
	case err != nil:
		return fmt.Errorf("nl80211: %s: set type %s: %w", ifname, ifTypeName(iftype), err)
	}
	return nil
}

// Join makes the wireless interface ifname in the namespace netnsFd, up
// and of the matching type (SetIfType: NL80211_IFTYPE_ADHOC or
// NL80211_IFTYPE_MESH_POINT), join the network j names
// (NL80211_CMD_JOIN_IBSS / NL80211_CMD_JOIN_MESH). It stays joined until
// the interface goes down or its namespace goes: no socket owns it.
func Join(netnsFd int, ifname string, j JoinSpec) error {
	var encodeErr error
	err := ifaceDo(netnsFd, ifname, func(inf IfInfo) (uint8, []byte, error) {
		b, cmd, err := encodeJoin(inf.Index, j)
		encodeErr = err
		return cmd, b, err
	})
	switch {
	case encodeErr != nil:
		return fmt.Errorf("nl80211: %s: join %s: %w", ifname, j.what(), encodeErr)
	case err != nil:
		return fmt.Errorf("nl80211: %s: join %s on %d MHz (%s): %w", ifname, j.what(), j.FreqMHz, j.widthText(), err)
	}
	return nil
}

func (j JoinSpec) widthText() string {
	if j.NoHT {
		return "20 MHz, no HT"
	}
	return fmt.Sprintf("%d MHz", max(j.WidthMHz, 20))
}

// chanWidth is j's NL80211_CHAN_WIDTH_*.
func (j JoinSpec) chanWidth() (uint32, error) {
	switch {
	case j.NoHT:
		return unix.NL80211_CHAN_WIDTH_20_NOHT, nil
	case j.WidthMHz <= 20:
		return unix.NL80211_CHAN_WIDTH_20, nil
	case j.WidthMHz == 40:
		return unix.NL80211_CHAN_WIDTH_40, nil
	case j.WidthMHz == 80:
		return unix.NL80211_CHAN_WIDTH_80, nil
	case j.WidthMHz == 160:
		return unix.NL80211_CHAN_WIDTH_160, nil
	}
	return 0, fmt.Errorf("a %d MHz channel cannot be joined (20, 40, 80 or 160)", j.WidthMHz)
}

// encodeJoin is the JOIN_IBSS or JOIN_MESH request for interface ifindex.
func encodeJoin(ifindex int, j JoinSpec) ([]byte, uint8, error) {
	if len(j.ID) == 0 || len(j.ID) > 32 {
		return nil, 0, fmt.Errorf("the network's name must be 1-32 bytes, not %d", len(j.ID))
	}
	if j.FreqMHz <= 0 {
		return nil, 0, errors.New("no channel")
	}
	w, err := j.chanWidth()
	if err != nil {
		return nil, 0, err
	}
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(unix.NL80211_ATTR_IFINDEX, uint32(ifindex))
	cmd := uint8(unix.NL80211_CMD_JOIN_IBSS)
	if j.Mesh {
		cmd = unix.NL80211_CMD_JOIN_MESH
		ae.Bytes(unix.NL80211_ATTR_MESH_ID, []byte(j.ID))
	} else {
		ae.Bytes(unix.NL80211_ATTR_SSID, []byte(j.ID))
	}
	ae.Uint32(unix.NL80211_ATTR_WIPHY_FREQ, uint32(j.FreqMHz))
	ae.Uint32(unix.NL80211_ATTR_CHANNEL_WIDTH, w)
	if w != unix.NL80211_CHAN_WIDTH_20_NOHT && w != unix.NL80211_CHAN_WIDTH_20 {
		if j.CenterFreq1MHz <= 0 {
			return nil, 0, fmt.Errorf("a %d MHz channel needs its centre frequency", j.WidthMHz)
		}
		ae.Uint32(unix.NL80211_ATTR_CENTER_FREQ1, uint32(j.CenterFreq1MHz))
	}
	if !j.Mesh && j.BSSID != ([6]byte{}) {
		ae.Bytes(unix.NL80211_ATTR_MAC, j.BSSID[:])
		ae.Flag(unix.NL80211_ATTR_FREQ_FIXED, true)
	}
	b, err := ae.Encode()
	return b, cmd, err
}

// MeshPath is one destination in a mesh point's path table
// (NL80211_CMD_GET_MPATH, as `iw dev X mpath dump`).
type MeshPath struct {
	Dst      string `json:"dst"`
	NextHop  string `json:"next_hop"`
	Metric   uint32 `json:"metric"`
	HopCount int    `json:"hop_count"`
}

// MeshPaths dumps the mesh paths of the mesh interface ifname in the
// namespace netnsFd.
func MeshPaths(netnsFd int, ifname string) ([]MeshPath, error) {
	msgs, err := ifaceDump(netnsFd, ifname, unix.NL80211_CMD_GET_MPATH, "mesh paths")
	if err != nil {
		return nil, err
	}
	var out []MeshPath
	for _, m := range msgs {
		p, err := decodeMeshPath(m.Data)
		if err != nil {
			return nil, fmt.Errorf("nl80211: mesh path of %s: %w", ifname, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func decodeMeshPath(b []byte) (MeshPath, error) {
	var p MeshPath
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return p, err
	}
	for ad.Next() {
		switch ad.Type() {
		case unix.NL80211_ATTR_MAC:
			p.Dst = hwAddr(ad.Bytes())
		case unix.NL80211_ATTR_MPATH_NEXT_HOP:
			p.NextHop = hwAddr(ad.Bytes())
		case unix.NL80211_ATTR_MPATH_INFO:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					switch nad.Type() {
					case unix.NL80211_MPATH_INFO_METRIC:
						p.Metric = nad.Uint32()
					case unix.NL80211_MPATH_INFO_HOP_COUNT:
						p.HopCount = int(nad.Uint8())
					}
				}
				return nil
			})
		}
	}
	return p, ad.Err()
}

// plinkStates names NL80211_PLINK_* (a mesh peer link's state).
var plinkStates = []string{"LISTEN", "OPN_SNT", "OPN_RCVD", "CNF_RCVD", "ESTAB", "HOLDING", "BLOCKED"}

func plinkState(v uint8) string {
	if int(v) < len(plinkStates) {
		return plinkStates[v]
	}
	return fmt.Sprintf("state %d", v)
}
