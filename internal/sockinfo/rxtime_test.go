package sockinfo

import (
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A datagram over loopback to a socket with SO_TIMESTAMPNS carries the
// kernel's receive time, between its sending and its reading; a buffer
// without one says so.
func TestRxTime(t *testing.T) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, _ := c.SyscallConn()
	rc.Control(func(fd uintptr) { err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) })
	if err != nil {
		t.Fatal(err)
	}
	buf, oob := make([]byte, 16), make([]byte, RxTimeOOB)
	// the kernel turns receive timestamps on a little after the first
	// socket asks (net_enable_timestamp's deferred work): until then it
	// stamps a datagram when it is read; a first datagram waits for that
	for try := 0; ; try++ {
		if _, err := c.WriteToUDP([]byte("w"), c.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		_, oobn, _, _, err := c.ReadMsgUDP(buf, oob)
		if err != nil {
			t.Fatal(err)
		}
		ns, _ := RxTime(oob[:oobn])
		if time.Since(time.Unix(0, ns)) >= 15*time.Millisecond || try == 50 {
			break
		}
	}
	before := time.Now()
	if _, err := c.WriteToUDP([]byte("x"), c.LocalAddr().(*net.UDPAddr)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // read late: the time is the arrival's
	_, oobn, _, _, err := c.ReadMsgUDP(buf, oob)
	read := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	ns, ok := RxTime(oob[:oobn])
	at := time.Unix(0, ns)
	if !ok || at.Before(before.Add(-time.Millisecond)) || !at.Before(read.Add(-15*time.Millisecond)) {
		t.Errorf("receive time %v (ok %v): sent at %v, read at %v", at, ok, before, read)
	}
	if _, ok := RxTime(nil); ok {
		t.Error("a time read from no control message")
	}
}
