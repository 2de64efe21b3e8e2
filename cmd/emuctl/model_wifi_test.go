package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func runModelWifi(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newModelWifiCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// TestModelWifi: the command's numbers are the model's (802.11a 54 Mbit/s:
// 406.5 µs per exchange, 28.97 Mbit/s UDP; 802.11n MCS 7 A-MPDU: 28 MPDUs),
// and its JSON carries the fields the ns-3 comparison reads.
func TestModelWifi(t *testing.T) {
	out, err := runModelWifi(t, "--mode", "a", "--rate", "54mbit", "--json", "--duration", "2s")
	if err != nil {
		t.Fatal(err)
	}
	var o map[string]any
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, k := range []string{"goodput_mbps", "per_station_mbps", "collision_p", "phy_rate_mbps", "exchange_us", "mpdus_per_ppdu", "per", "analytic_mbps"} {
		if _, ok := o[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if v := o["exchange_us"].(float64); v != 406.5 {
		t.Errorf("exchange %.1f µs, want 406.5", v)
	}
	if v := o["goodput_mbps"].(float64); math.Abs(v-28.97) > 0.3 {
		t.Errorf("simulated goodput %.2f, want ≈ 28.97", v)
	}
	out, err = runModelWifi(t, "--mode", "n", "--rate", "mcs7", "--json", "--duration", "2s")
	if err != nil {
		t.Fatal(err)
	}
	o = nil
	json.Unmarshal([]byte(out), &o)
	if v := o["mpdus_per_ppdu"].(float64); v != 28 {
		t.Errorf("MCS 7 A-MPDU: %.1f MPDUs per PPDU, want 28", v)
	}
	text, err := runModelWifi(t, "--mode", "a", "--rate", "54mbit", "--distance", "30", "--duration", "1s")
	if err != nil || !strings.Contains(text, "SNR") || !strings.Contains(text, "data exchange") {
		t.Errorf("text output: %v\n%s", err, text)
	}
}

func TestModelWifiBadInput(t *testing.T) {
	cases := [][]string{
		{"--mode", "q"},
		{"--mode", "g", "--rate", "mcs7"},
		{"--mode", "n", "--rate", "mcs7", "--width", "80"},
		{"--mode", "a", "--rate", "54mbit", "--ampdu", "on"},
		{"--mode", "a", "--rate", "55mbit"},
		{"--mode", "ac", "--rate", "mcs9", "--width", "20"},
		{"--mode", "g", "--band", "5"},
		{"--mode", "a", "--proto", "sctp"},
		{"--mode", "a", "--stations", "0"},
		{"--mode", "a", "--duration", "-1s"},
		{"--mode", "n", "--qos", "off", "--ampdu", "on"},
		{"--mode", "a", "--engine", "ns3"},
		{"--mode", "a", "--hidden"},
		{"--mode", "a", "--positions", "1,2"},
		{"--mode", "a", "--engine", "medium", "--positions", "1"},
		{"--mode", "a", "--engine", "medium", "--positions", "1,x"},
		{"--mode", "a", "--engine", "medium", "--positions", "1,2;3,4", "--stations", "3"},
		{"--mode", "n", "--engine", "medium", "--window", "32"},
	}
	for _, c := range cases {
		if _, err := runModelWifi(t, c...); err == nil {
			t.Errorf("%v: accepted", c)
		}
	}
}

// TestModelWifiMediumEngine: --engine medium runs the stations through
// the medium: two stations that hear each other deliver what the
// simulation does; hidden from each other (--hidden) they collide far more
// and deliver less; --positions places them.
func TestModelWifiMediumEngine(t *testing.T) {
	run := func(args ...string) map[string]any {
		t.Helper()
		out, err := runModelWifi(t, append([]string{"--mode", "a", "--rate", "54mbit", "--qos", "off", "--retry-limit", "7",
			"--duration", "3s", "--json"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		var o map[string]any
		if err := json.Unmarshal([]byte(out), &o); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return o
	}
	sim := run("--stations", "2")
	open := run("--stations", "2", "--engine", "medium")
	hidden := run("--stations", "2", "--engine", "medium", "--hidden")
	g := func(o map[string]any) float64 { return o["goodput_mbps"].(float64) }
	c := func(o map[string]any) float64 { return o["collision_p"].(float64) }
	t.Logf("two stations at 54 Mbit/s: simulation %.2f Mbit/s (p %.3f), medium %.2f (%.3f), hidden %.2f (%.3f)",
		g(sim), c(sim), g(open), c(open), g(hidden), c(hidden))
	if open["engine"] != "medium" || sim["engine"] != "sim" || hidden["hidden"] != true {
		t.Errorf("engine fields: %v %v %v", sim["engine"], open["engine"], hidden["hidden"])
	}
	if math.Abs(g(open)/g(sim)-1) > 0.03 {
		t.Errorf("medium %.2f vs simulation %.2f Mbit/s", g(open), g(sim))
	}
	if g(hidden) > 0.85*g(open) || c(hidden) < 2.5*c(open) {
		t.Errorf("hidden: %.2f Mbit/s, p %.3f; open %.2f, %.3f: want fewer and more", g(hidden), c(hidden), g(open), c(open))
	}
	pos := run("--engine", "medium", "--rate", "6mbit", "--positions", "10,0; -10,0,0")
	if ps := pos["per_station_mbps"].([]any); len(ps) != 2 || pos["stations"].(float64) != 2 {
		t.Errorf("--positions with two stations: %v", pos)
	}
	text, err := runModelWifi(t, "--mode", "a", "--rate", "54mbit", "--stations", "2", "--engine", "medium", "--hidden", "--duration", "1s")
	if err != nil || !strings.Contains(text, "hidden from each other") || !strings.Contains(text, "unacknowledged PPDUs") {
		t.Errorf("text output: %v\n%s", err, text)
	}
}
