package traffic

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// ifaceInfo is what the result records of one interface.
type ifaceInfo struct {
	name     string
	offloads string
	qdiscs   []qdiscStat
}

type qdiscStat struct {
	kind           string
	root           bool
	packets, drops int64
}

// legacy ethtool "get" commands (linux/ethtool.h), still answered by every
// driver and enough to say which offloads are on.
var offloadCmds = []struct {
	name string
	cmd  uint32
}{
	{"rx-csum", unix.ETHTOOL_GRXCSUM}, {"tx-csum", unix.ETHTOOL_GTXCSUM}, {"sg", unix.ETHTOOL_GSG},
	{"tso", unix.ETHTOOL_GTSO}, {"gso", unix.ETHTOOL_GGSO}, {"gro", unix.ETHTOOL_GGRO},
}

type ethtoolValue struct{ cmd, data uint32 }

type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data uintptr
	_    [16]byte
}

// ethtoolGet runs one legacy ethtool get through SIOCETHTOOL; it must run
// inside the interface's namespace.
func ethtoolGet(fd int, ifname string, cmd uint32) (uint32, error) {
	ev := &ethtoolValue{cmd: cmd}
	var pin runtime.Pinner
	pin.Pin(ev)
	defer pin.Unpin()
	var ifr ifreqData
	copy(ifr.name[:], ifname)
	ifr.data = uintptr(unsafe.Pointer(ev))
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return 0, e
	}
	return ev.data, nil
}

// readIfaces describes every interface of the calling thread's namespace
// except lo: offloads (ethtool), MTU, queue length, GSO/GRO limits, and
// the qdiscs with their counters.
func readIfaces() ([]ifaceInfo, error) {
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var out []ifaceInfo
	for _, l := range links {
		a := l.Attrs()
		if a.Name == "lo" {
			continue
		}
		var parts []string
		for _, o := range offloadCmds {
			v, err := ethtoolGet(fd, a.Name, o.cmd)
			switch {
			case err != nil:
				parts = append(parts, o.name+"=?")
			case v != 0:
				parts = append(parts, o.name+"=on")
			default:
				parts = append(parts, o.name+"=off")
			}
		}
		parts = append(parts, fmt.Sprintf("mtu=%d txqlen=%d gso_max_size=%d gso_max_segs=%d gro_max_size=%d",
			a.MTU, a.TxQLen, a.GSOMaxSize, a.GSOMaxSegs, a.GROMaxSize))
		ii := ifaceInfo{name: a.Name}
		if qs, err := h.QdiscList(l); err == nil {
			var kinds []string
			for _, q := range qs {
				qa := q.Attrs()
				st := qdiscStat{kind: q.Type(), root: qa.Parent == netlink.HANDLE_ROOT}
				if qa.Statistics != nil && qa.Statistics.Basic != nil {
					st.packets = int64(qa.Statistics.Basic.Packets)
				}
				if qa.Statistics != nil && qa.Statistics.Queue != nil {
					st.drops = int64(qa.Statistics.Queue.Drops)
				}
				ii.qdiscs = append(ii.qdiscs, st)
				kinds = append(kinds, q.Type())
			}
			sort.Strings(kinds)
			parts = append(parts, "qdiscs="+strings.Join(kinds, "+"))
		}
		ii.offloads = strings.Join(parts, " ")
		out = append(out, ii)
	}
	return out, nil
}

// rootStats sums the counters of an interface's root qdiscs.
func (ii ifaceInfo) rootStats() (packets, drops int64) {
	for _, q := range ii.qdiscs {
		if q.root {
			packets += q.packets
			drops += q.drops
		}
	}
	return
}
