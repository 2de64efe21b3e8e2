package emu

import (
	"fmt"
	"unsafe"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The legacy ethtool commands for TX checksum offload (linux/ethtool.h).
// The kernel maps them onto the feature bits (all of NETIF_F_CSUM_MASK),
// and dropping TX checksumming also drops TSO, which depends on it.
const (
	ethtoolGTXCSUM = 0x16
	ethtoolSTXCSUM = 0x17
)

type ethtoolValue struct {
	cmd  uint32
	data uint32
}

type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [16]byte // the rest of struct ifreq's union
}

// ethtoolValueIoctl runs one ETHTOOL_{G,S}* command on ifname through a
// socket opened inside ns.
func ethtoolValueIoctl(ns netns.NsHandle, ifname string, cmd, data uint32) (uint32, error) {
	v := ethtoolValue{cmd: cmd, data: data}
	err := ethtoolIoctl(ns, ifname, unsafe.Pointer(&v))
	return v.data, err
}

// ethtoolIoctl runs SIOCETHTOOL on ifname with data (a struct whose first
// field is the ethtool command) through a socket opened inside ns.
func ethtoolIoctl(ns netns.NsHandle, ifname string, data unsafe.Pointer) error {
	if len(ifname) >= unix.IFNAMSIZ {
		return fmt.Errorf("interface name %q too long", ifname)
	}
	return do(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		var ifr ifreqData
		copy(ifr.name[:], ifname)
		ifr.data = data
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); e != 0 {
			return e
		}
		return nil
	})
}

// setTxChecksum turns TX checksum offload of an interface on or off (the
// ethtool ioctl: `ethtool -K IF tx off`) and checks that the kernel took it.
//
// Why: ovs-vswitchd's userspace (netdev) datapath reads frames from its
// ports with AF_PACKET and sends them on with AF_PACKET. A veth whose peer
// offloads TX checksums hands over TCP segments with the checksum left for
// "the hardware" (CHECKSUM_PARTIAL) and GSO super-frames; the netdev
// datapath completes neither, so ARP and ping work and every TCP
// connection times out. With TX checksumming off on the side that sends
// into an OVS port, the kernel finishes checksums and segments before the
// frame enters the veth.
func setTxChecksum(ns netns.NsHandle, ifname string, on bool) error {
	want := uint32(0)
	if on {
		want = 1
	}
	if _, err := ethtoolValueIoctl(ns, ifname, ethtoolSTXCSUM, want); err != nil {
		return fmt.Errorf("%s: ethtool tx checksum %v: %w", ifname, on, err)
	}
	got, err := ethtoolValueIoctl(ns, ifname, ethtoolGTXCSUM, 0)
	if err != nil {
		return fmt.Errorf("%s: read tx checksum state: %w", ifname, err)
	}
	if (got != 0) != on {
		return fmt.Errorf("%s: tx checksum offload is still %v after setting it to %v", ifname, got != 0, on)
	}
	return nil
}
