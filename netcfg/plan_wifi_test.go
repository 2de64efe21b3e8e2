package netcfg

import (
	"testing"

	"github.com/emuctl/emuctl/topo"
)

// A multihomed station's Wi-Fi address gets a policy table whose default
// route goes to the router behind its access point: through a bridging
// AP to the router on the AP's wired side, or to a routed AP itself.
func TestPolicyGatewayOverWiFi(t *testing.T) {
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"bridged AP", `name: pw
nodes:
  srv: {}
  r1: {kind: router}
  ap1: {kind: ap}
  sta1: {kind: station, mptcp: {endpoints: [{interface: sta1-wlan0, flags: [subflow]}]}}
links:
  - {endpoints: [sta1, r1], ip: {sta1: 10.1.1.1/24, r1: 10.1.1.254/24}}
  - {endpoints: [ap1, r1], ip: {r1: 10.1.2.254/24}}
  - {endpoints: [r1, srv]}
`, "10.1.2.254"},
		{"routed AP", `name: pw
nodes:
  srv: {}
  ap1: {kind: ap, wifi: {routed: true}}
  sta1: {kind: station, mptcp: {endpoints: [{interface: sta1-wlan0, flags: [subflow]}]}}
links:
  - {endpoints: [sta1, ap1], ip: {sta1: 10.1.1.1/24, ap1: 10.1.1.254/24}}
  - {endpoints: [ap1, srv]}
`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec, err := topo.Load("pw.yaml", []byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			sta := spec.Node("sta1")
			want := c.want
			if want == "" { // the routed AP's own Wi-Fi address
				ap := spec.Node("ap1")
				for _, ifc := range ap.Interfaces {
					if ifc.Wireless {
						want = ifc.Addrs[0].Addr().String()
					}
				}
			}
			var got string
			for _, p := range policyRoutes(sta, spec) {
				if p.Interface == "sta1-wlan0" {
					got = p.Gateway.String()
				}
			}
			if got != want {
				t.Errorf("policy gateway of sta1-wlan0 = %s, want %s", got, want)
			}
		})
	}
}
