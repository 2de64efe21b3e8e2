package wifi

import (
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/topo"
)

func TestParseVersion(t *testing.T) {
	cases := []struct {
		name, out, want string
		major, minor    int
	}{
		{"hostapd", "hostapd v2.10\nUser space daemon for IEEE 802.11 AP management,\n", "2.10", 2, 10},
		{"wpa_supplicant", "wpa_supplicant v2.11\nCopyright (c) 2003-2024\n", "2.11", 2, 11},
		{"hostapd", "hostapd v2.11-devel-hostap_2_10-1234-gabcdef\n", "2.11-devel-hostap_2_10-1234-gabcdef", 2, 11},
		{"hostapd", "usage: hostapd [-hdBKtv]\n", "", 0, 0},
		{"hostapd", "wpa_supplicant v2.10\n", "", 0, 0},
	}
	for _, c := range cases {
		v, major, minor := parseVersion(c.name, []byte(c.out))
		if v != c.want || major != c.major || minor != c.minor {
			t.Errorf("parseVersion(%s, %q) = %q %d.%d, want %q %d.%d", c.name, c.out, v, major, minor, c.want, c.major, c.minor)
		}
	}
}

// fakeBinary is a byte soup with the given NUL-terminated strings, as a
// linker lays out .rodata.
func fakeBinary(strs ...string) []byte {
	b := []byte("\x7fELF\x02\x01\x01\x00junk\x00")
	for _, s := range strs {
		b = append(b, s...)
		b = append(b, 0)
	}
	return b
}

func TestSetFeatures(t *testing.T) {
	h210 := Tool{Name: "hostapd", Version: "2.10", Major: 2, Minor: 10}
	h210.setFeatures(fakeBinary("vht_oper_chwidth", "he_oper_chwidth", "SAE: pwd-seed", "sae_pwe"))
	if !h210.VHT || !h210.HE || h210.EHT || h210.MLO || !h210.SAE || !h210.H2E {
		t.Errorf("hostapd 2.10 with AX and SAE: %+v", h210)
	}
	// 2.11 with 802.11be: "he_oper_chwidth" may be stored as the tail of
	// "eht_oper_chwidth" and never appear on its own.
	h211 := Tool{Name: "hostapd", Version: "2.11", Major: 2, Minor: 11}
	h211.setFeatures(fakeBinary("vht_oper_chwidth", "eht_oper_chwidth", "mld_ap", "SAE: pwd-seed", "sae_pwe"))
	if !h211.HE || !h211.EHT || !h211.MLD || h211.MLO {
		t.Errorf("hostapd 2.11 with BE: MLD code but no MLO (it crashes on reconnects): %+v", h211)
	}
	h212 := Tool{Name: "hostapd", Version: "2.12", Major: 2, Minor: 12}
	h212.setFeatures(fakeBinary("eht_oper_chwidth", "mld_ap", "SAE: pwd-seed", "sae_pwe", "LINK_REMOVE "))
	if !h212.MLD || !h212.MLO || !h212.LinkRemove {
		t.Errorf("hostapd 2.12 with BE and testing options: %+v", h212)
	}
	dev := Tool{Name: "hostapd", Version: "2.13-devel", Major: 2, Minor: 13}
	dev.setFeatures(fakeBinary("eht_oper_chwidth", "mld_ap"))
	if !dev.MLO || dev.LinkRemove {
		t.Errorf("hostapd 2.13-devel with BE, no testing options: %+v", dev)
	}
	noBE := Tool{Name: "hostapd", Version: "2.11", Major: 2, Minor: 11}
	noBE.setFeatures(fakeBinary("he_oper_chwidth"))
	if noBE.EHT || noBE.MLO || noBE.SAE {
		t.Errorf("hostapd 2.11 without BE and SAE: %+v", noBE)
	}
	// a key must end at a NUL: "mld_ap_foo" is not "mld_ap"
	odd := Tool{Name: "hostapd", Version: "2.11", Major: 2, Minor: 11}
	odd.setFeatures(fakeBinary("eht_oper_chwidth", "mld_ap_foo"))
	if odd.MLO {
		t.Errorf("mld_ap_foo taken for mld_ap")
	}
	w211 := Tool{Name: "wpa_supplicant", Version: "2.11", Major: 2, Minor: 11}
	w211.setFeatures(fakeBinary("MLD: No valid key management", "SAE: pwd-seed", "sae_pwe"))
	w210 := Tool{Name: "wpa_supplicant", Version: "2.10", Major: 2, Minor: 10}
	w210.setFeatures(fakeBinary("SAE: pwd-seed"))
	if !w211.MLO || !w211.H2E || w210.MLO || w210.H2E || !w210.SAE {
		t.Errorf("wpa_supplicant: 2.11 %+v, 2.10 %+v", w211, w210)
	}
}

func TestProbeToolsFindsScriptsAndVersions(t *testing.T) {
	dir := t.TempDir()
	// a fake hostapd: prints its version to stderr and exits 1, as hostapd does
	script := "#!/bin/sh\necho 'hostapd v2.10' >&2\necho 'User space daemon' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "hostapd"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv(EnvHostapd, "")
	h := probeTool("hostapd", "", "", EnvHostapd)
	if h.Path != filepath.Join(dir, "hostapd") || h.Version != "2.10" || h.Major != 2 || h.Minor != 10 {
		t.Errorf("probe of a fake hostapd: %+v", h)
	}
	if h.Err == nil || !strings.Contains(h.Err.Error(), "is a script") {
		t.Errorf("a script's build options cannot be read: err %v", h.Err)
	}
}

func tools210() Tools {
	h := Tool{Name: "hostapd", Path: "/usr/sbin/hostapd", Version: "2.10", Major: 2, Minor: 10, VHT: true, HE: true, SAE: true, H2E: true}
	w := Tool{Name: "wpa_supplicant", Path: "/usr/sbin/wpa_supplicant", Version: "2.10", Major: 2, Minor: 10, SAE: true, H2E: true}
	return Tools{Hostapd: h, WpaSupplicant: w}
}

func TestCheck(t *testing.T) {
	tools := tools210()
	for _, ap := range []*topo.WiFiAP{
		testAP(t, "g", "wpa2", ch(t, "g", "2.4", 6, 20)),
		testAP(t, "ac", "wpa2", ch(t, "ac", "5", 36, 80)),
		testAP(t, "ax", "wpa3", ch(t, "ax", "6", 5, 160)),
	} {
		if err := tools.CheckAP(ap); err != nil {
			t.Errorf("%s on hostapd 2.10: %v", ap.Mode, err)
		}
	}
	err := tools.Check(mloAP(t))
	want := "802.11be multi-link needs " + MLOHostapd + "; found hostapd v2.10 (/usr/sbin/hostapd) without it"
	if !errors.Is(err, ErrToolMissing) || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("MLO on hostapd 2.10: %v\nwant it to contain %q", err, want)
	}
	be := testAP(t, "be", "wpa3", ch(t, "be", "5", 36, 80))
	if err := tools.CheckAP(be); err == nil || !strings.Contains(err.Error(), "802.11be (EHT) needs hostapd ≥ 2.11 built with CONFIG_IEEE80211BE") {
		t.Errorf("be on hostapd 2.10: %v", err)
	}
	t211 := tools
	t211.Hostapd.Version, t211.Hostapd.Minor = "2.11", 11
	if err := t211.CheckAP(be); err == nil || !strings.Contains(err.Error(), "found hostapd v2.11 (/usr/sbin/hostapd) built without CONFIG_IEEE80211BE") {
		t.Errorf("be on hostapd 2.11 without BE: %v", err)
	}
	t211.Hostapd.EHT, t211.Hostapd.MLD = true, true
	if err := t211.CheckAP(mloAP(t)); err == nil || !strings.Contains(err.Error(), "found hostapd v2.11 (/usr/sbin/hostapd) which has multi-link code but crashes when a station MLD reconnects for the 4th–5th time") {
		t.Errorf("MLO on a hostapd 2.11 with BE must be refused with the reason: %v", err)
	}
	t212 := t211
	t212.Hostapd.Version, t212.Hostapd.Minor, t212.Hostapd.MLO = "2.12", 12, true
	t212.Hostapd.Source = EnvHostapd
	if err := t212.CheckAP(mloAP(t)); err != nil {
		t.Errorf("MLO on a hostapd 2.12 with BE: %v", err)
	}

	noAX := tools
	noAX.Hostapd.HE, noAX.Hostapd.SAE = false, false
	err = noAX.CheckAP(testAP(t, "ax", "wpa3", ch(t, "ax", "5", 36, 80)))
	for _, w := range []string{"802.11ax (HE) needs hostapd built with CONFIG_IEEE80211AX", "WPA3 (SAE) needs hostapd built with CONFIG_SAE"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("ax+wpa3 without AX and SAE: %v, want %q", err, w)
		}
	}

	none := Tools{Hostapd: Tool{Name: "hostapd", Err: errors.New("hostapd not found in PATH")}}
	if err := none.CheckAP(be); err == nil || !strings.Contains(err.Error(), "hostapd is not installed (hostapd not found in PATH)") {
		t.Errorf("no hostapd: %v", err)
	}

	sta := &topo.WiFiStation{SSID: "emulab", Security: "wpa3", Passphrase: "12345678", Iface: "sta1-wlan0", MLO: true}
	if err := tools.CheckStation(sta, mloAP(t)); err == nil || !strings.Contains(err.Error(), "802.11be multi-link (mlo: true) needs wpa_supplicant ≥ 2.11; found wpa_supplicant v2.10 (/usr/sbin/wpa_supplicant)") {
		t.Errorf("MLO station on wpa_supplicant 2.10: %v", err)
	}
	sta.MLO = false
	if err := tools.CheckStation(sta, mloAP(t)); err != nil {
		t.Errorf("WPA3 station on wpa_supplicant 2.10: %v", err)
	}
}

// A daemon named by EMUCTL_HOSTAPD is used instead of PATH's, and one
// inside an unpacked distribution tree (its own loader and libraries) is
// started through that tree's loader; a named binary that does not exist
// is an error, never replaced by PATH's.
func TestProbeToolsExplicit(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "hostapd")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'hostapd v2.12' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvHostapd, fake)
	h := ProbeTools().Hostapd
	if h.Path != fake || h.Version != "2.12" || h.Source != EnvHostapd {
		t.Errorf("EMUCTL_HOSTAPD=%s: %+v", fake, h)
	}
	if got := ProbeToolsFor(ToolPaths{Hostapd: filepath.Join(dir, "nope"), HostapdFrom: "lab.yaml:3:12 wifi.hostapd"}).Hostapd; got.Err == nil ||
		!strings.Contains(got.Err.Error(), "lab.yaml:3:12 wifi.hostapd") || got.Path != "" {
		t.Errorf("a missing explicit hostapd: %+v", got)
	}
	if err := (Tools{Hostapd: ProbeToolsFor(ToolPaths{Hostapd: filepath.Join(dir, "nope"), HostapdFrom: EnvHostapd}).Hostapd}).CheckAP(mloAP(t)); err == nil ||
		!strings.Contains(err.Error(), "hostapd is not installed") || !strings.Contains(err.Error(), "EMUCTL_HOSTAPD") {
		t.Errorf("CheckAP with a missing EMUCTL_HOSTAPD: %v", err)
	}

	// a tree: ROOT/usr/sbin/tool with ROOT/usr/lib64/<the interpreter> and
	// ROOT/usr/lib/x86_64-linux-gnu; the tool is this test binary (an ELF
	// file with an interpreter when dynamically linked) or /bin/sh's
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	interp := elfInterp(t, self)
	if interp == "" {
		self = "/bin/sh"
		if interp = elfInterp(t, self); interp == "" {
			t.Skip("no dynamically linked binary at hand")
		}
	}
	root := filepath.Join(dir, "tree")
	for _, d := range []string{"usr/sbin", filepath.Dir("usr" + interp), "usr/lib/x86_64-linux-gnu"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(root, "usr/sbin/wpa_supplicant")
	copyFile(t, self, bin)
	copyFile(t, self, filepath.Join(root, "usr"+interp))
	l, err := treeLoader(bin)
	if err != nil || len(l) != 3 || l[0] != filepath.Join(root, "usr"+interp) || l[1] != "--library-path" || !strings.Contains(l[2], filepath.Join(root, "usr/lib/x86_64-linux-gnu")) {
		t.Errorf("treeLoader(%s) = %q, %v", bin, l, err)
	}
	w := Tool{Name: "wpa_supplicant", Path: bin, Loader: l}
	if a := w.Argv(); len(a) != 4 || a[3] != bin {
		t.Errorf("Argv = %q", a)
	}
	if l, err := treeLoader(self); l != nil || err != nil {
		t.Errorf("a system binary gets a loader: %q %v", l, err)
	}
}

func elfInterp(t *testing.T, path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			p.ReadAt(b, 0)
			return strings.TrimRight(string(b), "\x00")
		}
	}
	return ""
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestProbeToolsHost runs the real probe: it must not fail whatever is
// installed, and what it finds is logged.
func TestProbeToolsHost(t *testing.T) {
	tools := ProbeTools()
	t.Logf("hostapd: %+v", tools.Hostapd)
	t.Logf("wpa_supplicant: %+v", tools.WpaSupplicant)
	if tools.Hostapd.Path != "" && tools.Hostapd.Version == "" {
		t.Errorf("found %s but no version: %v", tools.Hostapd.Path, tools.Hostapd.Err)
	}
}
