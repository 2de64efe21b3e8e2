package emu

// The regulatory country an access point's hostapd is given. hostapd's
// country_code (with ieee80211d) sets the kernel's regulatory domain, and
// an AP may start only on channels that domain lets it radiate on: a
// channel the regulatory database marks PASSIVE-SCAN (no-IR) stays in
// hostapd's state NO_IR and never beacons. Debian's wireless-regdb
// (2026.09.03 here) marks all of 6 GHz PASSIVE-SCAN for US, so a 6 GHz AP
// — or the 6 GHz link of an AP MLD, whose other links then advertise
// only themselves — never starts under the default US. up checks every
// AP's channels against the database the kernel loads: the default
// country gives way to the first of defaultCountries that allows them
// all; a country the file names is refused, naming countries that would
// do.

import (
	"fmt"
	"slices"
	"sync"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
)

// defaultCountries are tried, in order, for an AP whose file names no
// country: US (topo's default) first, then countries whose rules cover
// all of 2.4, 5 and 6 GHz (CA, like US, up to 7125 MHz; the others
// 5925/5945-6425 MHz).
var defaultCountries = []string{"US", "CA", "GB", "DE", "JP", "AU"}

var (
	regdbOnce sync.Once
	regdb     *wifi.RegDB
	regdbErr  error
)

// loadRegDB reads the regulatory database once (nil when there is none:
// the kernel then knows only the world domain, and hostapd says so).
func loadRegDB() (*wifi.RegDB, error) {
	regdbOnce.Do(func() { regdb, regdbErr = wifi.ReadRegDB(wifi.RegDBPath) })
	return regdb, regdbErr
}

// apChannels are an AP's channels (every link of a multi-link AP) as
// {centre MHz of the whole width, width MHz}.
func apChannels(ap *topo.WiFiAP) [][2]int {
	chans := []topo.WiFiChannel{ap.Channel}
	if ap.MLO() {
		chans = ap.Links
	}
	var out [][2]int
	for _, c := range chans {
		out = append(out, [2]int{channelCenterMHz(c), max(c.Width, 20)})
	}
	return out
}

// channelCenterMHz is the centre frequency of a channel's whole width.
func channelCenterMHz(c topo.WiFiChannel) int {
	cc := c.CenterChannel
	if cc == 0 {
		cc = c.Channel
	}
	switch c.Band {
	case topo.Band24:
		if cc == 14 {
			return 2484
		}
		return 2407 + 5*cc
	case topo.Band6:
		if cc == 2 {
			return 5935
		}
		return 5950 + 5*cc
	}
	return 5000 + 5*cc
}

// apCountry is the country to give the AP's hostapd, or why none will do.
func apCountry(db *wifi.RegDB, ap *topo.WiFiAP) (string, error) {
	if db == nil {
		return ap.Country, nil
	}
	chans := apChannels(ap)
	refusal := func(c string) string {
		for _, ch := range chans {
			if why := db.APChannel(c, ch[0], ch[1]); why != "" {
				return why
			}
		}
		return ""
	}
	why := refusal(ap.Country)
	if why == "" {
		return ap.Country, nil
	}
	if !ap.CountrySet {
		for _, c := range defaultCountries {
			if refusal(c) == "" {
				return c, nil
			}
		}
	}
	ok := db.CountriesFor(chans)
	hint := "no country in it allows them all"
	if len(ok) > 0 {
		// the default candidates first: they are the likeliest to be meant
		slices.SortStableFunc(ok, func(a, b string) int {
			ia, ib := slices.Index(defaultCountries, a), slices.Index(defaultCountries, b)
			if ia < 0 {
				ia = len(defaultCountries)
			}
			if ib < 0 {
				ib = len(defaultCountries)
			}
			return ia - ib
		})
		hint = "set wifi: {country: ...} to one that does, e.g. " + wifi.FormatCountries(ok, 6)
	}
	how := "country " + ap.Country
	if !ap.CountrySet {
		how = "the default country " + ap.Country + " (nor " + wifi.FormatCountries(defaultCountries[1:], 6) + ")"
	}
	return "", fmt.Errorf("the regulatory database the kernel loads (%s) lets no access point start on its channels in %s: %s; %s", db.Path, how, why, hint)
}

// regdomPreflight checks every AP's channels against the regulatory
// database (hwsim backend: the engine has no regulatory domain).
func regdomPreflight(spec *topo.Spec) []string {
	db, err := loadRegDB()
	if err != nil {
		return nil // no database: hostapd reports what it cannot do
	}
	var errs []string
	for i := range spec.Nodes {
		n := &spec.Nodes[i]
		if n.AP == nil {
			continue
		}
		if _, err := apCountry(db, n.AP); err != nil {
			errs = append(errs, fmt.Sprintf("%s: access point %s: %v", n.AP.Pos, n.Name, err))
		}
	}
	return errs
}

// resolveCountry sets the country the AP's hostapd is given (the spec
// records it, so ls and inspect show the one in force).
func resolveCountry(ap *topo.WiFiAP) error {
	db, err := loadRegDB()
	if err != nil {
		return nil
	}
	c, err := apCountry(db, ap)
	if err != nil {
		return err
	}
	ap.Country = c
	return nil
}
