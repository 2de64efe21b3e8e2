package kernellab

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/wifi"
)

// radioIn creates a hwsim radio called name from the root namespace (so
// all radios share one netgroup and hear each other), moves its wiphy into
// ns and returns the name of its interface there. The radio is deleted when
// t ends.
func radioIn(t *testing.T, name string, ns *testNS) string {
	t.Helper()
	h, err := wifi.DialHwsim(0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	id, err := h.NewRadio(wifi.RadioConfig{Name: name, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteRadio(t, name, ns) })
	w, err := wifi.WiphyByName(0, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := wifi.SetWiphyNetns(0, w.Index, int(ns.H)); err != nil {
		t.Fatal(err)
	}
	if _, err := wifi.WiphyByName(int(ns.H), name); err != nil {
		t.Fatalf("after the move: %v", err)
	}
	links, err := ns.NL.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	var ifs []string
	for _, l := range links {
		if l.Attrs().Name != "lo" {
			ifs = append(ifs, l.Attrs().Name)
		}
	}
	if len(ifs) != 1 {
		t.Fatalf("%s: want the radio's one interface, have %v", ns.Name, ifs)
	}
	t.Logf("radio %s: hwsim id %d, wiphy %d, interface %s in %s", name, id, w.Index, ifs[0], ns.Name)
	return ifs[0]
}

// deleteRadio deletes the radio from the namespace it was moved to, or
// from the root namespace if it went back there, and checks that it is gone.
func deleteRadio(t *testing.T, name string, ns *testNS) {
	for _, fd := range []int{int(ns.H), 0} {
		h, err := wifi.DialHwsim(fd)
		if err != nil {
			continue
		}
		err = h.DelRadio(name)
		h.Close()
		if err == nil {
			break
		}
	}
	if _, err := os.Stat("/sys/class/ieee80211/" + name); err == nil {
		t.Errorf("radio %s still exists after deletion", name)
	}
}

// TestLabHwsimWPA2: two radios in two namespaces, hostapd (WPA2-PSK access
// point) in one and wpa_supplicant in the other; association, then ping.
func TestLabHwsimWPA2(t *testing.T) {
	RequireLab(t, "creates mac80211_hwsim radios")
	err := wifi.ProbeHwsim()
	Require(t, "mac80211_hwsim", err == nil, errString(err))
	requireTools(t, "hostapd", "hostapd")
	requireTools(t, "wpasupplicant", "wpa_supplicant")

	apNS, staNS := newNS(t, "wifi-ap"), newNS(t, "wifi-sta")
	apIf := radioIn(t, prefix+"ap", apNS)
	staIf := radioIn(t, prefix+"sta", staNS)

	dir := t.TempDir()
	dumpOnFailure(t, filepath.Join(dir, "hostapd.log"), filepath.Join(dir, "wpa_supplicant.log"))
	writeFile(t, filepath.Join(dir, "hostapd.conf"), fmt.Sprintf(`interface=%s
driver=nl80211
ctrl_interface=%s
ssid=emuctl-lab
hw_mode=g
channel=6
wpa=2
wpa_key_mgmt=WPA-PSK
rsn_pairwise=CCMP
wpa_passphrase=kernel-lab-secret
`, apIf, filepath.Join(dir, "hostapd")))
	writeFile(t, filepath.Join(dir, "wpa.conf"), fmt.Sprintf(`ctrl_interface=%s
network={
	ssid="emuctl-lab"
	key_mgmt=WPA-PSK
	psk="kernel-lab-secret"
}
`, filepath.Join(dir, "wpas")))

	startProc(t, apNS, nil, filepath.Join(dir, "hostapd.log"), "hostapd", filepath.Join(dir, "hostapd.conf"))
	apCtrl := filepath.Join(dir, "hostapd", apIf)
	waitFor(t, 30*time.Second, "hostapd to enable the AP", func() (bool, error) {
		st, err := ctrlRequest(apCtrl, "STATUS")
		return strings.Contains(st, "state=ENABLED"), err
	})
	startProc(t, staNS, nil, filepath.Join(dir, "wpa_supplicant.log"),
		"wpa_supplicant", "-D", "nl80211", "-i", staIf, "-c", filepath.Join(dir, "wpa.conf"))
	staCtrl := filepath.Join(dir, "wpas", staIf)
	took := waitFor(t, 60*time.Second, "association (wpa_state=COMPLETED)", func() (bool, error) {
		st, err := ctrlRequest(staCtrl, "STATUS")
		return strings.Contains(st, "wpa_state=COMPLETED"), err
	})
	st, _ := ctrlRequest(staCtrl, "STATUS")
	t.Logf("associated after %v:\n%s", took.Round(time.Millisecond), st)
	if !strings.Contains(st, "key_mgmt=WPA2-PSK") {
		t.Errorf("station not using WPA2-PSK")
	}

	apNS.addr(t, apIf, "10.73.0.1/24")
	staNS.addr(t, staIf, "10.73.0.2/24")
	rtts, err := icmpEcho(staNS, net.ParseIP("10.73.0.1"), 5, 100*time.Millisecond, 3*time.Second)
	if err != nil {
		t.Fatalf("ping over Wi-Fi: %v", err)
	}
	t.Logf("ping station -> AP over hwsim: %v", rtts)
	if _, err := icmpEcho(apNS, net.ParseIP("10.73.0.2"), 1, 0, 3*time.Second); err != nil {
		t.Fatalf("ping AP -> station: %v", err)
	}
}

// TestLabHwsimMLORadio creates and deletes a radio that claims MLO. The lab's
// hostapd (Debian 12: 2.10) cannot run an MLO access point, so association
// over MLO is not tested; this checks what the kernel reports.
func TestLabHwsimMLORadio(t *testing.T) {
	RequireLab(t, "creates mac80211_hwsim radios")
	err := wifi.ProbeHwsim()
	Require(t, "mac80211_hwsim", err == nil, errString(err))
	h, err := wifi.DialHwsim(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	name := prefix + "mlo"
	id, err := h.NewRadio(wifi.RadioConfig{Name: name, MLO: true, NoVif: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := os.Stat("/sys/class/ieee80211/" + name); err == nil {
			_ = h.DelRadio(name) // the test failed before deleting it
		}
	})
	w, err := wifi.WiphyByName(0, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("radio %s: hwsim id %d, wiphy %d, kernel reports MLO support: %v", name, id, w.Index, w.MLO)
	if !w.MLO {
		t.Errorf("the kernel did not take HWSIM_ATTR_MLO_SUPPORT")
	}
	if err := h.DelRadioID(id); err != nil {
		t.Fatal(err)
	}
	if _, err := wifi.WiphyByName(0, name); err == nil {
		t.Errorf("radio %s still listed after DEL_RADIO", name)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ctrlRequest sends one command to a hostapd/wpa_supplicant control socket
// (a unix datagram socket; path-based, so usable across namespaces).
func ctrlRequest(sock, cmd string) (string, error) {
	local := filepath.Join(filepath.Dir(filepath.Dir(sock)), fmt.Sprintf("ctrl-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6))
	c, err := net.DialUnix("unixgram", &net.UnixAddr{Name: local, Net: "unixgram"}, &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		return "", err
	}
	defer os.Remove(local)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", err
	}
	buf := make([]byte, 8192)
	n, err := c.Read(buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
