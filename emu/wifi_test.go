package emu

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
)

// On a kernel without mac80211_hwsim (this build machine) a Wi-Fi lab
// that pins the hwsim backend is refused before anything changes, and the
// message says what is missing and how to get it. (Unpinned, such a lab
// runs on the engine backend: wifi_engine_test.go; the hwsim path runs in
// the kernel lab: kernellab/wifi_emuctl_lab_test.go.)
func TestWiFiRefusedWithoutHwsim(t *testing.T) {
	needRoot(t)
	if wifi.ProbeHwsim() == nil {
		t.Skip("this kernel has mac80211_hwsim: the refusal path does not apply (the kernel lab covers the Wi-Fi path)")
	}
	src, err := os.ReadFile("../topologies/wifi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := topo.Load("wifi.yaml", append(src, "wifi: {backend: hwsim}\n"...))
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.Rename(spec, "twifi"); err != nil {
		t.Fatal(err)
	}
	before := Leaks()
	_, err = Deploy(context.Background(), spec, Options{})
	if err == nil {
		Down("twifi", nil)
		t.Fatal("a Wi-Fi lab came up on a kernel without mac80211_hwsim")
	}
	t.Logf("refused:\n%v", err)
	for _, want := range []string{"nothing was changed", "mac80211_hwsim", "modprobe mac80211_hwsim radios=0", "backend: engine"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q", want)
		}
	}
	if _, err := os.Stat(stateDir("twifi")); err == nil {
		t.Error("a refused lab left its state dir")
	}
	if after := Leaks(); len(after) != len(before) {
		t.Errorf("refused lab changed the machine: before %v after %v", before, after)
	}
}

// Radio names carry the lab and node and fit nl80211's 64 bytes; the medium
// namespace never collides with a node's.
func TestWiFiNames(t *testing.T) {
	if got := radioName("lab", "ap1", "00abcd"); got != "emu.lab.ap1.00abcd" {
		t.Errorf("radioName = %q", got)
	}
	if a, b := deployTag(time.UnixMilli(1000)), deployTag(time.UnixMilli(1001)); a == b || len(a) != 6 {
		t.Errorf("deploy tags %q %q", a, b)
	}
	long := radioName(strings.Repeat("l", 32), strings.Repeat("n", 64), "zzzzzz")
	if len(long) != 64 || !strings.HasPrefix(long, "emu.") {
		t.Errorf("long radio name %q (%d bytes)", long, len(long))
	}
	if wifiNetns("lab") != "lab._w" || topo.Namespace("lab", "_w") == "" {
		t.Error("medium namespace name")
	}
}

// TestWiFiMeshRefusedOnEngine: on a kernel without mac80211_hwsim a lab
// with an 802.11s mesh would run on the engine backend, which forwards
// nothing: refused before anything is built, saying why and what would
// run it.
func TestWiFiMeshRefusedOnEngine(t *testing.T) {
	needRoot(t)
	if wifi.ProbeHwsim() == nil {
		t.Skip("this kernel has mac80211_hwsim: a mesh runs here (the kernel lab's TestLabWiFiAdhocMesh)")
	}
	spec, err := topo.Load("mesh.yaml", []byte("name: twmesh\nwifi: {mesh: {m1: {}}}\nnodes:\n  a: {kind: station, wifi: {mesh: m1}}\n  b: {kind: station, position: [10, 0], wifi: {mesh: m1}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	before := Leaks()
	if _, err := Deploy(context.Background(), spec, Options{}); err == nil {
		Down("twmesh", nil)
		t.Fatal("a mesh came up on the engine backend")
	} else {
		for _, want := range []string{"mesh.yaml:2:15: mesh m1", "802.11s mesh runs on the hwsim backend only", "no mac80211_hwsim", "nothing was changed"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal does not say %q:\n%v", want, err)
			}
		}
	}
	if after := Leaks(); len(after) != len(before) {
		t.Errorf("refused lab changed the machine: before %v after %v", before, after)
	}
}
