package suite

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/emuctl/emuctl/wifi"
)

// What a scenario runs on, when the machine decides it. A parameter value
// may say what carries its scenarios (medium:), what the machine must
// have for them (needs:), and which other value of the parameter stands
// in for it elsewhere (replaces:): cc-mlo's links=mlo is real 802.11be
// multi-link where the kernel's hwsim and the daemons can do it, and its
// wired stand-in links=multi runs everywhere else — never both, and the
// report says which one ran (Outcome.Media).

// capabilities are what needs: may name: each returns why the machine
// lacks it ("" when it has it).
var capabilities = map[string]func() string{
	// An AP MLD and a station MLD on mac80211_hwsim: radios that claim
	// multi-link operation, an 802.11be hostapd ≥ 2.12 and an MLD-capable
	// wpa_supplicant (≥ 2.11), found as up finds them (EMUCTL_HOSTAPD,
	// EMUCTL_WPA_SUPPLICANT, PATH).
	"wifi-mlo": func() string {
		var why []string
		if err := wifi.ProbeHwsimMLO(); err != nil {
			why = append(why, fmt.Sprintf("mac80211_hwsim multi-link radios (%v)", err))
		}
		t := wifi.ProbeTools()
		if !t.Hostapd.MLO {
			why = append(why, fmt.Sprintf("%s=<%s> (found: %s)", wifi.EnvHostapd, wifi.MLOHostapd, toolText(t.Hostapd)))
		}
		if !t.WpaSupplicant.MLO {
			why = append(why, fmt.Sprintf("%s=<wpa_supplicant ≥ 2.11 with multi-link> (found: %s)", wifi.EnvWpaSupplicant, toolText(t.WpaSupplicant)))
		}
		if len(why) == 0 {
			return ""
		}
		return "needs " + strings.Join(why, " and ")
	},
}

func toolText(t wifi.Tool) string {
	switch {
	case t.Path == "" && t.Err != nil:
		return "none: " + t.Err.Error()
	case t.Path == "":
		return "none"
	case t.MLD && !t.MLO:
		return fmt.Sprintf("%s v%s, multi-link code but older than the multi-link tier needs", t.Path, t.Version)
	}
	return fmt.Sprintf("%s v%s without multi-link", t.Path, t.Version)
}

// capability probes (once per process) are cached: a suite asks for each
// scenario.
var (
	capMu    sync.Mutex
	capCache = map[string]string{}
)

// lacks is why the machine lacks capability name ("" when it has it).
func lacks(name string) string {
	capMu.Lock()
	defer capMu.Unlock()
	why, ok := capCache[name]
	if !ok {
		why = capabilities[name]()
		capCache[name] = why
	}
	return why
}

// capabilityNames lists what needs: may name.
func capabilityNames() []string {
	out := make([]string, 0, len(capabilities))
	for k := range capabilities {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// valueKeys reads a mapping value's medium:, needs: and replaces:.
func (d *diag) valueKeys(v *Value, path string) {
	for _, e := range d.entries(v.node, path, nil, false) {
		switch e.Key {
		case "medium":
			v.Medium = d.str(e.V, path+".medium")
		case "needs":
			v.hasNeeds = true
			for _, c := range d.stringList(e.V, path+".needs") {
				if _, ok := capabilities[c]; !ok {
					d.errorf(e.V, path+".needs", "unknown capability %q %s", c, choices("valid", c, capabilityNames()))
					continue
				}
				v.Needs = append(v.Needs, c)
			}
		case "replaces":
			v.Replaces = d.str(e.V, path+".replaces")
		}
	}
}

// checkReplaces: a value replaces another value of its parameter, needs
// something (else it would always replace it), and the value it replaces
// is a plain one that no other value replaces.
func (d *diag) checkReplaces(p *Param, path string) {
	by := map[string]string{}
	for _, v := range p.Values {
		if v.Replaces == "" {
			continue
		}
		at := v.node
		for i := 0; v.node != nil && i+1 < len(v.node.Content); i += 2 {
			if v.node.Content[i].Value == "replaces" {
				at = v.node.Content[i+1]
			}
		}
		vp := path + "." + v.Label + ".replaces"
		o := p.value(v.Replaces)
		switch {
		case o == nil:
			d.errorf(at, vp, "no value %q in %s %s", v.Replaces, p.Name, choices("valid", v.Replaces, p.labels()))
		case o == v:
			d.errorf(at, vp, "a value cannot replace itself")
		case !v.hasNeeds:
			d.errorf(at, vp, "replaces: needs needs: (what the machine must have for %s to run instead of %s)", v.Label, o.Label)
		case o.Replaces != "" || len(o.Needs) > 0:
			d.errorf(at, vp, "%s replaces a value itself; the value replaced must be a plain stand-in", o.Label)
		case by[o.Label] != "":
			d.errorf(at, vp, "%s is replaced by %s already", o.Label, by[o.Label])
		default:
			by[o.Label] = v.Label
		}
	}
}

// Medium is what carried one parameter value's scenarios in a suite run.
type Medium struct {
	Param  string `json:"param"`
	Label  string `json:"label"`
	Medium string `json:"medium"`
	// Ran: its scenarios ran; otherwise Why says why not.
	Ran bool   `json:"ran"`
	Why string `json:"why,omitempty"`
	// Scenarios is how many of the plan's scenarios have this value.
	Scenarios int `json:"scenarios"`
}

// ChooseMedia leaves out the scenarios of values whose needs the machine
// lacks, and of values replaced by one whose needs it has (once; Run
// does it when the caller has not). It returns a note per value left out
// and what carries each value that names a medium, needs something or is
// replaced.
func (p *Plan) ChooseMedia() (notes []string, media []Medium) {
	if !p.chosen {
		p.mediaNotes, p.media = p.chooseMedia()
		p.chosen = true
	}
	return p.mediaNotes, p.media
}

func (p *Plan) chooseMedia() (notes []string, media []Medium) {
	skip := map[[2]string]string{} // {param, label} → why its scenarios are left out
	for _, pr := range p.Suite.Params {
		for _, v := range pr.Values {
			if len(v.Needs) == 0 {
				continue
			}
			var why []string
			for _, c := range v.Needs {
				if w := lacks(c); w != "" {
					why = append(why, w)
				}
			}
			if len(why) > 0 {
				skip[[2]string{pr.Name, v.Label}] = fmt.Sprintf("not available on this machine (%s: %s)", strings.Join(v.Needs, ", "), strings.Join(why, "; "))
				continue
			}
			if v.Replaces != "" {
				skip[[2]string{pr.Name, v.Replaces}] = fmt.Sprintf("%s=%s runs instead, this machine having %s", pr.Name, v.Label, strings.Join(v.Needs, ", "))
			}
		}
	}
	count := map[[2]string]int{}
	kept := p.Scenarios[:0]
	for _, sc := range p.Scenarios {
		left := false
		for _, pr := range p.Suite.Params {
			k := [2]string{pr.Name, sc.Labels[pr.Name]}
			count[k]++
			if _, ok := skip[k]; ok {
				left = true
			}
		}
		if !left {
			kept = append(kept, sc)
		}
	}
	p.Scenarios = kept
	for _, pr := range p.Suite.Params {
		replaced := map[string]bool{}
		for _, v := range pr.Values {
			if v.Replaces != "" {
				replaced[v.Replaces] = true
			}
		}
		for _, v := range pr.Values {
			k := [2]string{pr.Name, v.Label}
			if count[k] == 0 || (v.Medium == "" && len(v.Needs) == 0 && !replaced[v.Label]) {
				continue
			}
			m := Medium{Param: pr.Name, Label: v.Label, Medium: v.Medium, Ran: true, Scenarios: count[k]}
			if why, ok := skip[k]; ok {
				m.Ran, m.Why = false, why
				notes = append(notes, fmt.Sprintf("scenarios with %s=%s not run (%d): %s", pr.Name, v.Label, count[k], why))
			}
			media = append(media, m)
		}
	}
	return notes, media
}

// estimated reports whether Estimate counts a scenario: one that replaces
// a stand-in runs only instead of it, so a plan counts one of the two.
func (sc *Scenario) estimated() bool {
	for _, v := range sc.values {
		if v != nil && v.Replaces != "" {
			return false
		}
	}
	return true
}

// mediaText is the report's statement of what carried the scenarios.
func mediaText(ms []Medium) string {
	var b strings.Builder
	for _, m := range ms {
		what := m.Medium
		if what == "" {
			what = "(its medium not stated)"
		}
		if m.Ran {
			fmt.Fprintf(&b, "- **%s=%s ran** (%d scenarios): %s\n", m.Param, m.Label, m.Scenarios, what)
		} else {
			fmt.Fprintf(&b, "- %s=%s did not run (%s): %s\n", m.Param, m.Label, what, m.Why)
		}
	}
	return b.String()
}
