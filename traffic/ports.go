package traffic

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
)

// reserved holds the ports handed to external servers (iperf3) by this
// process and not yet released, per node, so two concurrent flows never
// get the same one between probing and binding.
var reserved = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

// reservePort returns a port that is free for both TCP and UDP in a node
// (iperf3 uses both on one port) and not handed out already; an explicit
// port is checked the same way. release gives it back.
func reservePort(lab, node string, family netip.Addr, want int) (port int, release func(), err error) {
	for try := 0; try < 32; try++ {
		p, err := probePort(lab, node, family, want)
		if err != nil {
			return 0, nil, err
		}
		key := fmt.Sprintf("%s/%s/%d", lab, node, p)
		reserved.Lock()
		taken := reserved.m[key]
		if !taken {
			reserved.m[key] = true
		}
		reserved.Unlock()
		if !taken {
			return p, func() { reserved.Lock(); delete(reserved.m, key); reserved.Unlock() }, nil
		}
		if want != 0 {
			return 0, nil, fmt.Errorf("node %s: port %d is already used by another flow of this run", node, want)
		}
	}
	return 0, nil, fmt.Errorf("node %s: no free port found", node)
}

// probePort binds TCP (port want, or a kernel-chosen one) and UDP on the
// same port inside the node, then closes both.
func probePort(lab, node string, family netip.Addr, want int) (int, error) {
	var port int
	err := inNode(lab, node, func() error {
		ln, err := net.Listen(network(family, "tcp"), ":"+strconv.Itoa(want))
		if err != nil {
			return portError(node, "TCP", want, err)
		}
		defer ln.Close()
		port = int(addrPort(ln.Addr()).Port())
		uc, err := net.ListenPacket(network(family, "udp"), ":"+strconv.Itoa(port))
		if err != nil {
			return portError(node, "UDP", port, err)
		}
		return uc.Close()
	})
	return port, err
}

// listening reports whether a TCP socket listens on port in the calling
// thread's namespace.
func listening(port int) bool {
	for _, f := range []string{"/proc/thread-self/net/tcp", "/proc/thread-self/net/tcp6"} {
		if tcpListens(f, port) {
			return true
		}
	}
	return false
}

func tcpListens(path string, port int) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	return tcpListensIn(string(b), port)
}

// tcpListensIn reports whether /proc/net/tcp{,6} text has a socket
// listening on port.
func tcpListensIn(text string, port int) bool {
	want := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) > 3 && strings.HasSuffix(fl[1], want) && fl[3] == "0A" {
			return true
		}
	}
	return false
}
