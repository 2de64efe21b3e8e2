package emu

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/ovs"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The userspace (netdev) datapath sends every frame it forwards to a
// system port through ONE AF_PACKET socket of ovs-vswitchd, created at the
// first such send with the host's default send buffer
// (net.core.wmem_default, 212992 bytes). A frame queued in a port's qdisc
// stays charged to that socket until it leaves, so all the OVS queues of
// the machine together hold at most about 90 full-size frames; beyond
// that ovs-vswitchd drops with "Resource temporarily unavailable" and a
// queue_limit of 100 or more is never reached (measured here: a
// 300-packet FIFO at 10 Mbit/s stopped at 92 packets).
//
// For its embedded pair emuctl fixes this at start-up without changing a
// host-wide setting: it makes ovs-vswitchd create that socket (a throw-away
// bridge floods one frame between two veths), takes a duplicate of the
// socket with pidfd_getfd(2), and raises its send buffer with
// SO_SNDBUFFORCE. A system Open vSwitch is left as it is (doctor and ls
// say what that means).

// embeddedSendBuffer is the send buffer emuctl gives the embedded
// ovs-vswitchd's AF_PACKET socket: room for about 28,000 queued frames.
const embeddedSendBuffer = 64 << 20

const sndbufFile = "sndbuf" // in the embedded dir: the value set, for doctor

// widenEmbeddedSendBuffer primes and widens the send socket of the
// embedded ovs-vswitchd (see above).
func widenEmbeddedSendBuffer(ctx context.Context, e ovs.Embedded) error {
	pid := 0
	for _, d := range e.Running() {
		if d.Name == "ovs-vswitchd" {
			pid = d.PID
		}
	}
	if pid == 0 {
		return errors.New("ovs-vswitchd is not running")
	}
	if _, err := packetSendSocket(pid); err != nil {
		if err := primeSendSocket(ctx, e, pid); err != nil {
			return fmt.Errorf("make ovs-vswitchd open its send socket: %w", err)
		}
	}
	fd, err := packetSendSocket(pid)
	if err != nil {
		return err
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(pidfd)
	dup, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		return fmt.Errorf("pidfd_getfd (ovs-vswitchd fd %d): %w", fd, err)
	}
	defer unix.Close(dup)
	if err := unix.SetsockoptInt(dup, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, embeddedSendBuffer); err != nil {
		return fmt.Errorf("SO_SNDBUFFORCE: %w", err)
	}
	got, err := unix.GetsockoptInt(dup, unix.SOL_SOCKET, unix.SO_SNDBUF)
	if err != nil {
		return err
	}
	if got < embeddedSendBuffer {
		return fmt.Errorf("send buffer is %d bytes after asking for %d", got, embeddedSendBuffer)
	}
	return os.WriteFile(filepath.Join(e.Dir, sndbufFile), []byte(strconv.Itoa(got)+"\n"), 0o644)
}

// packetSendSocket returns the fd number, in process pid, of its unbound
// AF_PACKET socket (type raw, protocol 0, no interface): the one the
// netdev datapath sends with. Its receive sockets are bound to a port.
func packetSendSocket(pid int) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/packet", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	unbound := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sk RefCnt Type Proto Iface R Rmem User Inode
		fs := strings.Fields(sc.Text())
		if len(fs) >= 9 && fs[2] == "3" && fs[3] == "0000" && fs[4] == "0" {
			unbound[fs[8]] = true
		}
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		t, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil || !strings.HasPrefix(t, "socket:[") {
			continue
		}
		if unbound[strings.TrimSuffix(strings.TrimPrefix(t, "socket:["), "]")] {
			return strconv.Atoi(e.Name())
		}
	}
	return 0, errors.New("ovs-vswitchd has no AF_PACKET send socket yet")
}

// primeSendSocket makes ovs-vswitchd send one frame on a system port: a
// bridge with two veth ports, a broadcast frame into one, flooded out of
// the other. Everything it makes carries the marker "emuctl:_ovs" and is
// removed before it returns.
func primeSendSocket(ctx context.Context, e ovs.Embedded, pid int) error {
	const marker = markerPrefix + embeddedOVSDir
	root, err := netlink.NewHandleAt(hostNetns, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer root.Close()
	names := [2][2]string{}
	for i := range names {
		for j := range names[i] {
			names[i][j] = ovs.DeviceName(embeddedOVSDir, "prime", fmt.Sprintf("p%d%d", i, j), int(time.Now().UnixNano()%7))
		}
	}
	var made []netlink.Link
	defer func() {
		for _, l := range made {
			root.LinkDel(l)
		}
	}()
	for i := range names {
		la := netlink.NewLinkAttrs()
		la.Name, la.Alias = names[i][0], marker
		v := &netlink.Veth{LinkAttrs: la, PeerName: names[i][1]}
		// Unmarked until LinkSetAlias below (the kernel takes no alias at
		// creation): recorded first, deleted when the pair stops.
		if err := claimTap(e, names[i][0]); err != nil {
			return err
		}
		if err := root.LinkAdd(v); err != nil {
			return fmt.Errorf("veth %s: %w", la.Name, err)
		}
		made = append(made, v)
		for _, n := range names[i] {
			l, err := root.LinkByName(n)
			if err != nil {
				return err
			}
			root.LinkSetAlias(l, marker)
			if err := root.LinkSetUp(l); err != nil {
				return err
			}
		}
	}
	c, err := ovs.Dial(ctx, e.Endpoint())
	if err != nil {
		return err
	}
	defer c.Close()
	brName := ovs.DeviceName(embeddedOVSDir, "prime", "", 0)
	if err := claimTap(e, brName); err != nil { // ovs_instance.go: the datapath's tap for the bridge
		return err
	}
	lab := &ovs.Lab{Marker: marker, Bridges: []ovs.Bridge{{
		Name: brName, Node: "prime", Datapath: ovs.DatapathNetdev, FailMode: "standalone",
		Ports: []ovs.Port{{Name: names[0][0], Iface: "in"}, {Name: names[1][0], Iface: "out"}},
	}}}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, cfg, err := c.Delete(dctx, marker); err == nil && cfg > 0 {
			c.WaitApplied(dctx, cfg)
		}
	}()
	cfg, err := c.Create(ctx, lab)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.WaitApplied(wctx, cfg); err != nil {
		return err
	}
	if bad, err := c.WaitInterfaces(wctx, []string{names[0][0], names[1][0]}); err != nil || len(bad) > 0 {
		return fmt.Errorf("priming bridge: %v %v", err, bad)
	}
	var in *net.Interface
	var fd int
	err = do(hostNetns, func() error {
		var err error
		if in, err = net.InterfaceByName(names[0][1]); err != nil {
			return err
		}
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	frame := make([]byte, 60)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(frame[6:], in.HardwareAddr)
	frame[12], frame[13] = 0x88, 0xb5 // IEEE local experimental ethertype
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		unix.Sendto(fd, frame, 0, &unix.SockaddrLinklayer{Ifindex: in.Index, Protocol: 0xb588})
		if _, err := packetSendSocket(pid); err == nil {
			return nil
		}
	}
	return errors.New("no frame went through the priming bridge in 5s")
}

// embeddedSendBufferSet returns the send buffer emuctl gave the running
// embedded ovs-vswitchd (0 when unknown).
func embeddedSendBufferSet() int {
	b, err := os.ReadFile(filepath.Join(embeddedOVS().Dir, sndbufFile))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// sendBufferWarning says how many frames the netdev datapath's OVS queues
// can hold together, when that is below what queue experiments need.
func sendBufferWarning(embedded bool) string {
	if kernelDatapath() {
		return ""
	}
	if embedded {
		if embeddedSendBufferSet() >= embeddedSendBuffer {
			return ""
		}
		b, _ := os.ReadFile(filepath.Join(embeddedOVS().Dir, sndbufFile))
		why := strings.TrimSpace(strings.TrimPrefix(string(b), "0 "))
		return "userspace datapath: emuctl could not widen ovs-vswitchd's AF_PACKET send buffer (" + orNone(why) + "): all OVS QoS queues together hold at most about " + strconv.Itoa(framesIn(readWmemDefault())) + " full-size frames"
	}
	return "userspace datapath of a system Open vSwitch: its AF_PACKET send buffer (net.core.wmem_default when it started, now " + strconv.Itoa(readWmemDefault()) + " bytes) bounds all its QoS queues together to about " + strconv.Itoa(framesIn(readWmemDefault())) + " full-size frames; emuctl does not touch a system daemon"
}

func readWmemDefault() int {
	n, _ := strconv.Atoi(readFile("/proc/sys/net/core/wmem_default"))
	return n
}

// framesIn estimates how many 1514-byte frames a send buffer holds (each
// skb is charged its truesize, about 2.3 KB).
func framesIn(buf int) int { return buf / 2304 }
