package analysis

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got ---\n%s", path, got)
	}
}

// TestExampleResultFormat pins the JSON encoding of the result format and
// checks that it decodes back to the same value.
func TestExampleResultFormat(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, exampleResult()); err != nil {
		t.Fatal(err)
	}
	golden(t, "example_result.json", buf.Bytes())
	r, err := Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	Encode(&again, r)
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Fatal("decode/encode is not the identity")
	}
}

// TestSummaryGolden pins every metric of the example result.
func TestSummaryGolden(t *testing.T) {
	s := exampleResult().Summarise(Options{})
	golden(t, "example_summary.json", roundedJSON(t, s))
}

// roundedJSON encodes v with every number rounded to 10 significant
// digits, so golden files do not depend on the last bits of floating-point
// arithmetic (which differ where the compiler fuses multiply-adds).
func roundedJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(round(x), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

func round(x any) any {
	switch v := x.(type) {
	case float64:
		r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 10, 64), 64)
		return r
	case []any:
		for i := range v {
			v[i] = round(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = round(v[k])
		}
	}
	return x
}

// TestTablesGolden pins the Markdown, CSV and JSON renderings.
func TestTablesGolden(t *testing.T) {
	r := exampleResult()
	sums := []RunSummary{r.Summarise(Options{})}
	labels := []string{"example"}
	tables := map[string]*Table{
		"flows":      FlowTable("Per-flow metrics", labels, sums),
		"runs":       RunTable("Per-run aggregate", labels, sums),
		"probes":     ProbeTable("Probes", labels, sums),
		"tack":       TACKTable("TACK", []TACKPoint{TACKModel(48e6, 0.01, DefaultTACK), TACKModel(200e6, 0.08, DefaultTACK), TACKModel(7.056e6, 0.01, DefaultTACK)}),
		"links":      LinkTable("Links", r.Links),
		"conditions": ConditionsTable("Conditions", r.Conditions),
	}
	for name, tb := range tables {
		for _, f := range []string{"md", "csv", "json"} {
			var buf bytes.Buffer
			if err := tb.Write(&buf, f); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("tables", name+"."+f), buf.Bytes())
		}
	}
}

// TestSpotValues checks a few golden numbers by hand, so the golden files
// cannot silently drift to wrong values.
func TestSpotValues(t *testing.T) {
	r := exampleResult()
	s := r.Summarise(Options{})
	f1, f2, m1, u1 := s.Flows[0], s.Flows[1], s.Flows[2], s.Flows[3]
	// f1 steady window 2..10 s: 16 samples at 6 Mbit/s except two at 4.
	if !near(f1.SteadyGoodputBps, (14*6e6+2*4e6)/16, 1) {
		t.Errorf("f1 steady goodput %g", f1.SteadyGoodputBps)
	}
	if !near(f1.CapacityBps, 10e6*1448/1514, 1e-6) || !near(f1.Utilisation, f1.SteadyGoodputBps/f1.CapacityBps, 1e-12) {
		t.Errorf("f1 capacity %g utilisation %g", f1.CapacityBps, f1.Utilisation)
	}
	// Trace events give two exact episodes: 210 ms and 590 ms.
	if rec := f1.Recovery; rec == nil || rec.Source != "trace" || rec.Count != 2 || !near(rec.MeanMs, 400, 1e-6) {
		t.Errorf("f1 recovery %+v", f1.Recovery)
	}
	if !near(f2.SteadyGoodputBps, 3.5e6, 1) || f2.Steady != (Window{3, 10}) {
		t.Errorf("f2 %g %+v", f2.SteadyGoodputBps, f2.Steady)
	}
	if !near(m1.SteadyGoodputBps, 1.5e6, 1) || m1.Cwnd != nil {
		t.Errorf("m1 %+v", m1)
	}
	// u1: 12 sent, 10 unique received.
	if *u1.UDPLoss != 2.0/12 {
		t.Errorf("u1 loss %g", *u1.UDPLoss)
	}
	// Common window 4..10 s (m1 starts at 2 s + 2 s warm-up).
	if s.Common != (Window{4, 10}) || !near(s.AggregateBps, (10*6e6+2*4e6)/12+3.5e6+1.5e6+2560, 1) {
		t.Errorf("common %+v aggregate %g", s.Common, s.AggregateBps)
	}
	p := s.Probes[0]
	if p.Window != (Window{2, 9}) || !near(p.Loss, 1.0/8, 1e-12) || p.RTTMs.N != 7 {
		t.Errorf("probe %+v", p)
	}
}
