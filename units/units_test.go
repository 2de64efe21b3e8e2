package units

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func TestParseBitRate(t *testing.T) {
	for in, want := range map[string]BitRate{
		"10mbit": 10_000_000, "1.5Gbit": 1_500_000_000, "100kbit": 100_000, "10M": 10_000_000,
		"10m": 10_000_000, "1kbit": 1000, "100gbit": 100_000_000_000, "1000bit": 1000,
		"2kibit": 2048, "1mibit": 1 << 20, "0.1tbit": 100_000_000_000, "10Mbit/s": 10_000_000,
		" 5 mbit ": 5_000_000, "1.5k": 1500, "007mbit": 7_000_000, "1.mbit": 1_000_000, ".5mbit": 500_000,
	} {
		got, err := ParseBitRate(in)
		if err != nil || got != want {
			t.Errorf("ParseBitRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"10mbps": "bytes per second", "10MBps": "bytes per second", "10kb": "bytes per second",
		"10": "no unit", "10000000": "no unit", "0.9kbit": "out of range", "999bit": "out of range",
		"100.1gbit": "out of range", "1tbit": "out of range", "0mbit": "out of range",
		"-1mbit": "not a number", "mbit": "not a number", "": "not a number", "1e6bit": "unknown unit",
		"10 furlongs": "unknown unit", "nan": "not a number", "inf": "not a number", "0x10mbit": "unknown unit",
		"1..5mbit": "not a number", "99999999999999999999999999999999999mbit": "not a number",
	} {
		if _, err := ParseBitRate(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseBitRate(%q) = %v, want error containing %q", in, err, msg)
		}
	}
}

func TestBitRateString(t *testing.T) {
	for in, want := range map[BitRate]string{10_000_000: "10mbit", 1500: "1500bit", 1_500_000: "1500kbit", 2_000_000_000_000: "2tbit", 0: "0bit"} {
		if got := in.String(); got != want {
			t.Errorf("BitRate(%d).String() = %q, want %q", uint64(in), got, want)
		}
		if in >= MinBitRate && in <= MaxBitRate {
			if back, err := ParseBitRate(in.String()); err != nil || back != in {
				t.Errorf("round trip %d: %d %v", uint64(in), back, err)
			}
		}
	}
	for in, want := range map[BitRate]string{10 * Mbit: "10Mbit", 1_500_000: "1.5Mbit", 2500: "2.5Kbit", 999: "999bit", 40 * Gbit: "40Gbit", 1_000_500: "1000.5Kbit"} {
		if got := in.TC(); got != want {
			t.Errorf("BitRate(%d).TC() = %q, want %q", uint64(in), got, want)
		}
	}
}

// TestRateConversions: the only ways between bits and bytes per second.
func TestRateConversions(t *testing.T) {
	for bits, bytes := range map[BitRate]ByteRate{10 * Mbit: 1_250_000, 12: 2, 11: 1, 1: 1, 0: 0, 100 * Gbit: 12_500_000_000} {
		if got := bits.Bytes(); got != bytes {
			t.Errorf("%d bit/s = %d B/s, want %d", uint64(bits), got, bytes)
		}
	}
	if r := ByteRate(1_250_000); r.Bits() != 10*Mbit || r.String() != "10Mbit (1250000 B/s)" {
		t.Errorf("%d B/s: %v, %q", uint64(r), r.Bits(), r.String())
	}
	if got := (12 * Mbit).Mbps(); got != 12 {
		t.Errorf("Mbps %v", got)
	}
}

func TestParseDelay(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"5ms": 5 * time.Millisecond, "1.5ms": 1500 * time.Microsecond, "250us": 250 * time.Microsecond,
		"250µs": 250 * time.Microsecond, "1s": time.Second, "5msec": 5 * time.Millisecond,
		"100usec": 100 * time.Microsecond, "2sec": 2 * time.Second, "0": 0, "0ms": 0,
		"59.999s": 59999 * time.Millisecond, "100ns": 100,
	} {
		got, err := ParseDelay(in)
		if err != nil || got != want {
			t.Errorf("ParseDelay(%q) = %v, %v; want %v", in, got, err, want)
		}
		if err == nil {
			if back, err := ParseDelay(FormatDuration(got)); err != nil || back != got {
				t.Errorf("round trip %v: %v %v", got, back, err)
			}
		}
	}
	for in, msg := range map[string]string{
		"5": "no unit: write e.g. 5ms or 5us", "-5ms": "negative (valid: 0 .. 60s)", "60s": "too long", "1h": "too long", "1m": "too long",
		"+5ms": "not valid (e.g. 5ms, 250us, 1.5s)", "5 parsecs": "not valid", "": "not valid", "ms": "not valid",
		"9999999999999999999s": "not valid",
	} {
		if _, err := ParseDelay(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseDelay(%q) = %v, want error containing %q", in, err, msg)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"1m30s": 90 * time.Second, "20s": 20 * time.Second, "100ms": 100 * time.Millisecond, "0": 0, "2sec": 2 * time.Second, "1h": time.Hour} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{"10": "has no unit: write e.g. 10s or 10ms", "-1s": "negative", "soon": "is not valid (e.g. 20s, 100ms, 1m30s)"} {
		if _, err := ParseDuration(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseDuration(%q) = %v, want error containing %q", in, err, msg)
		}
	}
}

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]Percent{"1%": 1, "0.5%": 0.5, "1": 1, "0.01": 0.01, "100%": 100, "0": 0, " 2 % ": 2} {
		got, err := ParsePercent(in)
		if err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, err := ParsePercent(got.String()); err != nil || back != got {
			t.Errorf("round trip %v: %v %v", got, back, err)
		}
	}
	for in, msg := range map[string]string{"101%": "out of range", "-1%": "not a number", "1%%": "not a number", "abc": "not a number", "": "not a number", "1e2": "not a number", "NaN": "not a number"} {
		if _, err := ParsePercent(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParsePercent(%q) = %v, want error containing %q", in, err, msg)
		}
	}
	if p := Percent(2.5); p.Prob() != 0.025 {
		t.Errorf("Prob %v", p.Prob())
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]Bytes{"262144": 262144, "256KiB": 256 << 10, "4M": 4 << 20, "1MB": 1e6, "64k": 64 << 10, "1500b": 1500, "1.5KiB": 1536, "0": 0} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v", in, got, err)
		}
		if back, err := ParseBytes(got.String()); err != nil || back != got {
			t.Errorf("round trip %d (%s): %v %v", got, got, back, err)
		}
	}
	for in, msg := range map[string]string{"": "not valid", "x": "not valid", "4XB": "not valid", "-1": "not valid", "9GiB": "too large", "0.5b": "whole number"} {
		if _, err := ParseBytes(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseBytes(%q) = %v, want error containing %q", in, err, msg)
		}
	}
	if s := (4 * MiB).String(); s != "4MiB" {
		t.Errorf("4 MiB = %q", s)
	}
}

func TestGilbertElliott(t *testing.T) {
	g, err := ParseGilbertElliott("1%/25%")
	if err != nil || *g != (GilbertElliott{P: 1, R: 25, BadLoss: 100, GoodLoss: 0}) {
		t.Fatalf("%+v %v", g, err)
	}
	if s := g.String(); s != "1%/25%/100%/0%" {
		t.Errorf("String %q", s)
	}
	if back, err := ParseGilbertElliott(g.String()); err != nil || *back != *g {
		t.Errorf("round trip %+v %v", back, err)
	}
	for in, msg := range map[string]string{"1%": "is not p/r", "1%/0%": "never leaves the bad state", "1%/x": "r: percentage", "1/2/3/4/5": "is not p/r"} {
		if _, err := ParseGilbertElliott(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseGilbertElliott(%q) = %v, want %q", in, err, msg)
		}
	}
	if msg := (&GilbertElliott{P: 1, R: 101}).Check(); !strings.Contains(msg, "r 101 is out of range") {
		t.Errorf("Check %q", msg)
	}
	var nilg *GilbertElliott
	if nilg.String() != "" {
		t.Error("nil String")
	}
}

// TestFlags: the typed values work as flags, and a bad value is the
// parser's error.
func TestFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var (
		rate  BitRate
		loss  Percent
		buf   Bytes
		delay time.Duration
		dur   time.Duration
	)
	fs.Var(&rate, "rate", "")
	fs.Var(&loss, "loss", "")
	fs.Var(&buf, "buf", "")
	fs.Var((*DelayValue)(&delay), "delay", "")
	fs.Var((*DurationValue)(&dur), "t", "")
	if err := fs.Parse([]string{"-rate", "2.5mbit", "-loss", "1%", "-buf", "4MiB", "-delay", "5msec", "-t", "1m"}); err != nil {
		t.Fatal(err)
	}
	if rate != 2_500_000 || loss != 1 || buf != 4<<20 || delay != 5*time.Millisecond || dur != time.Minute {
		t.Errorf("%v %v %v %v %v", rate, loss, buf, delay, dur)
	}
	fs.SetOutput(new(strings.Builder))
	if err := fs.Parse([]string{"-rate", "10mbps"}); err == nil || !strings.Contains(err.Error(), "bytes per second") {
		t.Errorf("bad rate: %v", err)
	}
	if (*DelayValue)(&delay).Type() != "delay" || (&rate).Type() != "rate" {
		t.Error("Type")
	}
}

func TestParseGilbertElliottCases(t *testing.T) {
	for in, want := range map[string]GilbertElliott{
		"1%/25%":            {P: 1, R: 25, BadLoss: 100},
		"1/25/90":           {P: 1, R: 25, BadLoss: 90},
		"0.5%/10%/80%/0.1%": {P: 0.5, R: 10, BadLoss: 80, GoodLoss: 0.1},
		" 1% / 2% ":         {P: 1, R: 2, BadLoss: 100},
	} {
		g, err := ParseGilbertElliott(in)
		if err != nil || *g != want {
			t.Errorf("ParseGilbertElliott(%q) = %+v, %v; want %+v", in, g, err, want)
			continue
		}
		if back, err := ParseGilbertElliott(g.String()); err != nil || *back != *g {
			t.Errorf("round trip %q: %+v %v", g.String(), back, err)
		}
	}
	for in, msg := range map[string]string{
		"": "is not p/r", "1%": "is not p/r", "1/2/3/4/5": "is not p/r", "1%/x": `r: percentage "x"`,
		"1%/0": "r 0% never leaves", "-1/5": `p: percentage "-1"`, "1/2/3/101": `good_loss: percentage "101"`,
	} {
		if _, err := ParseGilbertElliott(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseGilbertElliott(%q) = %v, want error containing %q", in, err, msg)
		}
	}
}
