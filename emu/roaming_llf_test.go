package emu_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/emu"
)

// llfLab: two access points of one network 40 m apart (one SSID, both
// bridged to one switch, channels 1 and 6), three stations at 5-9 m from
// ap1 (31-35 m from ap2: both heard, ap1 some 23 dB better), on the
// engine backend, associating as the association policy says.
func llfLab(name, assoc string) string {
	return fmt.Sprintf(`name: %s
wifi: {backend: engine, medium: {seed: 5}}
nodes:
  s1: {kind: switch}
  ap1: {kind: ap, wifi: {ssid: net, mode: n, channel: 1}}
  ap2: {kind: ap, position: [40, 0], wifi: {ssid: net, mode: n, channel: 6}}
  sta1: {kind: station, position: [5, 0], wifi: {ssid: net, roaming: {association: %[2]s}}}
  sta2: {kind: station, position: [7, 0], wifi: {ssid: net, roaming: {association: %[2]s}}}
  sta3: {kind: station, position: [9, 0], wifi: {ssid: net, roaming: {association: %[2]s}}}
links:
  - {endpoints: [ap1, s1]}
  - {endpoints: [ap2, s1]}
`, name, assoc)
}

// TestLabAssociationLLF: under llf (least loaded first, Mininet-WiFi's
// associationControl('llf')) the three stations spread 2/1 over the two
// APs although all hear ap1 better — sta1 on ap1, sta2 on ap2 (then
// empty), sta3 on ap1 (a tie, broken by the signal) — the same at every
// build (built twice); under ssf (the default) all three are on ap1.
func TestLabAssociationLLF(t *testing.T) {
	for _, c := range []struct {
		lab, assoc, want string
	}{
		{"twllf", "llf", "sta1=ap1 sta2=ap2 sta3=ap1"},
		{"twllf", "llf", "sta1=ap1 sta2=ap2 sta3=ap1"},
		{"twssf", "ssf", "sta1=ap1 sta2=ap1 sta3=ap1"},
	} {
		t.Run(c.assoc, func(t *testing.T) {
			upLab(t, llfLab(c.lab, c.assoc))
			var got []string
			for _, w := range emu.WiFiStatus(mustState(t, c.lab)) {
				if strings.HasPrefix(w.Node, "sta") {
					got = append(got, w.Node+"="+w.AP)
				}
			}
			slices.Sort(got)
			if g := strings.Join(got, " "); g != c.want {
				t.Errorf("associations %s, want %s", g, c.want)
			}
		})
	}
}
