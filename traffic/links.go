package traffic

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/units"
)

// stateLink is one shaped link as the lab's state records it (read
// loosely from state.json, so the runtime may grow fields freely).
type stateLink struct {
	Index   int     `json:"index"`
	Name    string  `json:"name"`
	Backend string  `json:"backend"`
	Warning string  `json:"warning"`
	AtoB    linkDir `json:"a_to_b"`
	BtoA    linkDir `json:"b_to_a"`
}

type linkDir struct {
	Rate         units.BitRate
	Delay        time.Duration
	Jitter       time.Duration
	Loss         units.Percent
	QueuePackets int
	QueueBytes   units.Bytes
	AQM          *struct{ Discipline string }
}

// queueLimit is the direction's queue limit in force, in packets: its
// own, or the default its backend gave it (tc.Dir.QueueLimits); 0 for a
// byte limit or no rate.
func (d linkDir) queueLimit(s *topo.Spec, li int) int {
	if d.QueuePackets > 0 || d.QueueBytes > 0 || d.Rate == 0 || li >= len(s.Links) {
		return d.QueuePackets
	}
	td := tc.Dir{Rate: d.Rate, Delay: d.Delay}
	if d.AQM != nil && d.AQM.Discipline != "" {
		td.AQM = &tc.AQM{Discipline: d.AQM.Discipline}
	}
	pk, _ := td.QueueLimits(emu.LinkMTU(s, li))
	return pk
}

// stateLinks returns the shaped links recorded for a lab, by link index.
func stateLinks(lab string) map[int]stateLink {
	b, err := os.ReadFile(filepath.Join(emu.StateDir(lab), "state.json"))
	if err != nil {
		return nil
	}
	var st struct {
		Links []stateLink `json:"links"`
	}
	if json.Unmarshal(b, &st) != nil {
		return nil
	}
	out := map[int]stateLink{}
	for _, l := range st.Links {
		out[l.Index] = l
	}
	return out
}

// clusterStateLinks are the shaped links of a lab over several machines
// as the controller knows them: the parameters configured, or set by
// link set since (emu.ShowLinks), by link index; the backend is where
// the link runs ("vxlan VNI: m1 <-> m2", "machine m1") until the
// machine sending a direction says which shapes it (queueWatch).
func clusterStateLinks(lab string) map[int]stateLink {
	infos, err := emu.ShowLinks(lab)
	if err != nil {
		return nil
	}
	out := map[int]stateLink{}
	for _, li := range infos {
		if li.AtoB.IsZero() && li.BtoA.IsZero() {
			continue
		}
		b, err := json.Marshal(struct {
			A tc.Dir `json:"a_to_b"`
			B tc.Dir `json:"b_to_a"`
		}{li.AtoB, li.BtoA})
		if err != nil {
			continue
		}
		sl := stateLink{Index: li.Index, Name: li.A + " <-> " + li.B, Backend: li.Backend, Warning: li.Warning}
		if json.Unmarshal(b, &sl) == nil {
			out[li.Index] = sl
		}
	}
	return out
}

// linkDirection returns the backend and effective parameters of one hop.
func linkDirection(s *topo.Spec, shaped map[int]stateLink, h hop) (backend string, d linkDir) {
	if sl, ok := shaped[h.link]; ok {
		if h.aToB {
			return sl.Backend, sl.AtoB
		}
		return sl.Backend, sl.BtoA
	}
	if h.wireless(s) {
		return "wifi", linkDir{}
	}
	return "none", linkDir{}
}

func hopName(s *topo.Spec, h hop) string {
	a, b := h.ends(s)
	return a.String() + "->" + b.String()
}

// resultLinks lists every hop the flows cross, with backend, parameters,
// the egress qdisc counters' deltas and what qw watched of its queue.
func resultLinks(s *topo.Spec, shaped map[int]stateLink, hops []hop, before, after map[string]*nodeSnap, qw *queueWatch) []analysis.Link {
	var out []analysis.Link
	seen := map[string]bool{}
	for _, h := range hops {
		name := hopName(s, h)
		if seen[name] {
			continue
		}
		seen[name] = true
		backend, d := linkDirection(s, shaped, h)
		l := analysis.Link{Name: name, Backend: backend, RateBps: float64(d.Rate),
			DelayUs: float64(d.Delay) / 1e3, LossPct: float64(d.Loss), QueuePackets: d.queueLimit(s, h.link)}
		from, _ := h.ends(s)
		if b, a := ifaceOf(before, from), ifaceOf(after, from); b != nil && a != nil {
			pb, db := b.rootStats()
			pa, da := a.rootStats()
			l.SentPackets, l.DroppedPackets = pa-pb, da-db
		}
		if d.Rate > 0 {
			l.Discipline = "droptail"
			if d.AQM != nil && d.AQM.Discipline != "" {
				l.Discipline = d.AQM.Discipline
			}
		}
		qw.annotate(&l, emu.LinkDir{Link: h.link, AToB: h.aToB}, float64(d.Rate))
		out = append(out, l)
	}
	return out
}

func ifaceOf(snaps map[string]*nodeSnap, e topo.Endpoint) *ifaceInfo {
	s := snaps[e.Node]
	if s == nil {
		return nil
	}
	for i := range s.ifaces {
		if s.ifaces[i].name == e.Iface {
			return &s.ifaces[i]
		}
	}
	return nil
}

// bottleneck is the lowest configured rate on a path (0: unshaped).
func bottleneck(s *topo.Spec, shaped map[int]stateLink, hops []hop) float64 {
	var r units.BitRate
	for _, h := range hops {
		if _, d := linkDirection(s, shaped, h); d.Rate > 0 && (r == 0 || d.Rate < r) {
			r = d.Rate
		}
	}
	return float64(r)
}
