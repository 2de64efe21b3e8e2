package wifi

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
	// MLD: the binary has multi-link code (hostapd: EHT and the mld_ap
	// key, 2.11 or later; wpa_supplicant: its "MLD: " messages, 2.11 or
	// later).
	MLD bool
	// MLO: multi-link operation emuctl runs. hostapd: MLD and ≥ 2.12
	// (2.11 dereferences a NULL station in send_assoc_resp when a
	// station MLD reconnects for the 4th–5th time — measured in the kernel
	// lab — fixed in 2.12 by b7f08c28c); wpa_supplicant: MLD (≥ 2.11).
	MLO bool
	SAE bool // WPA3-Personal (CONFIG_SAE)
	H2E bool // SAE hash-to-element (the sae_pwe setting), required on 6 GHz
	// LinkRemove: hostapd has LINK_REMOVE (CONFIG_TESTING_OPTIONS with
	// CONFIG_IEEE80211BE): an AP MLD announces a link's removal in its
	// beacons (multi-link reconfiguration) and then removes it, which is
	// how emuctl takes one link of a running AP down.
	LinkRemove bool

	// Source says where the binary was named: "PATH", an environment
	// variable (EMUCTL_HOSTAPD, EMUCTL_WPA_SUPPLICANT) or the topology
	// setting ("<file:line:col> wifi.hostapd").
	Source string
	// Loader runs the binary when it lies inside an unpacked distribution
	// tree with its own dynamic loader and libraries (such as Debian sid's
	// wpasupplicant unpacked beside its libc by `scripts/kernel-lab
	// setup`): that tree's loader with --library-path, then Path. Empty
	// for a binary of this system.
	Loader []string
}

// Environment variables naming the daemons to run, ahead of PATH (a
// topology's wifi: {hostapd: ..., wpa_supplicant: ...} comes first).
const (
	EnvHostapd       = "EMUCTL_HOSTAPD"
	EnvWpaSupplicant = "EMUCTL_WPA_SUPPLICANT"
)

// ToolPaths name the daemons explicitly (a topology's wifi: settings);
// an empty path falls back to the environment variable, then to PATH.
// From describes where a path was given, for messages.
type ToolPaths struct {
	Hostapd, HostapdFrom             string
	WpaSupplicant, WpaSupplicantFrom string
}

// Argv is how to start the tool: Loader (if any), then Path; the bare
// name when the tool was not found (the start then fails, saying so).
func (t Tool) Argv() []string {
	if t.Path == "" {
		return []string{t.Name}
	}
	return append(append([]string(nil), t.Loader...), t.Path)
}

// Tools are the Wi-Fi daemons emuctl runs.
type Tools struct {
	Hostapd       Tool
	WpaSupplicant Tool
}

// searchDirs are looked in after PATH: the daemons live in sbin, which a
// non-root PATH often lacks.
var searchDirs = []string{"/usr/sbin", "/sbin", "/usr/local/sbin"}

// ProbeTools is ProbeToolsFor without explicit paths: the daemons named
// by EMUCTL_HOSTAPD and EMUCTL_WPA_SUPPLICANT, else found in PATH, then
// /usr/sbin, /sbin and /usr/local/sbin.
func ProbeTools() Tools { return ProbeToolsFor(ToolPaths{}) }

// ProbeToolsFor finds hostapd and wpa_supplicant — the paths given, else
// the environment's (EnvHostapd, EnvWpaSupplicant), else the ones in PATH
// — runs each with -v for its version and reads its binary for the build
// options that matter (see Tool). A path given explicitly that does not
// work is an error of that tool, never replaced by another binary. It
// takes well under a second and changes nothing.
func ProbeToolsFor(p ToolPaths) Tools {
	return Tools{
		Hostapd:       probeTool("hostapd", p.Hostapd, p.HostapdFrom, EnvHostapd),
		WpaSupplicant: probeTool("wpa_supplicant", p.WpaSupplicant, p.WpaSupplicantFrom, EnvWpaSupplicant),
	}
}

func probeTool(name, path, from, env string) Tool {
	t := Tool{Name: name, Source: "PATH"}
	if path == "" {
		if path = os.Getenv(env); path != "" {
			from = env
		}
	}
	var err error
	if path != "" {
		t.Source = from
		path, err = explicitTool(name, path, from)
	} else {
		path, err = findTool(name)
	}
	if err != nil {
		t.Err = err
		return t
	}
	t.Path = path
	if t.Loader, err = treeLoader(path); err != nil {
		t.Err = err
		return t
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// hostapd -v prints to stderr and exits 1; wpa_supplicant -v prints to
	// stdout and exits 0: take both streams, ignore the status.
	argv := append(t.Argv(), "-v")
	out, runErr := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
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
	atLeast211 := t.atLeast(2, 11)
	t.SAE = has("SAE: pwd-seed")
	t.H2E = t.SAE && key("sae_pwe")
	switch t.Name {
	case "hostapd":
		t.VHT = key("vht_oper_chwidth")
		t.EHT = key("eht_oper_chwidth")
		t.HE = key("he_oper_chwidth") || t.EHT
		t.MLD = t.EHT && atLeast211 && key("mld_ap")
		t.MLO = t.MLD && t.atLeast(2, 12)
		// the control command's prefix, compared with os_strncmp
		t.LinkRemove = t.MLD && has("LINK_REMOVE \x00")
	case "wpa_supplicant":
		t.MLD = atLeast211 && has("MLD: ")
		t.MLO = t.MLD
	}
}

func (t Tool) atLeast(major, minor int) bool {
	return t.Major > major || (t.Major == major && t.Minor >= minor)
}

// explicitTool checks a path given for name (in the environment or the
// topology): an executable regular file, symlinks resolved.
func explicitTool(name, path, from string) (string, error) {
	abs, err := filepath.Abs(path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("%s %s (%s): %w", name, path, from, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%s %s (%s): %w", name, path, from, err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s %s (%s) is not an executable file", name, path, from)
	}
	return abs, nil
}

// treeLoader returns how to start a dynamically linked binary that lies
// inside an unpacked distribution tree (ROOT/usr/sbin/X, ROOT/sbin/X,
// ROOT/usr/bin/X or ROOT/bin/X, ROOT not /) holding its own copy of the
// binary's ELF interpreter: that loader, with --library-path set to the
// tree's multiarch library directories. Such a binary was built against
// the tree's C library, which may be newer than the system's, and the
// system loader would load the system's libraries. nil for anything else
// (a system binary, a static one, a binary outside such a tree).
func treeLoader(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, nil // not ELF: probing reports what it is
	}
	defer f.Close()
	interp := ""
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return nil, fmt.Errorf("%s: reading its ELF interpreter: %w", path, err)
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	if interp == "" {
		return nil, nil // static
	}
	dir := filepath.Dir(path)
	if b := filepath.Base(dir); b != "sbin" && b != "bin" {
		return nil, nil
	}
	root := filepath.Dir(dir)
	if filepath.Base(root) == "usr" {
		root = filepath.Dir(root)
	}
	if root == "/" || root == "." {
		return nil, nil
	}
	loader := ""
	for _, c := range []string{filepath.Join(root, interp), filepath.Join(root, "usr", interp)} {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			loader = c
			break
		}
	}
	if loader == "" {
		return nil, nil
	}
	var libs []string
	for _, pat := range []string{"usr/lib/*-linux-gnu*", "lib/*-linux-gnu*", "usr/lib64", "lib64"} {
		ms, _ := filepath.Glob(filepath.Join(root, pat))
		for _, m := range ms {
			if st, err := os.Stat(m); err == nil && st.IsDir() && !slices.Contains(libs, m) {
				if real, err := filepath.EvalSymlinks(m); err == nil && slices.Contains(libs, real) {
					continue
				}
				libs = append(libs, m)
			}
		}
	}
	if len(libs) == 0 {
		return nil, fmt.Errorf("%s: the tree %s has a loader (%s) but no library directory", path, root, loader)
	}
	return []string{loader, "--library-path", strings.Join(libs, ":")}, nil
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
	return fmt.Sprintf("found %s v%s (%s%s)", t.Name, t.Version, t.Path, t.sourceNote())
}

// sourceNote is ", from EMUCTL_HOSTAPD" and the like; empty for PATH.
func (t Tool) sourceNote() string {
	if t.Source == "" || t.Source == "PATH" {
		return ""
	}
	return ", from " + t.Source
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
			needs = append(needs, need{"802.11be multi-link", MLOHostapd, lackingBE(h)})
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

// MLOHostapd is the hostapd an AP MLD needs (messages, doctor, tests).
const MLOHostapd = "hostapd ≥ 2.12 built with CONFIG_IEEE80211BE (give one with EMUCTL_HOSTAPD or wifi: {hostapd: PATH}; no Debian hostapd has it)"

func lackingBE(h Tool) string {
	switch {
	case h.MLD && !h.MLO:
		return "which has multi-link code but crashes when a station MLD reconnects for the 4th–5th time (NULL station in send_assoc_resp; fixed in 2.12)"
	case !h.atLeast(2, 11):
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
