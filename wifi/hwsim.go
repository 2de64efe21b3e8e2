package wifi

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// ErrNotSupported is wrapped by errors about kernel features the running
// kernel lacks (no mac80211_hwsim, no nl80211).
var ErrNotSupported = errors.New("not supported by the running kernel")

// HwsimFamily is the generic netlink family of mac80211_hwsim (version 1).
const HwsimFamily = "MAC80211_HWSIM"

// Commands and attributes of MAC80211_HWSIM. The header is not uapi:
// drivers/net/wireless/virtual/mac80211_hwsim.h (enum order, stable).
const (
	hwsimCmdNewRadio = 4 // HWSIM_CMD_NEW_RADIO; replies with the id in the ACK
	hwsimCmdDelRadio = 5 // HWSIM_CMD_DEL_RADIO; by RADIO_ID or RADIO_NAME

	hwsimAttrChannels   = 9  // u32: concurrent channels; >1 implies channel contexts
	hwsimAttrRadioID    = 10 // u32
	hwsimAttrRadioName  = 17 // NUL-terminated string: the wiphy name
	hwsimAttrNoVif      = 18 // flag: do not create the default wlanN interface
	hwsimAttrMLOSupport = 25 // flag: claim 802.11be multi-link support (forces channel contexts)
)

// RadioConfig is what HWSIM_CMD_NEW_RADIO is told about a new radio.
type RadioConfig struct {
	// Name becomes the wiphy name (as in /sys/class/ieee80211/<Name>);
	// empty lets the kernel choose phyN. Must be unique among wiphys.
	Name string
	// Channels is the number of concurrent channels; 0 means the module's
	// default (1). More than 1 makes the radio use channel contexts, and
	// wmediumd refuses to register with such radios.
	Channels uint32
	// MLO claims multi-link operation (HWSIM_ATTR_MLO_SUPPORT). Kernels
	// whose hwsim predates the attribute ignore it: check Wiphy.MLO.
	MLO bool
	// NoVif creates the radio without its default wlanN interface.
	NoVif bool
	// PermAddr is the radio's permanent address (zero: the kernel's
	// 02:00:00:xx:xx:00 scheme); a medium knows radios by it. Unique
	// host-wide.
	PermAddr [6]byte
}

// Hwsim is a MAC80211_HWSIM generic netlink socket bound to one network
// namespace. New radios belong to that namespace's netgroup.
type Hwsim struct {
	c   *genetlink.Conn
	fam genetlink.Family
}

// DialHwsim opens the hwsim family in the network namespace netnsFd (an open
// /proc/.../ns/net or /run/netns/<name> descriptor; 0: the calling thread's).
// Without mac80211_hwsim the error wraps ErrNotSupported.
func DialHwsim(netnsFd int) (*Hwsim, error) {
	c, err := genetlink.Dial(&netlink.Config{NetNS: netnsFd})
	if err != nil {
		return nil, fmt.Errorf("hwsim: generic netlink: %w", err)
	}
	_ = c.SetOption(netlink.ExtendedAcknowledge, true) // kernel error text, best effort
	fam, err := c.GetFamily(HwsimFamily)
	if err != nil {
		c.Close()
		if errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("hwsim: family %s missing (mac80211_hwsim not loaded): %w", HwsimFamily, ErrNotSupported)
		}
		return nil, fmt.Errorf("hwsim: family %s: %w", HwsimFamily, err)
	}
	return &Hwsim{c: c, fam: fam}, nil
}

// ProbeHwsim reports whether radios can be created here: nil, or an error
// wrapping ErrNotSupported (or a permission error).
func ProbeHwsim() error {
	h, err := DialHwsim(0)
	if err != nil {
		return err
	}
	return h.Close()
}

// Close closes the socket. Radios created with it stay.
func (h *Hwsim) Close() error { return h.c.Close() }

// NewRadio creates a radio and returns its hwsim radio id.
func (h *Hwsim) NewRadio(cfg RadioConfig) (int, error) {
	b, err := encodeNewRadio(cfg)
	if err != nil {
		return -1, err
	}
	_, err = h.exec(hwsimCmdNewRadio, b)
	id, err := radioIDFromAck(err)
	if err != nil {
		return -1, fmt.Errorf("hwsim: new radio %q: %w", cfg.Name, err)
	}
	return id, nil
}

// DelRadio deletes the radio whose wiphy is called name. It must be in the
// namespace this socket was dialled in (ENODEV otherwise).
func (h *Hwsim) DelRadio(name string) error {
	ae := netlink.NewAttributeEncoder()
	ae.String(hwsimAttrRadioName, name)
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	if _, err := h.exec(hwsimCmdDelRadio, b); err != nil {
		return fmt.Errorf("hwsim: delete radio %q: %w", name, err)
	}
	return nil
}

// DelRadioID deletes the radio with the given hwsim id (same namespace rule
// as DelRadio).
func (h *Hwsim) DelRadioID(id int) error {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(hwsimAttrRadioID, uint32(id))
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	if _, err := h.exec(hwsimCmdDelRadio, b); err != nil {
		return fmt.Errorf("hwsim: delete radio %d: %w", id, err)
	}
	return nil
}

func (h *Hwsim) exec(cmd uint8, data []byte) ([]genetlink.Message, error) {
	return h.c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: h.fam.Version},
		Data:   data,
	}, h.fam.ID, netlink.Request|netlink.Acknowledge)
}

func encodeNewRadio(cfg RadioConfig) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	if cfg.Name != "" {
		ae.String(hwsimAttrRadioName, cfg.Name)
	}
	if cfg.Channels > 0 {
		ae.Uint32(hwsimAttrChannels, cfg.Channels)
	}
	ae.Flag(hwsimAttrNoVif, cfg.NoVif)
	if cfg.PermAddr != ([6]byte{}) {
		ae.Bytes(hwsimAttrPermAddr, cfg.PermAddr[:])
	}
	ae.Flag(hwsimAttrMLOSupport, cfg.MLO)
	return ae.Encode()
}

// radioIDFromAck turns the outcome of NEW_RADIO into the new radio's id. The
// kernel returns the id as a positive number in the ACK's error field, which
// the netlink library reports as an error with a negative errno; id 0
// arrives as a plain success.
func radioIDFromAck(err error) (int, error) {
	if err == nil {
		return 0, nil
	}
	var errno syscall.Errno
	if errors.As(err, &errno) && int(errno) < 0 {
		return -int(errno), nil
	}
	return -1, err
}
