package units

import "strings"

// SplitNumber splits "1.5gbit" into "1.5" and "gbit". The number is plain
// decimal digits with at most one dot (no sign, exponent, hex, inf or nan).
func SplitNumber(s string) (num, unit string, ok bool) {
	s = strings.TrimSpace(s)
	i, dots, digits := 0, 0, 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			dots++
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		digits++
	}
	if digits == 0 || dots > 1 || len(s[:i]) > 32 {
		return "", "", false
	}
	return s[:i], strings.TrimSpace(s[i:]), true
}

// Clip shortens s for an error message.
func Clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
