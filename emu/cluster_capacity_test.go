package emu

import (
	"strings"
	"testing"
)

// capacityLab is two machines joined by two cut links (h1-h2 and h3-h4
// across m1 and m2) and one link inside m1.
func capacityLab(machines, l1, l2 string) string {
	return "name: ccap\nmachines:\n" + machines + `
nodes: {h1: {machine: m1}, h2: {machine: m2}, h3: {machine: m1}, h4: {machine: m2}, h5: {machine: m1}}
links:
  - {endpoints: [h1, h2], link: ` + l1 + `}
  - {endpoints: [h3, h4], link: ` + l2 + `}
  - {endpoints: [h1, h5], link: {rate: 1gbit}}
`
}

// The cut links' load is added up per machine and direction, VXLAN's 50
// bytes per frame included, against the machine's rate: or the link
// speed its probe read; the link inside a machine does not count.
func TestCapacityWarnings(t *testing.T) {
	const machines = `  m1: {ssh: local, underlay: 192.168.250.1, rate: 20mbit}
  m2: {ssh: local, underlay: 192.168.250.2}`
	paths := []UnderlayPath{{From: "m1", To: "m2", SpeedMbps: 10000}, {From: "m2", To: "m1", SpeedMbps: 25}}
	for _, c := range []struct {
		name, l1, l2 string
		paths        []UnderlayPath
		want         []string
	}{
		// 2 × 8 Mbit/s × 1564/1514 = 16.53 Mbit/s: 82.6 % of m1's 20;
		// m2 receives it over a device of 25 Mbit/s (66 %: no warning)
		{"near m1's rate", "{rate: 8mbit}", "{rate: 8mbit}", paths, []string{
			"machine m1 sends 16.53 Mbit/s over its cut links (h1:h1-eth0 <-> h2:h2-eth0 a->b 8Mbit, h3:h3-eth0 <-> h4:h4-eth0 a->b 8Mbit; with VXLAN's 50 bytes per frame), 83 % of its underlay's 20 Mbit/s (its rate:)"}},
		// 2 × 7 Mbit/s: 14.46, 72 % of 20: nothing
		{"below", "{rate: 7mbit}", "{rate: 7mbit}", paths, nil},
		// per direction: m2 sends 22 Mbit/s (× 1.033 = 22.73) over a
		// 25 Mbit/s device (91 %), m1 receives it (114 % of its 20)
		{"the other way", "{rate: 1mbit, b->a: {rate: 12mbit}}", "{rate: 1mbit, b->a: {rate: 10mbit}}", paths, []string{
			"machine m1 receives 22.73 Mbit/s", "114 % of its underlay's 20 Mbit/s (its rate:)",
			"machine m2 sends 22.73 Mbit/s", "91 % of its underlay's 25 Mbit/s (the link speed of its underlay device)"}},
		// no speed read and no rate: nothing to compare with
		{"unknown capacity", "{rate: 12mbit, b->a: {rate: 12mbit}}", "{rate: 12mbit, b->a: {rate: 12mbit}}", nil, []string{"machine m1 sends 24.79 Mbit/s", "machine m1 receives 24.79"}},
		{"unshaped beside shaped", "{delay: 5ms}", "{rate: 1mbit}", paths, []string{
			"machine m1 sends unshaped cut links (h1:h1-eth0 <-> h2:h2-eth0 a->b) beside shaped ones (h3:h3-eth0 <-> h4:h4-eth0 a->b 1Mbit)",
			"machine m2 receives unshaped", "machine m1 receives unshaped", "machine m2 sends unshaped"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := loadYAML(t, "ccap", capacityLab(machines, c.l1, c.l2))
			got := sortedWarnings(capacityWarnings(spec, c.paths))
			all := strings.Join(got, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("missing %q in\n%s", w, all)
				}
			}
			if len(c.want) == 0 && len(got) > 0 {
				t.Errorf("warnings below 80 %%:\n%s", all)
			}
			if c.name == "unknown capacity" && len(got) != 2 {
				t.Errorf("want m1's two (its rate:) and none for m2 (no speed known), got\n%s", all)
			}
			if strings.Contains(all, "h5") {
				t.Errorf("a link inside one machine counted:\n%s", all)
			}
		})
	}
}

// At up each machine's probe reads the link speed of its underlay device
// (a veth says 10000 Mbit/s), and a machine whose rate: its cut links
// approach gets a warning in the lab's state; the lab comes up anyway.
func TestClusterUnderlayCapacity(t *testing.T) {
	needRoot(t)
	spec := clusterLab(t, "ccap", capacityLab(`  m1: {ssh: local, underlay: 192.168.250.1, rate: 20mbit}
  m2: {ssh: local, underlay: 192.168.250.2}`, "{rate: 9mbit}", "{rate: 9mbit}"))
	st := clusterUp(t, spec)
	for _, p := range st.Underlay {
		t.Logf("underlay %s -> %s: %s at %d Mbit/s, RTT %v", p.From, p.To, p.Device, p.SpeedMbps, p.RTT)
		if p.Device != "underlay0" || p.SpeedMbps != 10000 {
			t.Errorf("underlay %s -> %s: device %q at %d Mbit/s, want underlay0 (a veth: 10000)", p.From, p.To, p.Device, p.SpeedMbps)
		}
	}
	if len(st.Underlay) != 2 {
		t.Errorf("%d underlay paths, want 2", len(st.Underlay))
	}
	if len(st.Warnings) != 2 || !strings.Contains(st.Warnings[0], "machine m1 receives 18.59 Mbit/s") || !strings.Contains(st.Warnings[1], "machine m1 sends 18.59 Mbit/s") {
		t.Errorf("warnings %q", st.Warnings)
	}
	rec, err := ReadState("ccap")
	if err != nil || len(rec.Warnings) != 2 {
		t.Errorf("the recorded state's warnings: %v %v", rec, err)
	}
	for _, p := range [][2]string{{"h1", "h2"}, {"h4", "h3"}} {
		dst, _ := PrimaryAddr(spec.Node(p[1]))
		if out, err := clusterExec("ccap", p[0], "ping", "-n", "-c", "1", "-W", "2", dst.String()); err != nil {
			t.Errorf("%s -> %s across a cut link: %v %s", p[0], p[1], err, out)
		}
	}
}
