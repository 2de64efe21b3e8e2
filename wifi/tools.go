package wifi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/topo"
)

// ErrToolMissing is wrapped by Tools.Check errors: hostapd or
// wpa_supplicant is missing, or too old, or built without a feature a node
// needs.
var ErrToolMissing = errors.New("Wi-Fi tool missing or lacking a feature")

// Tool is what ProbeTools found out about hostapd or wpa_supplicant.
//
// Build options are read from the binary itself: hostapd's configuration
// parser compares each line's key with string literals such as
// "he_oper_chwidth", and those literals exist in the binary only when the
// code that handles them was compiled in (config_file.c wraps the HE keys
// in #ifdef CONFIG_IEEE80211AX, the EHT and MLD keys in #ifdef
// CONFIG_IEEE80211BE, which hostapd's Makefile only allows together with
// CONFIG_IEEE80211AX). Likewise the SAE implementation's debug strings
// ("SAE: pwd-seed") exist only with CONFIG_SAE, and wpa_supplicant's
// multi-link code logs with an "MLD: " prefix. A key is matched with its
// terminating NUL but not the byte before it, because the linker may store
// a string as the tail of a longer one (string tail merging). Running the
// daemon with a probe configuration would be exact but needs a wireless
// interface; `-v` shows only the version.
type Tool struct {
	Name string // "hostapd" or "wpa_supplicant"
	// Path is the executable found (symlinks resolved); empty when the tool
	// is not installed.
	Path string
	// Version is the version `-v` printed, such as "2.10" or
	// "2.11-devel"; Major and Minor are its numbers.
	Version      string
	Major, Minor int
	// Err says why the tool cannot be used or its build options are
	// unknown: not found, `-v` failed, the binary could not be read (a
	// wrapper script, for instance). Nil when probing worked.
	Err error

	VHT bool // hostapd: 802.11ac (CONFIG_IEEE80211AC, "vht_oper_chwidth")
	HE  bool // hostapd: 802.11ax (CONFIG_IEEE80211AX, "he_oper_chwidth")
	EHT bool // hostapd: 802.11be (CONFIG_IEEE80211BE, "eht_oper_chwidth")
	// MLO: multi-link operation. hostapd: ≥ 2.11 with EHT and the mld_ap
	// key; wpa_supplicant: ≥ 2.11 with its MLD code.
	MLO bool
	SAE bool // WPA3-Personal (CONFIG_SAE)
	H2E bool // SAE hash-to-element (the sae_pwe setting), required on 6 GHz
}

// Tools are the Wi-Fi daemons emuctl runs.
type Tools struct {
	Hostapd       Tool
	WpaSupplicant Tool
}

// searchDirs are looked in after PATH: the daemons live in sbin, which a
// non-root PATH often lacks.
var searchDirs = []string{"/usr/sbin", "/sbin", "/usr/local/sbin"}

// ProbeTools finds hostapd and wpa_supplicant (in PATH, then /usr/sbin,
// /sbin and /usr/local/sbin), runs each with -v for its version and reads
// its binary for the build options that matter (see Tool). It takes well
// under a second and changes nothing.
func ProbeTools() Tools {
	return Tools{
		Hostapd:       probeTool("hostapd"),
		WpaSupplicant: probeTool("wpa_supplicant"),
	}
}

// HostapdPath is the hostapd executable to run: the one ProbeTools finds,
// or "hostapd" (for PATH lookup, failing when started) when there is none.
func HostapdPath() string { return toolPath("hostapd") }

// WpaSupplicantPath is the wpa_supplicant executable to run, as
// HostapdPath.
func WpaSupplicantPath() string { return toolPath("wpa_supplicant") }

func toolPath(name string) string {
	if p, err := findTool(name); err == nil {
		return p
	}
	return name
}

func probeTool(name string) Tool {
	t := Tool{Name: name}
	path, err := findTool(name)
	if err != nil {
		t.Err = err
		return t
	}
	t.Path = path
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// hostapd -v prints to stderr and exits 1; wpa_supplicant -v prints to
	// stdout and exits 0: take both streams, ignore the status.
	out, runErr := exec.CommandContext(ctx, path, "-v").CombinedOutput()
	t.Version, t.Major, t.Minor = parseVersion(name, out)
	if t.Version == "" {
		if runErr == nil {
			runErr = errors.New("no version in its output")
		}
		t.Err = fmt.Errorf("%s -v: %v: %q", path, runErr, firstLine(out))
		return t
	}
	bin, err := os.ReadFile(path)
	if err != nil {
		t.Err = fmt.Errorf("reading %s for its build options: %w", path, err)
		return t
	}
	if bytes.HasPrefix(bin, []byte("#!")) {
		t.Err = fmt.Errorf("%s is a script, not the %s binary: its build options are unknown", path, name)
		return t
	}
	t.setFeatures(bin)
	return t
}

// setFeatures reads build options from the binary (see Tool).
func (t *Tool) setFeatures(bin []byte) {
	has := func(s string) bool { return bytes.Contains(bin, []byte(s)) }
	key := func(k string) bool { return has(k + "\x00") }
	atLeast211 := t.Major > 2 || (t.Major == 2 && t.Minor >= 11)
	t.SAE = has("SAE: pwd-seed")
	t.H2E = t.SAE && key("sae_pwe")
	switch t.Name {
	case "hostapd":
		t.VHT = key("vht_oper_chwidth")
		t.EHT = key("eht_oper_chwidth")
		t.HE = key("he_oper_chwidth") || t.EHT
		t.MLO = t.EHT && atLeast211 && key("mld_ap")
	case "wpa_supplicant":
		t.MLO = atLeast211 && has("MLD: ")
	}
}

func findTool(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		for _, d := range searchDirs {
			p := filepath.Join(d, name)
			if st, e := os.Stat(p); e == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
				path, err = p, nil
				break
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("%s not found in PATH, %s (Debian/Ubuntu package %s)", name, strings.Join(searchDirs, ", "), debPackage(name))
	}
	if abs, e := filepath.Abs(path); e == nil {
		path = abs
	}
	if real, e := filepath.EvalSymlinks(path); e == nil {
		path = real
	}
	return path, nil
}

func debPackage(name string) string {
	if name == "wpa_supplicant" {
		return "wpasupplicant"
	}
	return name
}

var versionRE = regexp.MustCompile(`\bv(\d+)\.(\d+)(\S*)`)

// parseVersion finds "<name> vX.Y..." in -v output.
func parseVersion(name string, out []byte) (string, int, int) {
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), name+" v") {
			continue
		}
		m := versionRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		major, _ := strconv.Atoi(m[1])
		minor, _ := strconv.Atoi(m[2])
		return m[1] + "." + m[2] + m[3], major, minor
	}
	return "", 0, 0
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// found describes the tool for messages: "hostapd v2.10
// (/usr/sbin/hostapd)" or why it is unusable.
func (t Tool) found() string {
	if t.Path == "" {
		return fmt.Sprintf("%s is not installed (%v)", t.Name, t.Err)
	}
	if t.Version == "" {
		return fmt.Sprintf("found %s (%s) but could not tell its version: %v", t.Name, t.Path, t.Err)
	}
	return fmt.Sprintf("found %s v%s (%s)", t.Name, t.Version, t.Path)
}

// usable reports whether the tool was found and its build options read.
func (t Tool) usable() bool { return t.Path != "" && t.Version != "" && t.Err == nil }

// need describes one missing requirement.
type need struct {
	what    string // "802.11ax (HE)"
	minimum string // "hostapd ≥ 2.10 built with CONFIG_IEEE80211AX"
	lacking string // "without it", "built without CONFIG_IEEE80211AX"
}

// Check is CheckAP.
func (t Tools) Check(ap *topo.WiFiAP) error { return t.CheckAP(ap) }

// CheckAP reports what the installed hostapd lacks to run ap: nil when it
// can run it, else an error wrapping ErrToolMissing that names each missing
// feature, the version and build option it needs and what was found, for
// example "802.11be multi-link needs hostapd ≥ 2.11 built with
// CONFIG_IEEE80211BE; found hostapd v2.10 (/usr/sbin/hostapd) without it".
// The kernel side of multi-link is ProbeHwsimMLO's.
func (t Tools) CheckAP(ap *topo.WiFiAP) error {
	if ap == nil {
		return nil
	}
	h := t.Hostapd
	name := apName(ap)
	if !h.usable() {
		return fmt.Errorf("%w: access point %s needs hostapd; %s", ErrToolMissing, name, h.found())
	}
	var needs []need
	on6 := apOn6(ap)
	switch ap.Mode {
	case topo.WiFiModeAC:
		if !h.VHT {
			needs = append(needs, need{"802.11ac (VHT)", "hostapd built with CONFIG_IEEE80211AC", "built without it"})
		}
	case topo.WiFiModeAX:
		if !h.HE {
			needs = append(needs, need{"802.11ax (HE)", "hostapd built with CONFIG_IEEE80211AX", "built without it"})
		}
	case topo.WiFiModeBE:
		switch {
		case ap.MLO() && !h.MLO:
			needs = append(needs, need{"802.11be multi-link", "hostapd ≥ 2.11 built with CONFIG_IEEE80211BE", lackingBE(h)})
		case !h.EHT:
			needs = append(needs, need{"802.11be (EHT)", "hostapd ≥ 2.11 built with CONFIG_IEEE80211BE", lackingBE(h)})
		}
	}
	if ap.Mode == topo.WiFiModeBE && !h.HE {
		needs = append(needs, need{"802.11be (which builds on 802.11ax)", "hostapd built with CONFIG_IEEE80211AX", "built without it"})
	}
	if ap.Security == topo.WiFiWPA3 && !h.SAE {
		needs = append(needs, need{"WPA3 (SAE)", "hostapd built with CONFIG_SAE", "built without it"})
	}
	if on6 && ap.Security == topo.WiFiWPA3 && h.SAE && !h.H2E {
		needs = append(needs, need{"6 GHz (SAE hash-to-element)", "hostapd ≥ 2.10", "without sae_pwe"})
	}
	return needsError(name, "access point", h, needs)
}

// CheckStation reports what the installed wpa_supplicant lacks for sta,
// as CheckAP does for access points. ap is the station's access point (for
// its band; nil skips the band checks).
func (t Tools) CheckStation(sta *topo.WiFiStation, ap *topo.WiFiAP) error {
	if sta == nil {
		return nil
	}
	w := t.WpaSupplicant
	name := staName(sta)
	if !w.usable() {
		return fmt.Errorf("%w: station %s needs wpa_supplicant; %s", ErrToolMissing, name, w.found())
	}
	var needs []need
	if sta.MLO && !w.MLO {
		needs = append(needs, need{"802.11be multi-link (mlo: true)", "wpa_supplicant ≥ 2.11", "without multi-link support"})
	}
	if sta.Security == topo.WiFiWPA3 && !w.SAE {
		needs = append(needs, need{"WPA3 (SAE)", "wpa_supplicant built with CONFIG_SAE", "built without it"})
	}
	if ap != nil && apOn6(ap) && sta.Security == topo.WiFiWPA3 && w.SAE && !w.H2E {
		needs = append(needs, need{"6 GHz (SAE hash-to-element)", "wpa_supplicant ≥ 2.10", "without sae_pwe"})
	}
	return needsError(name, "station", w, needs)
}

func lackingBE(h Tool) string {
	switch {
	case h.Major < 2 || (h.Major == 2 && h.Minor < 11):
		if h.EHT {
			return "without multi-link (mld_ap) support"
		}
		return "without it"
	case !h.EHT:
		return "built without CONFIG_IEEE80211BE"
	}
	return "without multi-link (mld_ap) support"
}

func needsError(name, kind string, t Tool, needs []need) error {
	if len(needs) == 0 {
		return nil
	}
	parts := make([]string, len(needs))
	for i, n := range needs {
		parts[i] = fmt.Sprintf("%s needs %s; %s %s", n.what, n.minimum, t.found(), n.lacking)
	}
	return fmt.Errorf("%w: %s %s: %s", ErrToolMissing, kind, name, strings.Join(parts, "; "))
}
