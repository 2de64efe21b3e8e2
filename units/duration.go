package units

import (
	"fmt"
	"strings"
	"time"
)

// MaxDelay bounds a link's delay and jitter: anything this long is a unit
// mistake (and netem's 32-bit jitter field ends at ~2.1 s anyway).
const MaxDelay = 60 * time.Second

// tcDurationUnits are tc spellings accepted besides Go's.
var tcDurationUnits = map[string]string{"usec": "us", "usecs": "us", "msec": "ms", "msecs": "ms", "sec": "s", "secs": "s"}

// parseDuration reads Go duration syntax or tc's spellings ("5msec",
// "250usec", "1sec"); a bare number other than 0 needs a unit. unitHint
// and examples finish the error messages.
func parseDuration(s, unitHint, examples string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	num, unit, ok := SplitNumber(t)
	if ok && unit == "" {
		if strings.Trim(num, "0.") == "" {
			return 0, nil
		}
		return 0, fmt.Errorf("duration %q has no unit: write e.g. "+unitHint, s, num, num)
	}
	if ok {
		if u, tc := tcDurationUnits[strings.ToLower(unit)]; tc {
			unit = u
		}
		t = num + unit
	}
	d, err := time.ParseDuration(t)
	if err != nil || strings.HasPrefix(t, "+") {
		return 0, fmt.Errorf("duration %q is not valid (e.g. %s)", s, examples)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return d, nil
}

// ParseDelay parses a link's delay or jitter: Go duration syntax ("5ms",
// "1.5ms", "250us", "250µs", "1s") or tc's "5msec", "250usec", "1sec". It
// must be >= 0 and below MaxDelay. A bare number other than 0 is rejected:
// it needs a unit.
func ParseDelay(s string) (time.Duration, error) {
	d, err := parseDuration(s, "%sms or %sus", "5ms, 250us, 1.5s")
	if err != nil {
		if strings.HasSuffix(err.Error(), "is negative") {
			return 0, fmt.Errorf("%w (valid: 0 .. 60s)", err)
		}
		return 0, err
	}
	if d >= MaxDelay {
		return 0, fmt.Errorf("duration %q is too long (valid: 0 .. 60s)", s)
	}
	return d, nil
}

// ParseDuration parses a flow's duration, offset or interval: Go syntax
// ("20s", "100ms", "1m30s") or tc's spellings; >= 0, and a bare number
// other than 0 needs a unit.
func ParseDuration(s string) (time.Duration, error) {
	return parseDuration(s, "%ss or %sms", "20s, 100ms, 1m30s")
}

// FormatDuration is time.Duration.String with "us" for "µs", so the
// result parses back and stays ASCII.
func FormatDuration(d time.Duration) string {
	return strings.ReplaceAll(d.String(), "µs", "us")
}

// DelayValue is a time.Duration flag parsed with ParseDelay:
// fs.Var((*units.DelayValue)(&d), "delay", ...).
type DelayValue time.Duration

// Set parses s with ParseDelay (flag.Value).
func (d *DelayValue) Set(s string) error {
	v, err := ParseDelay(s)
	if err != nil {
		return err
	}
	*d = DelayValue(v)
	return nil
}

// String renders the delay as FormatDuration does.
func (d *DelayValue) String() string { return FormatDuration(time.Duration(*d)) }

// Type names the flag's value in help text (pflag.Value).
func (*DelayValue) Type() string { return "delay" }

// DurationValue is a time.Duration flag parsed with ParseDuration.
type DurationValue time.Duration

// Set parses s with ParseDuration (flag.Value).
func (d *DurationValue) Set(s string) error {
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = DurationValue(v)
	return nil
}

// String renders the duration as FormatDuration does.
func (d *DurationValue) String() string { return FormatDuration(time.Duration(*d)) }

// Type names the flag's value in help text (pflag.Value).
func (*DurationValue) Type() string { return "duration" }
