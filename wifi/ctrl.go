package wifi

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// ErrCtrlFailed is wrapped by CtrlRequest errors when the daemon answered
// FAIL... or UNKNOWN COMMAND.
var ErrCtrlFailed = errors.New("control command failed")

var ctrlSeq atomic.Uint64

// CtrlRequest sends one command (such as "STATUS" or "PING") to a hostapd
// or wpa_supplicant control socket and returns the reply. The control
// interface is a Unix datagram socket, path-based, so it works from any
// network namespace: the request goes from a socket bound to a fresh path
// in os.TempDir() (or /tmp, when that path would be too long), removed
// again before returning. Unsolicited event messages ("<N>...", sent only
// to attached monitors) are skipped. A reply of FAIL... or UNKNOWN COMMAND
// is returned with an error wrapping ErrCtrlFailed. timeout bounds the
// whole exchange (0: 5 s).
func CtrlRequest(ctrlPath, cmd string, timeout time.Duration) (string, error) {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	local := ctrlLocalPath()
	_ = os.Remove(local)
	c, err := net.DialUnix("unixgram",
		&net.UnixAddr{Name: local, Net: "unixgram"},
		&net.UnixAddr{Name: ctrlPath, Net: "unixgram"})
	if err != nil {
		_ = os.Remove(local)
		return "", fmt.Errorf("control socket %s: %w", ctrlPath, err)
	}
	defer os.Remove(local)
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", fmt.Errorf("control socket %s: send %s: %w", ctrlPath, firstWord(cmd), err)
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return "", fmt.Errorf("control socket %s: no reply to %s within %v: %w", ctrlPath, firstWord(cmd), timeout, err)
		}
		reply := string(buf[:n])
		if strings.HasPrefix(reply, "<") {
			continue // an event, not the reply
		}
		if strings.HasPrefix(reply, "FAIL") || strings.HasPrefix(reply, "UNKNOWN COMMAND") {
			return reply, fmt.Errorf("%w: %s on %s: %s", ErrCtrlFailed, firstWord(cmd), ctrlPath, strings.TrimSpace(reply))
		}
		return reply, nil
	}
}

// ctrlLocalPath is a path no other request of this or another process
// uses.
func ctrlLocalPath() string {
	name := fmt.Sprintf("emuctl-ctrl-%d-%d", os.Getpid(), ctrlSeq.Add(1))
	p := filepath.Join(os.TempDir(), name)
	if len(p) > sunPathMax {
		p = filepath.Join("/tmp", name)
	}
	return p
}

func firstWord(cmd string) string {
	w, _, _ := strings.Cut(cmd, " ")
	return w
}

// ParseStatus parses the key=value lines of a STATUS (or STA, GET_CONFIG,
// SIGNAL_POLL ...) reply. Lines without '=' are skipped; a key's last
// value wins.
func ParseStatus(reply string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(reply, "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), "=")
		if ok && k != "" {
			m[k] = v
		}
	}
	return m
}

// WaitStatus polls STATUS on a control socket every interval (0: 100 ms)
// until key has the value want, for example wpa_state=COMPLETED (a station
// associated and keyed) or state=ENABLED (an access point up), and returns
// that STATUS. After timeout the error names the last value seen or the
// last error (the socket appears only once the daemon has started).
func WaitStatus(ctrlPath, key, want string, timeout, interval time.Duration) (map[string]string, error) {
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	deadline := time.Now().Add(timeout)
	last := "no reply yet"
	for {
		reply, err := CtrlRequest(ctrlPath, "STATUS", min(2*time.Second, max(time.Until(deadline), 10*time.Millisecond)))
		if err == nil {
			st := ParseStatus(reply)
			if st[key] == want {
				return st, nil
			}
			last = fmt.Sprintf("%s=%s", key, st[key])
		} else {
			last = err.Error()
		}
		if time.Now().Add(interval).After(deadline) {
			return nil, fmt.Errorf("%s: %s=%s not reached within %v (last: %s)", ctrlPath, key, want, timeout, last)
		}
		time.Sleep(interval)
	}
}

// FindCtrlSocket returns the control socket of a hostapd BSS or a
// wpa_supplicant interface in dir (a ctrl_interface directory): dir/<iface>,
// or for link N of an AP MLD (link ≥ 0) dir/<iface>_link<N> as hostapd
// after 2.11 names it, falling back to dir/<iface> as 2.11 does. An error
// wrapping os.ErrNotExist when neither exists (yet).
func FindCtrlSocket(dir, iface string, link int) (string, error) {
	var cands []string
	if link >= 0 {
		cands = append(cands, filepath.Join(dir, fmt.Sprintf("%s_link%d", iface, link)))
	}
	cands = append(cands, filepath.Join(dir, iface))
	for _, p := range cands {
		if st, err := os.Stat(p); err == nil && st.Mode()&os.ModeSocket != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("no control socket %s: %w", strings.Join(cands, " or "), os.ErrNotExist)
}
