package emu

import (
	"fmt"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/engine"
)

// wifiHop is a station's wireless hop to its access point. Its interfaces
// come with the Wi-Fi phase (hwsim radios, or the engine backend's veth
// ports); its parameters (the station's wifi.link:) are kernel qdiscs on
// the station's wireless egress (uplink, a->b) and on the AP's wireless
// egress towards it (downlink, b->a: one HTB class per station, picked by
// its MAC, rebuilt for all the AP's stations when one changes). The air
// itself is the Wi-Fi medium's (wifi_medium.go); verify does not measure it.
type wifiHop struct{}

func (wifiHop) create(*deployer, int) error { return nil }

func (wifiHop) shape(d *deployer, li int) error {
	n := hopStation(d.spec, li)
	for _, h := range d.st.WiFiHops {
		if h.Station != n.Name || (h.Up.IsZero() && h.Down.IsZero() && !hasQueue(h.Up) && !hasQueue(h.Down)) {
			continue
		}
		netem := tc.Probe().Netem
		if err := applyUplink(d.st, h, netem); err != nil {
			return err
		}
		return applyDownlinks(d.st, h.AP, netem)
	}
	return nil
}

func (wifiHop) change(st *State, li int, up, down tc.Dir) error {
	n := hopStation(st.Spec, li)
	caps := tc.Probe()
	if !caps.Netem && (needsNetem(up) || needsNetem(down)) {
		return fmt.Errorf("delay, jitter or loss on a wireless hop needs sch_netem (%s)", caps.Reasons["netem"])
	}
	for k := range st.WiFiHops {
		h := &st.WiFiHops[k]
		if h.Station != n.Name {
			continue
		}
		h.Up, h.Down = up, down
		if err := applyUplink(st, *h, caps.Netem); err != nil {
			return err
		}
		return applyDownlinks(st, h.AP, caps.Netem)
	}
	return fmt.Errorf("lab %s has no wireless hop of station %q", st.Lab, n.Name)
}

func (wifiHop) show(st *State, li int, info *LinkInfo, _ map[int]engine.Stats) {
	n := hopStation(st.Spec, li)
	info.Backend = "none (wireless)"
	shaped := false
	for _, h := range st.WiFiHops {
		if h.Station == n.Name && !(h.Up.IsZero() && h.Down.IsZero()) {
			info.Backend, info.AtoB, info.BtoA, shaped = BackendNetem+" (wireless)", h.Up, h.Down, true
		}
	}
	a, b := linkEnds(st.Spec, li)
	readEnds(st, info, a, b, shaped)
}

func (wifiHop) name() string { return "wifi" }

func (wifiHop) verifiable() bool { return false }
