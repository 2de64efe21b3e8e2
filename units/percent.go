package units

import (
	"fmt"
	"strconv"
	"strings"
)

// Percent is a probability in percent, 0..100: a link's loss, duplication
// or corruption, as netem and the topology schema write it.
type Percent float64

// Prob is p as a probability in 0..1.
func (p Percent) Prob() float64 { return float64(p) / 100 }

// ParsePercent parses a percentage: "1%", "0.5%", or a plain number that
// also means percent ("1" = 1%, "0.01" = 0.01%, not 1%). The range is
// 0..100.
func ParsePercent(s string) (Percent, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSpace(strings.TrimSuffix(t, "%"))
	num, unit, ok := SplitNumber(t)
	if !ok || unit != "" {
		return 0, fmt.Errorf("percentage %q is not a number (e.g. 1%%, 0.5%%; a plain number also means percent)", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("percentage %q is not a number", s)
	}
	if f < 0 || f > 100 {
		return 0, fmt.Errorf("percentage %q is out of range (valid: 0%% .. 100%%)", s)
	}
	return Percent(f), nil
}

// String renders p so that ParsePercent reads it back: "1%", "0.5%".
func (p Percent) String() string {
	return strconv.FormatFloat(float64(p), 'f', -1, 64) + "%"
}

// Set parses s with ParsePercent (flag.Value).
func (p *Percent) Set(s string) error {
	v, err := ParsePercent(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Type names the flag's value in help text (pflag.Value).
func (*Percent) Type() string { return "percent" }
