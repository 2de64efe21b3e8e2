package mmtrace

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	ms, err := Parse(strings.NewReader("0\n3\n3\r\n 7\n10\n"))
	if err != nil || len(ms) != 5 || ms[4] != 10 {
		t.Fatalf("Parse = %v, %v", ms, err)
	}
	for _, c := range []struct{ in, want string }{
		{"", "1:1: the trace is empty"},
		{"5\n4\n", "2:1: timestamp 4 comes before 5 on line 1"},
		{"1\n\n2\n", "2:1: empty line"},
		{"1\n  x2\n", `2:3: "x2" is not a timestamp`},
		{"0\n0\n", "2:1: the last timestamp is 0"},
		{"-1\n", `1:1: "-1" is not a timestamp`},
	} {
		_, err := Parse(strings.NewReader(c.in))
		var te *Error
		if !errors.As(err, &te) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want %q...", c.in, err, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	// 2 s: the first second one opportunity a millisecond (12.032 Mbit/s),
	// then a 600 ms outage and 400 opportunities.
	var ms []uint32
	for i := uint32(1); i <= 1000; i++ {
		ms = append(ms, i)
	}
	for i := uint32(1600); i < 2000; i++ {
		ms = append(ms, i)
	}
	ms = append(ms, 2000)
	s := Summarize(ms)
	if s.Length != 2*time.Second || s.LongestGap != 600*time.Millisecond || s.Opportunities != 1401 {
		t.Errorf("stats %+v", s)
	}
	if s.MaxBps != 999*Bytes*8 || s.MinBps != 401*Bytes*8 {
		t.Errorf("1-s min/max %v/%v", s.MinBps, s.MaxBps)
	}
}

// TestLTE: the synthetic trace is deterministic, valid, near its mean,
// varies second to second and has outages.
func TestLTE(t *testing.T) {
	a, b := LTE(7, 6e6, 60000), LTE(7, 6e6, 60000)
	if len(a) != len(b) || a[len(a)/2] != b[len(b)/2] {
		t.Fatal("LTE is not deterministic")
	}
	var sb strings.Builder
	for _, v := range a {
		sb.WriteString(strconv.FormatUint(uint64(v), 10) + "\n")
	}
	if _, err := Parse(strings.NewReader(sb.String())); err != nil {
		t.Fatal(err)
	}
	s := Summarize(a)
	t.Logf("LTE(7, 6 Mbit/s, 60 s): %d opportunities, mean %.2f Mbit/s, 1-s min %.2f max %.2f, longest gap %v", s.Opportunities, s.MeanBps/1e6, s.MinBps/1e6, s.MaxBps/1e6, s.LongestGap)
	if s.MeanBps < 4e6 || s.MeanBps > 8e6 || s.MaxBps < 1.5*s.MeanBps || s.LongestGap < 200*time.Millisecond {
		t.Errorf("LTE statistics %+v", s)
	}
}
