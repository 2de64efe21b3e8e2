package netcfg_test

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// syn is one captured SYN or SYN-ACK with its TCP option kinds.
type syn struct {
	Src, Dst netip.Addr
	SynAck   bool
	Options  []byte // kinds: 2 MSS, 3 wscale, 4 SACK-permitted, 8 timestamps
}

func (s syn) has(kind byte) bool {
	for _, k := range s.Options {
		if k == kind {
			return true
		}
	}
	return false
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// captureSYNs records the IPv4 TCP SYNs seen on a node's interface (both
// directions) with an AF_PACKET socket opened inside the node, until the
// returned stop function is called. The socket takes ETH_P_ALL: sent
// packets reach only ETH_P_ALL taps.
func (l *lab) captureSYNs(node, iface string) (stop func() []syn) {
	l.t.Helper()
	link, err := l.h[node].LinkByName(iface)
	if err != nil {
		l.t.Fatal(err)
	}
	var fd int
	err = in(l.ns[node], func() (err error) {
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: link.Attrs().Index})
	})
	if err != nil {
		l.t.Fatalf("AF_PACKET socket in %s: %v", node, err)
	}
	tv := unix.NsecToTimeval(int64(50 * time.Millisecond))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	var (
		mu   sync.Mutex
		out  []syn
		done = make(chan struct{})
		quit = make(chan struct{})
	)
	go func() {
		defer close(done)
		buf := make([]byte, 65536)
		for {
			select {
			case <-quit:
				return
			default:
			}
			n, _, err := unix.Recvfrom(fd, buf, 0)
			if err != nil {
				continue
			}
			if s, ok := parseSYN(buf[:n]); ok {
				mu.Lock()
				out = append(out, s)
				mu.Unlock()
			}
		}
	}()
	return func() []syn {
		close(quit)
		<-done
		unix.Close(fd)
		mu.Lock()
		defer mu.Unlock()
		return out
	}
}

// parseSYN decodes Ethernet + IPv4 + TCP and returns SYNs.
func parseSYN(f []byte) (syn, bool) {
	if len(f) < 14+20 || binary.BigEndian.Uint16(f[12:]) != unix.ETH_P_IP {
		return syn{}, false
	}
	ip := f[14:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[9] != unix.IPPROTO_TCP || len(ip) < ihl+20 {
		return syn{}, false
	}
	tcp := ip[ihl:]
	flags := tcp[13]
	if flags&0x02 == 0 {
		return syn{}, false
	}
	doff := int(tcp[12]>>4) * 4
	if doff < 20 || len(tcp) < doff {
		return syn{}, false
	}
	s := syn{Src: netip.AddrFrom4([4]byte(ip[12:16])), Dst: netip.AddrFrom4([4]byte(ip[16:20])), SynAck: flags&0x10 != 0}
	opts := tcp[20:doff]
	for i := 0; i < len(opts); {
		k := opts[i]
		if k == 0 {
			break
		}
		if k == 1 {
			i++
			continue
		}
		s.Options = append(s.Options, k)
		if i+1 >= len(opts) || opts[i+1] < 2 {
			break
		}
		i += int(opts[i+1])
	}
	return s, true
}
