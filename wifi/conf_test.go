package wifi

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/topo"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// ch resolves a channel through the topology's channel plan, as topo does.
func ch(t testing.TB, mode, band string, channel, width int) topo.WiFiChannel {
	t.Helper()
	c, msg := topo.ResolveChannel(mode, band, channel, width)
	if msg != "" {
		t.Fatalf("test channel %s %s/%d/%d: %s", mode, band, channel, width, msg)
	}
	return c
}

func testAP(t testing.TB, mode, sec string, c topo.WiFiChannel) *topo.WiFiAP {
	ap := &topo.WiFiAP{SSID: "emulab", Mode: mode, Security: sec, Channel: c, Country: "US",
		Iface: "ap1-wlan0", Bridge: "ap1", Pos: "lab.yaml:3:5"}
	if sec != topo.WiFiOpen {
		ap.Passphrase = "correct horse battery"
	}
	return ap
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./wifi -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./wifi -update rewrites it)\n--- got:\n%s\n--- want:\n%s", name, got, want)
	}
}

func TestHostapdConfigGolden(t *testing.T) {
	const ctrl = "/run/emuctl/lab/ap1/ctrl"
	cases := []struct {
		file string
		ap   func(t *testing.T) *topo.WiFiAP
	}{
		{"hostapd-g-wpa2.conf", func(t *testing.T) *topo.WiFiAP {
			return testAP(t, topo.WiFiModeG, topo.WiFiWPA2, ch(t, "g", "2.4", 6, 20))
		}},
		{"hostapd-a-open.conf", func(t *testing.T) *topo.WiFiAP {
			return testAP(t, topo.WiFiModeA, topo.WiFiOpen, ch(t, "a", "5", 36, 20))
		}},
		{"hostapd-b-short-wpa2.conf", func(t *testing.T) *topo.WiFiAP {
			ap := testAP(t, topo.WiFiModeB, topo.WiFiWPA2, ch(t, "b", "2.4", 1, 20))
			ap.ShortPreamble = true
			return ap
		}},
		{"hostapd-n20-open.conf", func(t *testing.T) *topo.WiFiAP {
			ap := testAP(t, topo.WiFiModeN, topo.WiFiOpen, ch(t, "n", "2.4", 11, 20))
			ap.Bridge, ap.Routed = "", true
			return ap
		}},
		{"hostapd-n40-24-minus.conf", func(t *testing.T) *topo.WiFiAP {
			return testAP(t, topo.WiFiModeN, topo.WiFiWPA2, ch(t, "n", "2.4", 11, 40))
		}},
		{"hostapd-n40-5-open.conf", func(t *testing.T) *topo.WiFiAP {
			return testAP(t, topo.WiFiModeN, topo.WiFiOpen, ch(t, "n", "5", 36, 40))
		}},
		{"hostapd-ac80-wpa2.conf", func(t *testing.T) *topo.WiFiAP {
			return testAP(t, topo.WiFiModeAC, topo.WiFiWPA2, ch(t, "ac", "5", 36, 80))
		}},
		{"hostapd-ac160-primary44.conf", func(t *testing.T) *topo.WiFiAP {
			return testAP(t, topo.WiFiModeAC, topo.WiFiWPA2, ch(t, "ac", "5", 44, 160))
		}},
		{"hostapd-ax5-80-wpa3.conf", func(t *testing.T) *topo.WiFiAP {
			return testAP(t, topo.WiFiModeAX, topo.WiFiWPA3, ch(t, "ax", "5", 36, 80))
		}},
		{"hostapd-ax24-20-wpa2.conf", func(t *testing.T) *topo.WiFiAP {
			return testAP(t, topo.WiFiModeAX, topo.WiFiWPA2, ch(t, "ax", "2.4", 1, 20))
		}},
		{"hostapd-ax6-80-wpa3.conf", func(t *testing.T) *topo.WiFiAP {
			return testAP(t, topo.WiFiModeAX, topo.WiFiWPA3, ch(t, "ax", "6", 37, 80))
		}},
		{"hostapd-be6-320-wpa3.conf", func(t *testing.T) *topo.WiFiAP {
			return testAP(t, topo.WiFiModeBE, topo.WiFiWPA3, ch(t, "be", "6", 5, 320))
		}},
		{"hostapd-be5-160-wpa3.conf", func(t *testing.T) *topo.WiFiAP {
			return testAP(t, topo.WiFiModeBE, topo.WiFiWPA3, ch(t, "be", "5", 100, 160))
		}},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".conf"), func(t *testing.T) {
			got, err := HostapdConfig(c.ap(t), ctrl)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.file, got)
		})
	}
}

func mloAP(t testing.TB) *topo.WiFiAP {
	links := []topo.WiFiChannel{ch(t, "be", "5", 36, 80), ch(t, "be", "6", 37, 160)}
	ap := testAP(t, topo.WiFiModeBE, topo.WiFiWPA3, links[0])
	ap.Links = links
	return ap
}

func TestHostapdConfigsMLO(t *testing.T) {
	ap := mloAP(t)
	files, err := HostapdConfigs(ap, "/run/emuctl/lab/ap1/ctrl")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("%d files, want one per link (2)", len(files))
	}
	for i, f := range files {
		if f.LinkID != i || f.Name != "hostapd-link"+string(rune('0'+i))+".conf" {
			t.Errorf("file %d: name %s link %d", i, f.Name, f.LinkID)
		}
		if want := "/run/emuctl/lab/ap1/ctrl/link" + string(rune('0'+i)); f.CtrlDir != want {
			t.Errorf("file %d: ctrl dir %s, want %s", i, f.CtrlDir, want)
		}
		if !bytes.Contains(f.Data, []byte("\nctrl_interface="+f.CtrlDir+"\n")) {
			t.Errorf("file %d does not use its control directory", i)
		}
		golden(t, "hostapd-be-mlo-"+f.Name, f.Data)
	}
	if _, err := HostapdConfig(ap, "/x"); err == nil || !strings.Contains(err.Error(), "HostapdConfigs") {
		t.Errorf("HostapdConfig of a multi-link AP: %v, want an error pointing to HostapdConfigs", err)
	}
	single, err := HostapdConfigs(testAP(t, "g", "open", ch(t, "g", "2.4", 1, 20)), "/c")
	if err != nil || len(single) != 1 || single[0].LinkID != -1 || single[0].Name != "hostapd.conf" || single[0].CtrlDir != "/c" {
		t.Errorf("single-link AP: %+v %v", single, err)
	}
	if got := APFreqs(ap); len(got) != 2 || got[0] != 5180 || got[1] != 6135 {
		t.Errorf("APFreqs(MLO) = %v", got)
	}
}

func TestWpaSupplicantConfigGolden(t *testing.T) {
	const ctrl = "/run/emuctl/lab/sta1/ctrl"
	sta := func(sec string) *topo.WiFiStation {
		s := &topo.WiFiStation{AP: "ap1", SSID: "emulab", Security: sec, Iface: "sta1-wlan0", Pos: "lab.yaml:9:5"}
		if sec != topo.WiFiOpen {
			s.Passphrase = `correct horse \battery`
		}
		return s
	}
	cases := []struct {
		file  string
		sta   *topo.WiFiStation
		freqs []int
	}{
		{"wpas-open.conf", sta(topo.WiFiOpen), []int{2437}},
		{"wpas-wpa2.conf", sta(topo.WiFiWPA2), []int{5180}},
		{"wpas-wpa3.conf", sta(topo.WiFiWPA3), []int{5180}},
		{"wpas-wpa3-6ghz.conf", sta(topo.WiFiWPA3), []int{6135}},
		{"wpas-mlo.conf", func() *topo.WiFiStation { s := sta(topo.WiFiWPA3); s.MLO = true; return s }(), APFreqs(mloAP(t))},
		{"wpas-roaming.conf", func() *topo.WiFiStation {
			s := sta(topo.WiFiWPA2)
			s.ESS, s.Roaming = []string{"ap1", "ap2"}, &topo.WiFiRoaming{HysteresisDB: 3}
			return s
		}(), []int{2412, 2437}},
		{"wpas-anyfreq-hexssid.conf", func() *topo.WiFiStation { s := sta(topo.WiFiOpen); s.SSID = "café \"x\""; return s }(), nil},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".conf"), func(t *testing.T) {
			got, err := WpaSupplicantConfig(c.sta, ctrl, c.freqs)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.file, got)
		})
	}
}

func TestHostapdConfigRejects(t *testing.T) {
	base := func(t *testing.T) *topo.WiFiAP {
		return testAP(t, topo.WiFiModeAX, topo.WiFiWPA2, ch(t, "ax", "5", 36, 80))
	}
	cases := []struct {
		name  string
		edit  func(ap *topo.WiFiAP)
		ctrl  string
		wants string
	}{
		{"mode", func(ap *topo.WiFiAP) { ap.Mode = "ad" }, "", `mode "ad" is not a Wi-Fi mode`},
		{"mode band", func(ap *topo.WiFiAP) { ap.Mode = "g" }, "", "mode g does not run on the 5 GHz band"},
		{"channel", func(ap *topo.WiFiAP) { ap.Channel.Channel = 37 }, "", "channel 37 is not a 5 GHz channel"},
		{"inconsistent centre", func(ap *topo.WiFiAP) { ap.Channel.CenterChannel = 38 }, "", "centre channel 42, not 5180 MHz and 38"},
		{"width", func(ap *topo.WiFiAP) { ap.Channel.Channel, ap.Channel.Width = 144, 160 }, "", "channel 144 has no 160 MHz block on 5 GHz"},
		{"width for mode", func(ap *topo.WiFiAP) { ap.Channel.Width = 320 }, "", "width 320 MHz is not available in mode ax"},
		{"security", func(ap *topo.WiFiAP) { ap.Security = "wep" }, "", `security "wep" is not one of open, wpa2, wpa3`},
		{"short passphrase", func(ap *topo.WiFiAP) { ap.Passphrase = "short" }, "", "passphrase of 8-63 characters, this one has 5"},
		{"quote in passphrase", func(ap *topo.WiFiAP) { ap.Passphrase = `abc"defgh` }, "", "without double quotes"},
		{"newline in passphrase", func(ap *topo.WiFiAP) { ap.Passphrase = "abcdefgh\nchannel=1" }, "", "printable ASCII"},
		{"open with passphrase", func(ap *topo.WiFiAP) { ap.Security = "open" }, "", "passphrase is set but security is open"},
		{"ssid", func(ap *topo.WiFiAP) { ap.SSID = strings.Repeat("x", 33) }, "", "802.11 allows 1-32"},
		{"country", func(ap *topo.WiFiAP) { ap.Country = "usa" }, "", `country "usa" is not a two-letter`},
		{"iface", func(ap *topo.WiFiAP) { ap.Iface = "a-very-long-interface" }, "", "not a valid Linux interface name"},
		{"6 GHz wpa2", func(ap *topo.WiFiAP) { ap.Channel = ch(t, "ax", "6", 5, 20) }, "", "6 GHz, which allows only WPA3"},
		{"ctrl path", func(ap *topo.WiFiAP) {}, "/" + strings.Repeat("d", 100), "more than a Unix socket address holds"},
		{"ctrl newline", func(ap *topo.WiFiAP) {}, "/a\nb", "non-empty path on one line"},
		{"one link", func(ap *topo.WiFiAP) { ap.Links = []topo.WiFiChannel{ap.Channel} }, "", "a multi-link AP needs two or more"},
		{"mlo not be", func(ap *topo.WiFiAP) { ap.Links = []topo.WiFiChannel{ap.Channel, ch(t, "ax", "2.4", 1, 20)} }, "", "needs mode be, not ax"},
		{"mlo wpa2", func(ap *topo.WiFiAP) {
			ap.Mode = "be"
			ap.Channel = ch(t, "be", "5", 36, 80)
			ap.Links = []topo.WiFiChannel{ap.Channel, ch(t, "be", "2.4", 1, 20)}
		}, "", "multi-link AP needs security wpa3, not wpa2"},
		{"mlo same channel", func(ap *topo.WiFiAP) {
			ap.Mode, ap.Security = "be", "wpa3"
			ap.Channel = ch(t, "be", "5", 36, 80)
			ap.Links = []topo.WiFiChannel{ap.Channel, ap.Channel}
		}, "", "link 1 is on the same channel as link 0"},
		{"mlo first link", func(ap *topo.WiFiAP) {
			ap.Mode, ap.Security = "be", "wpa3"
			ap.Links = []topo.WiFiChannel{ch(t, "be", "2.4", 1, 20), ch(t, "be", "2.4", 6, 20)}
		}, "", "is not the first link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ap := base(t)
			c.edit(ap)
			ctrl := c.ctrl
			if ctrl == "" {
				ctrl = "/run/x"
			}
			_, err := HostapdConfigs(ap, ctrl)
			if err == nil || !strings.Contains(err.Error(), c.wants) {
				t.Fatalf("err = %v, want one containing %q", err, c.wants)
			}
			if !strings.Contains(err.Error(), `hostapd config for "`) || !strings.Contains(err.Error(), `(lab.yaml:3:5)`) {
				t.Errorf("error does not name the AP: %v", err)
			}
		})
	}
	if _, err := HostapdConfig(nil, "/x"); err == nil {
		t.Errorf("nil AP accepted")
	}
}

func TestWpaSupplicantConfigRejects(t *testing.T) {
	sta := &topo.WiFiStation{SSID: "emulab", Security: topo.WiFiWPA2, Passphrase: "12345678", Iface: "sta1-wlan0"}
	cases := []struct {
		edit  func(s *topo.WiFiStation)
		freqs []int
		wants string
	}{
		{func(s *topo.WiFiStation) {}, []int{2400}, "2400 MHz is not a Wi-Fi channel's"},
		{func(s *topo.WiFiStation) {}, []int{2412, 2412}, "listed twice"},
		{func(s *topo.WiFiStation) {}, []int{5955}, "6 GHz, which allows only WPA3"},
		{func(s *topo.WiFiStation) { s.Passphrase = "" }, nil, "needs a passphrase of 8-63"},
		{func(s *topo.WiFiStation) { s.Security = "wpa3"; s.MLO = true }, []int{5180}, "needs every link's frequency"},
		{func(s *topo.WiFiStation) { s.SSID = "" }, nil, "802.11 allows 1-32"},
	}
	for _, c := range cases {
		s := *sta
		c.edit(&s)
		if _, err := WpaSupplicantConfig(&s, "/run/x", c.freqs); err == nil || !strings.Contains(err.Error(), c.wants) {
			t.Errorf("err = %v, want one containing %q", err, c.wants)
		}
	}
}

func TestHTSecondary(t *testing.T) {
	cases := []struct {
		band        string
		ch, width   int
		above       bool
		description string
	}{
		{"2.4", 1, 40, true, "HT40+ where it fits"},
		{"2.4", 13, 40, false, "HT40- at the top"},
		{"5", 36, 80, true, "lowest of an 80 MHz block"},
		{"5", 40, 80, false, "second of the 36/40 pair"},
		{"5", 48, 80, false, "second of the 44/48 pair"},
		{"5", 153, 80, false, "second of the 149/153 pair"},
		{"5", 157, 80, true, "first of the 157/161 pair"},
		{"5", 100, 160, true, "first of the 100/104 pair"},
	}
	for _, c := range cases {
		mode := "ac"
		if c.band == "2.4" {
			mode = "n"
		}
		got := htSecondaryAbove(ch(t, mode, c.band, c.ch, c.width))
		if got != c.above {
			t.Errorf("%s GHz channel %d/%d (%s): above = %v", c.band, c.ch, c.width, c.description, got)
		}
	}
}

// TestWpaSupplicantConfigNetworks: a station of several networks gets one
// network block each, with that network's security, the bgscan module and
// the channels of every access point in each.
func TestWpaSupplicantConfigNetworks(t *testing.T) {
	sta := &topo.WiFiStation{Iface: "sta1-wlan0", SSID: "campus-a", Security: topo.WiFiWPA2, Passphrase: "roaming-both",
		Networks: []string{"campus-a", "campus-b"}, ESS: []string{"ap1", "ap2"}, Roaming: &topo.WiFiRoaming{}}
	b, err := WpaSupplicantConfig(sta, "/run/x/ctrl", []int{2412, 2437}, StaNetwork{SSID: "campus-b", Security: topo.WiFiWPA2, Passphrase: "roaming-both"})
	if err != nil {
		t.Fatal(err)
	}
	c := string(b)
	if strings.Count(c, "network={") != 2 || !strings.Contains(c, `ssid="campus-a"`) || !strings.Contains(c, `ssid="campus-b"`) ||
		strings.Count(c, `psk="roaming-both"`) != 2 || strings.Count(c, "bgscan=") != 2 || strings.Count(c, "freq_list=2412 2437") != 2 {
		t.Errorf("config:\n%s", c)
	}
	if _, err := WpaSupplicantConfig(sta, "/run/x/ctrl", nil, StaNetwork{SSID: "", Security: topo.WiFiOpen}); err == nil {
		t.Error("an empty SSID for the second network was accepted")
	}
}
