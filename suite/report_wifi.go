package suite

import (
	"fmt"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/suite/expr"
)

// wifiTables writes what the Wi-Fi medium did in each scenario (medians
// over valid runs, per radio) and, where the model predicts a flow, the
// flow's measured goodput beside the prediction. Nothing when no run had
// a medium.
func wifiTables(b *strings.Builder, o *Outcome, p *Plan) {
	type key struct{ scen, node string }
	radios := map[key][]analysis.WiFiRadio{}
	type fkey struct{ scen, flow string }
	model, meas := map[fkey][]float64{}, map[fkey][]float64{}
	backend := ""
	for _, sc := range p.Scenarios {
		for _, r := range validRuns(o, sc.Name) {
			if r.data == nil || r.data.res.WiFi == nil {
				continue
			}
			backend = r.data.res.WiFi.Backend
			for _, x := range r.data.res.WiFi.Radios {
				radios[key{sc.Name, x.Node}] = append(radios[key{sc.Name, x.Node}], x)
			}
			for f, v := range r.data.wifi {
				k := fkey{sc.Name, f}
				model[k] = append(model[k], v)
				if g, err := r.data.goodput(f); err == nil {
					meas[k] = append(meas[k], g.Num)
				}
			}
		}
	}
	if len(radios) == 0 {
		return
	}
	fmt.Fprintf(b, "## The Wi-Fi medium (%s backend; medians over valid runs)\n\n", backend)
	b.WriteString("| scenario | node | data rate | airtime | frames | retries/frame | collisions | PER | lost after retries | queue drops |\n|---|---|---|---|---|---|---|---|---|---|\n")
	var keys []key
	for k := range radios {
		keys = append(keys, k)
	}
	order := map[string]int{}
	for i, sc := range p.Scenarios {
		order[sc.Name] = i
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].scen != keys[j].scen {
			return order[keys[i].scen] < order[keys[j].scen]
		}
		return keys[i].node < keys[j].node
	})
	for _, k := range keys {
		rs := radios[k]
		med := func(f func(analysis.WiFiRadio) float64) float64 {
			var v []float64
			for _, r := range rs {
				v = append(v, f(r))
			}
			return analysis.Median(v)
		}
		if med(func(r analysis.WiFiRadio) float64 { return float64(r.Frames) }) == 0 {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k.scen, k.node, rs[len(rs)-1].Rate,
			fmtPct(med(func(r analysis.WiFiRadio) float64 { return r.AirtimeShare })),
			expr.FmtNum(med(func(r analysis.WiFiRadio) float64 { return float64(r.Frames) })),
			expr.FmtNum(med(func(r analysis.WiFiRadio) float64 {
				if r.Frames == 0 {
					return 0
				}
				return float64(r.Retries) / float64(r.Frames)
			})),
			expr.FmtNum(med(func(r analysis.WiFiRadio) float64 { return float64(r.Collisions) })),
			expr.FmtNum(med(func(r analysis.WiFiRadio) float64 { return r.PER })),
			expr.FmtNum(med(func(r analysis.WiFiRadio) float64 { return float64(r.Failed) })),
			expr.FmtNum(med(func(r analysis.WiFiRadio) float64 { return float64(r.Dropped) })))
	}
	b.WriteString("\n")
	if len(model) == 0 {
		return
	}
	b.WriteString("Flows over Wi-Fi against the pure 802.11 model (`emuctl model wifi`'s simulation of the same hop: rate, mode, retry limit, SNR, saturated senders):\n\n| scenario | flow | measured | model | ratio |\n|---|---|---|---|---|\n")
	var fks []fkey
	for k := range model {
		fks = append(fks, k)
	}
	sort.Slice(fks, func(i, j int) bool {
		if fks[i].scen != fks[j].scen {
			return order[fks[i].scen] < order[fks[j].scen]
		}
		return fks[i].flow < fks[j].flow
	})
	for _, k := range fks {
		m, g := analysis.Median(model[k]), analysis.Median(meas[k])
		fmt.Fprintf(b, "| %s | %s | %s Mbit/s | %s Mbit/s | %.3f |\n", k.scen, k.flow, expr.FmtNum(round3(g)), expr.FmtNum(round3(m)), g/m)
	}
	b.WriteString("\n")
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
