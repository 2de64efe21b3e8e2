package units

import (
	"fmt"
	"strings"
)

// GilbertElliott is a two-state burst-loss model: netem's
// "loss gemodel P R 1-H 1-K" with P=P, R=R, 1-H=BadLoss, 1-K=GoodLoss.
// A packet first moves between the states, then is lost with the
// probability of its (new) state.
type GilbertElliott struct {
	P        Percent `json:"p_pct"`         // good → bad transition probability per packet
	R        Percent `json:"r_pct"`         // bad → good transition probability per packet (> 0)
	BadLoss  Percent `json:"bad_loss_pct"`  // loss probability in the bad state (netem 1-h; default 100)
	GoodLoss Percent `json:"good_loss_pct"` // loss probability in the good state (netem 1-k; default 0)
}

// Gilbert-Elliott defaults, as in netem's "loss gemodel p r": a packet in
// the bad state is always lost, one in the good state never.
const (
	DefaultGEBadLoss  Percent = 100
	DefaultGEGoodLoss Percent = 0
)

// GENames are the model's keys in positional (netem) order.
var GENames = []string{"p", "r", "bad_loss", "good_loss"}

// Fields returns pointers to P, R, BadLoss and GoodLoss, in GENames order.
func (g *GilbertElliott) Fields() []*Percent {
	return []*Percent{&g.P, &g.R, &g.BadLoss, &g.GoodLoss}
}

// ParseGilbertElliott parses "p/r[/bad_loss[/good_loss]]", each a
// percentage ("1%/25%", "1%/25%/90%/0.1%"), in the order of netem's
// "loss gemodel p r 1-h 1-k". bad_loss defaults to 100%, good_loss to 0%;
// r must be above 0.
func ParseGilbertElliott(s string) (*GilbertElliott, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 4 {
		return nil, fmt.Errorf("ge %q is not p/r[/bad_loss[/good_loss]] in percent (e.g. 1%%/25%% or 1%%/25%%/100%%/0%%, netem's gemodel p r 1-h 1-k)", Clip(s))
	}
	g := GilbertElliott{BadLoss: DefaultGEBadLoss, GoodLoss: DefaultGEGoodLoss}
	fields := g.Fields()
	var msgs []string
	for i, part := range parts {
		v, err := ParsePercent(part)
		if err != nil {
			msgs = append(msgs, GENames[i]+": "+err.Error())
			continue
		}
		*fields[i] = v
	}
	if len(msgs) > 0 {
		return nil, fmt.Errorf("ge %q: %s", Clip(s), strings.Join(msgs, "; "))
	}
	if msg := g.Check(); msg != "" {
		return nil, fmt.Errorf("ge %q: %s", Clip(s), msg)
	}
	return &g, nil
}

// Check returns what is wrong with a complete model, or "".
func (g *GilbertElliott) Check() string {
	for i, f := range g.Fields() {
		if !(*f >= 0 && *f <= 100) {
			return fmt.Sprintf("%s %v is out of range (valid: 0%% .. 100%%)", GENames[i], float64(*f))
		}
	}
	if g.R == 0 {
		return "r 0% never leaves the bad state (a dead link once it is entered): use r > 0, or loss: 100% for a link that drops everything"
	}
	return ""
}

// String renders g as "p/r/bad_loss/good_loss" in percent, which
// ParseGilbertElliott reads back: "1%/25%/100%/0%".
func (g *GilbertElliott) String() string {
	if g == nil {
		return ""
	}
	return g.P.String() + "/" + g.R.String() + "/" + g.BadLoss.String() + "/" + g.GoodLoss.String()
}
