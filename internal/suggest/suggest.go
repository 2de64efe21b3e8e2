// Package suggest finds the valid word a user most likely meant, for the
// "did you mean" part of error messages (topology, flows and suite files,
// congestion controls). One rule everywhere: the candidate at the
// smallest optimal-string-alignment distance (Levenshtein with adjacent
// transpositions, case folded), at most 1 for inputs of up to three bytes
// and 2 for longer ones, which may also be the start of the candidate.
package suggest

import (
	"fmt"
	"strings"
)

// Closest is the candidate s most likely stands for ("" when none is close
// enough, or when s is one of them).
func Closest(s string, candidates []string) string {
	ls := strings.ToLower(s)
	best, bestD := "", 1<<30
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := Distance(ls, lc)
		if d > 2 && len(ls) >= 3 && strings.HasPrefix(lc, ls) {
			d = 2
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(s) <= 3 {
		limit = 1
	}
	if best == "" || bestD > limit || best == s {
		return ""
	}
	return best
}

// DidYouMean is `; did you mean "x"?` for the closest candidate, or "".
func DidYouMean(s string, candidates []string) string {
	if c := Closest(s, candidates); c != "" {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}

// Distance is the optimal string alignment distance between a and b
// (Levenshtein plus adjacent transpositions), for inputs up to 64 bytes
// (longer ones are equal or 1<<20 apart).
func Distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 1 << 20
	}
	var d [65][65]int
	for i := 0; i <= len(a); i++ {
		d[i][0] = i
	}
	for j := 0; j <= len(b); j++ {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// List renders names as "a, b, c", the first 12 and then how many more.
func List(names []string) string {
	const max = 12
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(", ... (%d more)", len(names)-max)
}

// Choices is the part of a message that says what is valid and what got
// was likely meant as: `(label: a, b, c; did you mean "b"?)`.
func Choices(label, got string, valid []string) string {
	return "(" + label + ": " + List(valid) + DidYouMean(got, valid) + ")"
}
