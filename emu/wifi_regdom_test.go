package emu

import (
	"strings"
	"testing"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
)

// TestAPCountry: an AP whose file names no country starts in US unless
// the regulatory database lets no AP start on its channels there (6 GHz in
// Debian's wireless-regdb: PASSIVE-SCAN), then in the first of the
// fallbacks that allows them all; a country the file names is kept or
// refused, naming countries that would do.
func TestAPCountry(t *testing.T) {
	r := func(lo, hi, bw, flags int) wifi.RegRule {
		return wifi.RegRule{StartKHz: lo * 1000, EndKHz: hi * 1000, MaxBWKHz: bw * 1000, Flags: flags}
	}
	db := &wifi.RegDB{Path: "regulatory.db", Countries: map[string][]wifi.RegRule{
		"US": {r(2400, 2472, 40, 0), r(5150, 5250, 80, wifi.RegAutoBW), r(5925, 7125, 320, wifi.RegNoIR)},
		"CA": {r(2400, 2483, 40, 0), r(5150, 5250, 80, wifi.RegAutoBW), r(5925, 7125, 320, wifi.RegNoOutdoor)},
		"DE": {r(2400, 2483, 40, 0), r(5150, 5250, 80, wifi.RegAutoBW), r(5945, 6425, 320, wifi.RegNoOutdoor)},
	}}
	ch := func(band string, c, width, center int) topo.WiFiChannel {
		return topo.WiFiChannel{Band: band, Channel: c, Width: width, CenterChannel: center}
	}
	mld := func(links ...topo.WiFiChannel) *topo.WiFiAP {
		return &topo.WiFiAP{Country: "US", Channel: links[0], Links: links}
	}
	for _, c := range []struct {
		name string
		ap   *topo.WiFiAP
		want string // country, or a part of the error
	}{
		{"2.4+5 stays in US", mld(ch("2.4", 1, 20, 1), ch("5", 36, 80, 42)), "US"},
		{"5+6 falls back to CA", mld(ch("5", 36, 20, 36), ch("6", 5, 20, 5)), "CA"},
		{"6 GHz 320 MHz high channel: CA", &topo.WiFiAP{Country: "US", Channel: ch("6", 197, 320, 191)}, "CA"},
		{"named US on 6 GHz is refused", &topo.WiFiAP{Country: "US", CountrySet: true, Channel: ch("6", 5, 20, 5)}, "in country US: US marks 5925-7125 MHz PASSIVE-SCAN"},
		{"named DE on 6 GHz is kept", &topo.WiFiAP{Country: "DE", CountrySet: true, Channel: ch("6", 5, 20, 5)}, "DE"},
		{"named DE above 6425 MHz", &topo.WiFiAP{Country: "DE", CountrySet: true, Channel: ch("6", 197, 20, 197)}, "e.g. CA"},
		{"named FR, not in the database", &topo.WiFiAP{Country: "FR", CountrySet: true, Channel: ch("2.4", 1, 20, 1)}, "no country FR"},
	} {
		got, err := apCountry(db, c.ap)
		switch {
		case err != nil && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		case err == nil && got != c.want:
			t.Errorf("%s: country %s, want %s", c.name, got, c.want)
		}
		if err != nil {
			t.Logf("%s: %v", c.name, err)
		}
	}
	if got, _ := apCountry(nil, &topo.WiFiAP{Country: "US", Channel: ch("6", 5, 20, 5)}); got != "US" {
		t.Errorf("without a database: %s, want the file's", got)
	}
	if f := channelCenterMHz(ch("6", 37, 160, 47)); f != 6185 {
		t.Errorf("6 GHz centre channel 47: %d MHz", f)
	}
}
