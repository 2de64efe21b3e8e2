package topo

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// wifiEditLab: a routed AP (its stations on a wireless segment of their
// own, numbered after every wired link) and a bridged one (its station on
// the wired segment it bridges to).
const wifiEditLab = `name: wed
nodes:
  srv: {}
  s1: {kind: switch}
  ap1: {kind: ap, wifi: {ssid: one, channel: 1, routed: true}}
  ap2: {kind: ap, wifi: {ssid: two, channel: 6}}
  sta1: {kind: station, position: [5, 0], wifi: {ap: ap1}}
  sta2: {kind: station, position: [0, 5], wifi: {ap: ap2}}
links:
  - endpoints: [srv, s1]
  - endpoints: [ap1, s1]
  - endpoints: [ap2, s1]
`

// TestEditWiFiLab: links and nodes added to a lab with Wi-Fi leave every
// wireless address as it was (the document pins them: wifi: {ip: ...}),
// a station added joins its AP with the segment's next address, and the
// AP's station list follows without counting as a change to the AP.
func TestEditWiFiLab(t *testing.T) {
	s, err := Load("wed.yaml", []byte(wifiEditLab))
	if err != nil {
		t.Fatal(err)
	}
	sta1, ap1 := addr(t, s, "sta1", "sta1-wlan0"), addr(t, s, "ap1", "ap1-wlan0")
	sta2 := addr(t, s, "sta2", "sta2-wlan0")
	if sta1 == "" || ap1 == "" || sta2 == "" {
		t.Fatalf("addresses: sta1 %q ap1 %q sta2 %q", sta1, ap1, sta2)
	}
	// a wired host and link: its segment is planned before the wireless
	// ones, and would have taken sta1's subnet without the pins
	s2, err := AddNode(s, NodeRequest{Name: "h9"})
	if err != nil {
		t.Fatal(err)
	}
	s3, err := AddLink(s2, LinkRequest{A: "h9", B: "srv"})
	if err != nil {
		t.Fatal(err)
	}
	if a := addr(t, s3, "sta1", "sta1-wlan0"); a != sta1 {
		t.Errorf("sta1 renumbered: %s → %s", sta1, a)
	}
	if a := addr(t, s3, "ap1", "ap1-wlan0"); a != ap1 {
		t.Errorf("ap1's wireless side renumbered: %s → %s", ap1, a)
	}
	h9 := netip.MustParsePrefix(addr(t, s3, "h9", "h9-eth0"))
	if h9.Overlaps(netip.MustParsePrefix(sta1).Masked()) {
		t.Errorf("h9's new link %s overlaps the wireless segment of %s", h9, sta1)
	}
	for _, want := range []string{"sta1: {kind: station, position: [5, 0], wifi: {ap: ap1, ip: [" + sta1 + "]}}", "ip: [" + ap1 + "]"} {
		if !strings.Contains(string(s3.Document), want) {
			t.Errorf("the document lacks %q:\n%s", want, s3.Document)
		}
	}
	// a station added to each AP
	s4, err := AddNode(s3, NodeRequest{Name: "sta3", Kind: "station", Entry: "{wifi: {ap: ap1}, position: [8, 0]}"})
	if err != nil {
		t.Fatal(err)
	}
	s5, err := AddNode(s4, NodeRequest{Name: "sta4", Kind: "station", Entry: "{wifi: {ap: ap2}}"})
	if err != nil {
		t.Fatal(err)
	}
	st3 := netip.MustParsePrefix(addr(t, s5, "sta3", "sta3-wlan0"))
	if st3.Masked() != netip.MustParsePrefix(sta1).Masked() || st3.String() == sta1 || st3.String() == ap1 {
		t.Errorf("sta3 got %s: want a new address in %s (sta1 %s, ap1 %s)", st3, netip.MustParsePrefix(sta1).Masked(), sta1, ap1)
	}
	st4 := netip.MustParsePrefix(addr(t, s5, "sta4", "sta4-wlan0"))
	if st4.Masked() != netip.MustParsePrefix(sta2).Masked() || st4.String() == sta2 {
		t.Errorf("sta4 got %s: want a new address in %s, beside sta2 %s", st4, netip.MustParsePrefix(sta2).Masked(), sta2)
	}
	if n := s5.Node("sta3"); n.Station == nil || n.Station.AP != "ap1" || n.Station.Position != [3]float64{8, 0, 0} {
		t.Errorf("sta3: %+v", n.Station)
	}
	if got := s5.Node("ap1").AP.Stations; len(got) != 2 || got[1] != "sta3" {
		t.Errorf("ap1's stations: %v", got)
	}
	// the request's own fields: its AP and position, written plainly
	s7, err := AddNode(s5, NodeRequest{Name: "sta5", Kind: "station", AP: "ap2", Position: &[3]float64{1.5, 2, 0}, Entry: "{wifi: {rate: 54mbit}}"})
	if err != nil {
		t.Fatal(err)
	}
	if n := s7.Node("sta5"); n.Station == nil || n.Station.AP != "ap2" || n.Station.Position != [3]float64{1.5, 2, 0} || n.Station.Rate != "54mbit" {
		t.Errorf("sta5: %+v", n.Station)
	}
	if want := "sta5: {kind: station, position: [1.5, 2, 0], wifi: {rate: 54mbit, ap: ap2"; !strings.Contains(string(s7.Document), want) {
		t.Errorf("the document lacks %q:\n%s", want, s7.Document)
	}
	// removed again: the rest as it was
	s6, err := RemoveNode(s5, "sta3")
	if err != nil {
		t.Fatal(err)
	}
	if got := s6.Node("ap1").AP.Stations; len(got) != 1 || got[0] != "sta1" {
		t.Errorf("ap1's stations after removing sta3: %v", got)
	}
	back, err := Load("back.yaml", s6.Document)
	if err != nil {
		t.Fatalf("the document after the changes does not load: %v\n%s", err, s6.Document)
	}
	if a := addr(t, back, "sta4", "sta4-wlan0"); a != st4.String() {
		t.Errorf("round trip: sta4 %s, was %s", a, st4)
	}
}

// TestWiFiIP: a station's and a routed AP's wireless addresses can be
// given (wifi: {ip: ...}); a bridged AP's cannot, and a station's must be
// in its segment's subnet.
func TestWiFiIP(t *testing.T) {
	s, err := Load("ip.yaml", []byte(`name: ip
nodes:
  ap1: {kind: ap, wifi: {ssid: one, channel: 1, routed: true, ip: 10.77.0.1/24}}
  sta1: {kind: station, wifi: {ap: ap1, ip: [10.77.0.9/24]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if a := addr(t, s, "sta1", "sta1-wlan0"); a != "10.77.0.9/24" {
		t.Errorf("sta1: %s", a)
	}
	if a := addr(t, s, "ap1", "ap1-wlan0"); a != "10.77.0.1/24" {
		t.Errorf("ap1: %s", a)
	}
	for doc, want := range map[string]string{
		"name: b\nnodes:\n  ap1: {kind: ap, wifi: {ssid: one, channel: 1, ip: 10.77.0.1/24}}\n":                                                                           "b.yaml:3:49: nodes.ap1.wifi.ip: a bridged access point has no address on its wireless side",
		"name: c\nnodes:\n  ap1: {kind: ap, wifi: {ssid: one, channel: 1, routed: true, ip: 10.77.0.1/24}}\n  sta1: {kind: station, wifi: {ap: ap1, ip: 10.78.0.9/24}}\n": "are on the same L2 segment but in different subnets",
		"name: d\nnodes:\n  ap1: {kind: ap, wifi: {ssid: one, channel: 1}}\n  sta1: {kind: station, wifi: {ap: ap1, ip: 10.78.0.9}}\n":                                    "prefix",
	} {
		name := strings.Fields(doc)[1] + ".yaml"
		_, err := Load(name, []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
	}
}

// TestWiFiMAC: an AP's or a station's wireless MAC can be given (wifi:
// {mac: ...}, as Mininet-WiFi's mac=), is kept, and no hashed MAC takes
// it; a group, zero, malformed or repeated one is refused where written.
func TestWiFiMAC(t *testing.T) {
	s, err := Load("mac.yaml", []byte(`name: mac
nodes:
  ap1: {kind: ap, wifi: {ssid: one, channel: 1, mac: "00:00:00:00:00:10"}}
  sta1: {kind: station, wifi: {mac: 00-00-00-00-00-02}}
  sta2: {kind: station}
  h1: {}
links: [{endpoints: [h1, ap1]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	macs := map[string]string{}
	for _, n := range s.Nodes {
		for _, ifc := range n.Interfaces {
			if prev, dup := macs[ifc.MAC]; dup || ifc.MAC == "" {
				t.Errorf("%s:%s has MAC %q (%s's too)", n.Name, ifc.Name, ifc.MAC, prev)
			}
			macs[ifc.MAC] = n.Name + ":" + ifc.Name
		}
	}
	if macs["00:00:00:00:00:10"] != "ap1:ap1-wlan0" || macs["00:00:00:00:00:02"] != "sta1:sta1-wlan0" {
		t.Errorf("MACs: %v", macs)
	}
	for doc, want := range map[string]string{
		"name: g\nnodes:\n  ap1: {kind: ap, wifi: {ssid: one, mac: \"01:00:00:00:00:01\"}}\n":                                                              "g.yaml:3:42: nodes.ap1.wifi.mac: mac \"01:00:00:00:00:01\" is a group (multicast) address",
		"name: z\nnodes:\n  ap1: {kind: ap, wifi: {ssid: one, mac: \"00:00:00:00:00:00\"}}\n":                                                              "is all zero",
		"name: x\nnodes:\n  ap1: {kind: ap, wifi: {ssid: one}}\n  sta1: {kind: station, wifi: {mac: 1234}}\n":                                              "x.yaml:4:37: nodes.sta1.wifi.mac: mac \"1234\" is not a MAC",
		"name: d\nnodes:\n  ap1: {kind: ap, wifi: {ssid: one, mac: \"02:00:00:00:00:01\"}}\n  sta1: {kind: station, wifi: {mac: \"02:00:00:00:00:01\"}}\n": "d.yaml:4:37: nodes.sta1.wifi.mac: mac 02:00:00:00:00:01 is ap1:ap1-wlan0's already",
	} {
		name := strings.Fields(doc)[1] + ".yaml"
		_, err := Load(name, []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
	}
}

// TestWiFiAntennaGain: antenna_gain (dBi, -10..30) on APs and stations.
func TestWiFiAntennaGain(t *testing.T) {
	s, err := Load("g.yaml", []byte("name: g\nnodes:\n  ap1: {kind: ap, wifi: {ssid: one, antenna_gain: 5dBi}}\n  sta1: {kind: station, wifi: {antenna_gain: -2.5}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g := s.Node("ap1").AP.AntennaGainDBi; g != 5 {
		t.Errorf("ap1: %v dBi", g)
	}
	if g := s.Node("sta1").Station.AntennaGainDBi; g != -2.5 {
		t.Errorf("sta1: %v dBi", g)
	}
	_, err = Load("b.yaml", []byte("name: b\nnodes:\n  ap1: {kind: ap, wifi: {ssid: one, antenna_gain: 31dBi}}\n"))
	if want := "b.yaml:3:51: nodes.ap1.wifi.antenna_gain: antenna_gain \"31dBi\" is not valid: give dBi from -10 to 30"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestWiFiSeveralNetworks: a station naming several networks (ssid: [a,
// b], as Mininet-WiFi's stations join whatever access point they hear)
// roams between all their access points, which must agree as one
// network's do and share one wired segment.
func TestWiFiSeveralNetworks(t *testing.T) {
	const base = "name: %s\nnodes:\n  s1: {kind: switch}\n  ap1: {kind: ap, wifi: {ssid: a, channel: 1}}\n  ap2: {kind: ap, position: [50, 0], wifi: {ssid: b, channel: 6%s}}\n  sta1: {kind: station, wifi: {%s}}\nlinks: [{endpoints: [ap1, s1]}%s]\n"
	s, err := Load("n.yaml", fmt.Appendf(nil, base, "n", "", "ssid: [a, b]", ", {endpoints: [ap2, s1]}"))
	if err != nil {
		t.Fatal(err)
	}
	st := s.Node("sta1").Station
	if !slices.Equal(st.ESS, []string{"ap1", "ap2"}) || !slices.Equal(st.Networks, []string{"a", "b"}) || st.AP != "ap1" || st.Roaming == nil {
		t.Errorf("sta1: ESS %v, networks %v, AP %s, roaming %+v", st.ESS, st.Networks, st.AP, st.Roaming)
	}
	for _, c := range []struct{ name, ap2, sta, link, want string }{
		{"u", "", "ssid: [a, c]", ", {endpoints: [ap2, s1]}", "u.yaml:6:42: nodes.sta1.wifi.ssid: no access point has ssid \"c\""},
		{"m", ", mode: g", "ssid: [a, b]", ", {endpoints: [ap2, s1]}", "whose access points must agree as one network's do: one network, one mode: g is not n (ap1, ap2)"},
		{"p", "", "ap: ap1, ssid: [a, b]", ", {endpoints: [ap2, s1]}", "a station that names its access point (ap: ap1) joins its one network"},
		{"c", "", "ssid: [a, b]", "", "no chain of switches joins ap1 and ap2"},
		{"d", "", "ssid: [a, a]", ", {endpoints: [ap2, s1]}", "ssid \"a\" is named twice"},
	} {
		_, err := Load(c.name+".yaml", fmt.Appendf(nil, base, c.name, c.ap2, c.sta, c.link))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestEditAddAP: an access point added to a lab whose stations join its
// only AP without naming it leaves them with that AP (the document pins
// wifi: {ap: ...} for them) at their addresses, gets a channel and
// network of its own, and takes a station of its own; once that station
// is gone it can be removed, and the lab is as it was.
func TestEditAddAP(t *testing.T) {
	s, err := Load("one.yaml", []byte("name: one\nnodes:\n  ap1: {kind: ap, wifi: {mode: g, channel: 1}}\n  sta1: {kind: station, position: [5, 0]}\n  srv: {}\nlinks:\n  - endpoints: [ap1, srv]\n"))
	if err != nil {
		t.Fatal(err)
	}
	sta1 := addr(t, s, "sta1", "sta1-wlan0")
	s2, err := AddNode(s, NodeRequest{Name: "ap2", Kind: "ap", Entry: "{wifi: {ssid: two, mode: g, channel: 11}}"})
	if err != nil {
		t.Fatal(err)
	}
	if st := s2.Node("sta1").Station; st.AP != "ap1" || addr(t, s2, "sta1", "sta1-wlan0") != sta1 {
		t.Errorf("sta1 after ap2 was added: AP %q at %s (was ap1 at %s)", st.AP, addr(t, s2, "sta1", "sta1-wlan0"), sta1)
	}
	if ap := s2.Node("ap2").AP; ap == nil || ap.SSID != "two" || ap.Channel.FreqMHz != 2462 {
		t.Fatalf("ap2: %+v", ap)
	}
	s3, err := AddNode(s2, NodeRequest{Name: "sta9", Kind: "station", AP: "ap2"})
	if err != nil {
		t.Fatal(err)
	}
	if st := s3.Node("sta9").Station; st.AP != "ap2" || st.SSID != "two" || !slices.Equal(s3.Node("ap2").AP.Stations, []string{"sta9"}) {
		t.Errorf("sta9: %+v; ap2's stations %v", st, s3.Node("ap2").AP.Stations)
	}
	s4, err := RemoveNode(s3, "sta9")
	if err != nil {
		t.Fatal(err)
	}
	s5, err := RemoveNode(s4, "ap2")
	if err != nil {
		t.Fatal(err)
	}
	if len(s5.Nodes) != len(s.Nodes) || s5.Node("sta1").Station.AP != "ap1" || addr(t, s5, "sta1", "sta1-wlan0") != sta1 {
		t.Errorf("after sta9 and ap2 left: %d nodes (was %d), sta1 %+v", len(s5.Nodes), len(s.Nodes), s5.Node("sta1").Station)
	}
	if back, err := Load("back.yaml", s5.Document); err != nil || back.Node("sta1").Station.AP != "ap1" {
		t.Errorf("the document after the edits: %v\n%s", err, s5.Document)
	}
}
