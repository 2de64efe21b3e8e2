package suggest

import "testing"

func TestClosest(t *testing.T) {
	keys := []string{"name", "from", "to", "duration", "proto", "rate", "cubic", "bbr", "reno"}
	for in, want := range map[string]string{
		"nmae":     "name",     // transposition
		"druation": "duration", // transposition
		"dura":     "duration", // a prefix (four bytes or more)
		"dur":      "",         // three bytes: one edit at most
		"prot":     "proto",
		"Rate":     "rate", // case folded
		"bb":       "bbr",  // one insertion, short input
		"cubix":    "cubic",
		"tp":       "to",
		"xyz":      "", // nothing close
		"rate":     "", // already valid
		"r":        "",
	} {
		if got := Closest(in, keys); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
	if got := DidYouMean("nmae", keys); got != `; did you mean "name"?` {
		t.Errorf("DidYouMean = %q", got)
	}
	if Distance("ab", "ba") != 1 || Distance("kitten", "sitting") != 3 {
		t.Error("Distance")
	}
}
