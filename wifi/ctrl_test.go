package wifi

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeDaemon answers control requests on a Unix datagram socket the way
// hostapd and wpa_supplicant do: to the sender's address. An event is sent
// before every reply, as to an attached monitor.
func fakeDaemon(t *testing.T, path string, answer func(cmd string) string) {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, from, err := c.ReadFromUnix(buf)
			if err != nil {
				return
			}
			_, _ = c.WriteToUnix([]byte("<3>CTRL-EVENT-SCAN-STARTED "), from)
			if reply := answer(string(buf[:n])); reply != "" {
				_, _ = c.WriteToUnix([]byte(reply), from)
			}
		}
	}()
}

func TestCtrlRequest(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "wlan0")
	fakeDaemon(t, sock, func(cmd string) string {
		switch cmd {
		case "STATUS":
			return "bssid=02:00:00:00:00:00\nfreq=2437\nssid=emulab\nwpa_state=COMPLETED\nkey_mgmt=WPA2-PSK\n"
		case "PING":
			return "PONG\n"
		case "SILENT":
			return ""
		case "BOGUS":
			return "UNKNOWN COMMAND\n"
		}
		return "FAIL\n"
	})
	t.Setenv("TMPDIR", dir)

	reply, err := CtrlRequest(sock, "STATUS", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	st := ParseStatus(reply)
	if st["wpa_state"] != "COMPLETED" || st["freq"] != "2437" || st["bssid"] != "02:00:00:00:00:00" || len(st) != 5 {
		t.Errorf("ParseStatus: %v", st)
	}
	if r, err := CtrlRequest(sock, "PING", time.Second); err != nil || r != "PONG\n" {
		t.Errorf("PING: %q %v", r, err)
	}
	for _, cmd := range []string{"BOGUS", "SET x y"} {
		if _, err := CtrlRequest(sock, cmd, time.Second); !errors.Is(err, ErrCtrlFailed) {
			t.Errorf("%s: %v, want ErrCtrlFailed", cmd, err)
		}
	}
	start := time.Now()
	if _, err := CtrlRequest(sock, "SILENT", 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "no reply to SILENT") {
		t.Errorf("no reply: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timeout took %v", d)
	}
	if _, err := CtrlRequest(filepath.Join(dir, "nothing"), "PING", time.Second); err == nil {
		t.Errorf("request to a missing socket succeeded")
	}
	// the local sockets are removed again
	left, _ := filepath.Glob(filepath.Join(dir, "emuctl-ctrl-*"))
	if len(left) != 0 {
		t.Errorf("local sockets left behind: %v", left)
	}

	if st, err := WaitStatus(sock, "wpa_state", "COMPLETED", time.Second, 0); err != nil || st["ssid"] != "emulab" {
		t.Errorf("WaitStatus: %v %v", st, err)
	}
	if _, err := WaitStatus(sock, "wpa_state", "SCANNING", 300*time.Millisecond, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "last: wpa_state=COMPLETED") {
		t.Errorf("WaitStatus for a state never reached: %v", err)
	}
}

func TestParseStatusEdges(t *testing.T) {
	st := ParseStatus("state=ENABLED\r\nbss[0]=ap1-wlan0\nno equals sign\n=novalue\nssid[0]=a=b\n")
	if st["state"] != "ENABLED" || st["bss[0]"] != "ap1-wlan0" || st["ssid[0]"] != "a=b" || len(st) != 3 {
		t.Errorf("%v", st)
	}
}

func TestFindCtrlSocket(t *testing.T) {
	dir := t.TempDir()
	if _, err := FindCtrlSocket(dir, "wlan0", -1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no socket: %v", err)
	}
	fakeDaemon(t, filepath.Join(dir, "wlan0"), func(string) string { return "" })
	if p, err := FindCtrlSocket(dir, "wlan0", -1); err != nil || p != filepath.Join(dir, "wlan0") {
		t.Errorf("single link: %s %v", p, err)
	}
	// hostapd 2.11 names an MLD link's socket after the interface
	if p, err := FindCtrlSocket(dir, "wlan0", 1); err != nil || p != filepath.Join(dir, "wlan0") {
		t.Errorf("2.11 link socket: %s %v", p, err)
	}
	fakeDaemon(t, filepath.Join(dir, "wlan0_link1"), func(string) string { return "" })
	if p, err := FindCtrlSocket(dir, "wlan0", 1); err != nil || p != filepath.Join(dir, "wlan0_link1") {
		t.Errorf("later link socket: %s %v", p, err)
	}
}

func TestParseMLOStatus(t *testing.T) {
	// wpa_supplicant 2.11's reply in the kernel lab (two links, associated
	// on link 0: link 1's freq is 0)
	reply := "link_id=1\nfreq=0\nap_link_addr=02:00:00:1B:a1:cf\nsta_link_addr=c6:b2:10:15:09:27\nlink_id=0\nfreq=2412\nap_link_addr=02:00:00:68:bb:60\nsta_link_addr=7e:2b:38:d6:1c:78\n"
	got := ParseMLOStatus(reply)
	want := []MLOLink{{0, 2412, "02:00:00:68:bb:60", "7e:2b:38:d6:1c:78"}, {1, 0, "02:00:00:1b:a1:cf", "c6:b2:10:15:09:27"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ParseMLOStatus = %+v, want %+v", got, want)
	}
	if l := ParseMLOStatus(""); len(l) != 0 {
		t.Errorf("empty reply: %+v", l)
	}
	p := PeerLinks(ParseStatus("flags=[AUTH][EHT]\npeer_addr[0]=7E:2b:38:d6:1c:78\npeer_addr[1]=c6:b2:10:15:09:27\nmax_simul_links=0\n"))
	if len(p) != 2 || p[0] != "7e:2b:38:d6:1c:78" || p[1] != "c6:b2:10:15:09:27" {
		t.Errorf("PeerLinks = %v", p)
	}
}
