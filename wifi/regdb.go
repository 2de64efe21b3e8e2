package wifi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// The kernel's regulatory database, read the way cfg80211 reads it
// (net/wireless/reg.c: struct fwdb_header, fwdb_country, fwdb_collection,
// fwdb_rule; wireless-regdb's db2fw.py writes it): which channels a
// country allows, and whether an access point may start on them. An AP
// whose channel a country marks no-IR ("PASSIVE-SCAN": no initiating
// radiation) never beacons there — hostapd holds it in state NO_IR — so
// up checks the channels against the database before it starts anything.

// RegDBPath is where the kernel loads the database from
// (/lib/firmware/regulatory.db, Debian's wireless-regdb).
const RegDBPath = "/lib/firmware/regulatory.db"

const regdbMagic = 0x52474442 // "RGDB"

// Flags of a database rule (enum fwdb_flags).
const (
	RegNoOFDM    = 1 << 0
	RegNoOutdoor = 1 << 1
	RegDFS       = 1 << 2
	RegNoIR      = 1 << 3
	RegAutoBW    = 1 << 4
)

// RegRule is one frequency range a country allows.
type RegRule struct {
	StartKHz, EndKHz, MaxBWKHz int
	MaxEIRPmBm                 int
	Flags                      int
}

// RegDB is the database: every country's rules.
type RegDB struct {
	Path      string
	Countries map[string][]RegRule
}

// ReadRegDB reads and parses the database at path.
func ReadRegDB(path string) (*RegDB, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	db, err := ParseRegDB(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	db.Path = path
	return db, nil
}

// ParseRegDB parses the database's binary form.
func ParseRegDB(b []byte) (*RegDB, error) {
	be := binary.BigEndian
	if len(b) < 8 || be.Uint32(b) != regdbMagic {
		return nil, errors.New("not a regulatory database (no RGDB magic)")
	}
	if v := be.Uint32(b[4:]); v != 20 {
		return nil, fmt.Errorf("regulatory database version %d (this reader knows 20)", v)
	}
	db := &RegDB{Countries: map[string][]RegRule{}}
	for off := 8; ; off += 4 {
		if off+4 > len(b) {
			return nil, errors.New("country list runs past the end")
		}
		if b[off] == 0 && b[off+1] == 0 {
			break
		}
		alpha2 := string(b[off : off+2])
		coll := int(be.Uint16(b[off+2:])) << 2
		if coll+3 > len(b) {
			return nil, fmt.Errorf("country %s: collection beyond the end", alpha2)
		}
		hlen, n := int(b[coll]), int(b[coll+1])
		ptrs := coll + (hlen+1)&^1
		var rules []RegRule
		for i := 0; i < n; i++ {
			p := ptrs + 2*i
			if p+2 > len(b) {
				return nil, fmt.Errorf("country %s: rule list beyond the end", alpha2)
			}
			r := int(be.Uint16(b[p:])) << 2
			if r+16 > len(b) || int(b[r]) < 16 {
				return nil, fmt.Errorf("country %s: rule %d malformed", alpha2, i)
			}
			rules = append(rules, RegRule{Flags: int(b[r+1]), MaxEIRPmBm: int(be.Uint16(b[r+2:])),
				StartKHz: int(be.Uint32(b[r+4:])), EndKHz: int(be.Uint32(b[r+8:])), MaxBWKHz: int(be.Uint32(b[r+12:]))})
		}
		db.Countries[alpha2] = rules
	}
	return db, nil
}

// APChannel is why an access point cannot start on a channel in a
// country ("" when it can): the channel (centre MHz, width MHz) must lie
// within one of the country's rules, fit its maximum bandwidth (unless
// the rule takes the width from its neighbours, AUTO-BW), and the rule
// must allow initiating radiation.
func (db *RegDB) APChannel(country string, centerMHz, widthMHz int) string {
	rules, ok := db.Countries[country]
	if !ok {
		return fmt.Sprintf("the regulatory database has no country %s", country)
	}
	lo, hi := (centerMHz-widthMHz/2)*1000, (centerMHz+widthMHz/2)*1000
	for _, r := range rules {
		if lo < r.StartKHz || hi > r.EndKHz {
			continue
		}
		switch {
		case r.Flags&RegNoIR != 0:
			return fmt.Sprintf("%s marks %d-%d MHz PASSIVE-SCAN (no initiating radiation: an access point may not start there)", country, r.StartKHz/1000, r.EndKHz/1000)
		case widthMHz*1000 > r.MaxBWKHz && r.Flags&RegAutoBW == 0:
			return fmt.Sprintf("%s allows at most %d MHz at %d-%d MHz", country, r.MaxBWKHz/1000, r.StartKHz/1000, r.EndKHz/1000)
		}
		return ""
	}
	// A channel across two adjacent rules (AUTO-BW joins them) is left to
	// the kernel; one that no rule covers is refused.
	for _, r := range rules {
		if lo < r.EndKHz && hi > r.StartKHz && r.Flags&RegAutoBW != 0 {
			return ""
		}
	}
	return fmt.Sprintf("%s has no rule for %d-%d MHz", country, lo/1000, hi/1000)
}

// CountriesFor lists the countries (alphabetically) in which an access
// point may start on every one of chans ({centre MHz, width MHz}).
func (db *RegDB) CountriesFor(chans [][2]int) []string {
	var out []string
	for c := range db.Countries {
		if c == "00" {
			continue
		}
		ok := true
		for _, ch := range chans {
			if db.APChannel(c, ch[0], ch[1]) != "" {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// FormatCountries is a short list of countries for a message.
func FormatCountries(cs []string, max int) string {
	if len(cs) <= max {
		return strings.Join(cs, ", ")
	}
	return strings.Join(cs[:max], ", ") + fmt.Sprintf(" and %d more", len(cs)-max)
}
