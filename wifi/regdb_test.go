package wifi

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// encodeRegDB writes countries' rules in the kernel's format (as
// wireless-regdb's db2fw.py does): header, country list, rules, then one
// collection per country.
func encodeRegDB(countries map[string][]RegRule) []byte {
	be := binary.BigEndian
	names := make([]string, 0, len(countries))
	for c := range countries {
		names = append(names, c)
	}
	slices.Sort(names)
	b := be.AppendUint32(nil, regdbMagic)
	b = be.AppendUint32(b, 20)
	ptrAt := map[string]int{}
	for _, c := range names {
		b = append(b, c[0], c[1])
		ptrAt[c] = len(b)
		b = append(b, 0, 0)
	}
	b = append(b, 0, 0, 0, 0)
	rulePtr := map[string][]int{}
	for _, c := range names {
		for _, r := range countries[c] {
			rulePtr[c] = append(rulePtr[c], len(b))
			b = append(b, 16, byte(r.Flags))
			b = be.AppendUint16(b, uint16(r.MaxEIRPmBm))
			b = be.AppendUint32(b, uint32(r.StartKHz))
			b = be.AppendUint32(b, uint32(r.EndKHz))
			b = be.AppendUint32(b, uint32(r.MaxBWKHz))
		}
	}
	for _, c := range names {
		be.PutUint16(b[ptrAt[c]:], uint16(len(b)>>2))
		b = append(b, 3, byte(len(rulePtr[c])), 0, 0)
		for _, p := range rulePtr[c] {
			b = be.AppendUint16(b, uint16(p>>2))
		}
		if len(rulePtr[c])%2 == 1 {
			b = append(b, 0, 0)
		}
	}
	return b
}

func rule(lo, hi, bw int, flags int) RegRule {
	return RegRule{StartKHz: lo * 1000, EndKHz: hi * 1000, MaxBWKHz: bw * 1000, MaxEIRPmBm: 2000, Flags: flags}
}

// TestRegDB: the database's binary form parsed, and an AP's channel judged
// as cfg80211 and hostapd do: within a rule, within its bandwidth, and not
// PASSIVE-SCAN (no-IR: the AP would stay in state NO_IR, never beaconing).
func TestRegDB(t *testing.T) {
	in := map[string][]RegRule{
		"US": {rule(2400, 2472, 40, 0), rule(5150, 5250, 80, RegAutoBW), rule(5925, 7125, 320, RegNoOutdoor|RegNoIR)},
		"CA": {rule(2400, 2483, 40, 0), rule(5150, 5250, 80, RegNoOutdoor|RegAutoBW), rule(5925, 7125, 320, RegNoOutdoor)},
		"00": {rule(2402, 2472, 40, 0), rule(5170, 5250, 80, RegNoIR|RegAutoBW)},
	}
	db, err := ParseRegDB(encodeRegDB(in))
	if err != nil {
		t.Fatal(err)
	}
	for c, rules := range in {
		if !slices.Equal(db.Countries[c], rules) {
			t.Errorf("%s: parsed %+v, want %+v", c, db.Countries[c], rules)
		}
	}
	for _, c := range []struct {
		country      string
		center, wide int
		want         string // "" or a part of the refusal
	}{
		{"US", 2412, 20, ""},
		{"US", 5180, 20, ""},
		{"US", 5210, 80, ""},
		{"US", 5975, 20, "PASSIVE-SCAN"},
		{"CA", 5975, 20, ""},
		{"CA", 6105, 320, ""},
		{"US", 2484, 20, "no rule"},
		{"00", 5180, 20, "PASSIVE-SCAN"},
		{"XX", 2412, 20, "no country XX"},
	} {
		got := db.APChannel(c.country, c.center, c.wide)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s %d MHz/%d: %q, want %q", c.country, c.center, c.wide, got, c.want)
		}
	}
	if got := db.CountriesFor([][2]int{{5180, 20}, {5975, 20}}); !slices.Equal(got, []string{"CA"}) {
		t.Errorf("countries for 5180 + 5975 MHz: %v, want [CA]", got)
	}
	if _, err := ParseRegDB([]byte("nope")); err == nil {
		t.Error("garbage parsed")
	}
	// The machine's own database, when it has one.
	if host, err := ReadRegDB(RegDBPath); err == nil {
		t.Logf("%s: %d countries; a 6 GHz AP (5975 MHz) in US: %q; allowed in %s", RegDBPath, len(host.Countries),
			host.APChannel("US", 5975, 20), FormatCountries(host.CountriesFor([][2]int{{5975, 20}}), 8))
	}
}
