package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oneJSON checks that out is exactly one JSON document and returns it.
func oneJSON(t *testing.T, what, out string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var v, extra any
	if err := dec.Decode(&v); err != nil {
		t.Errorf("%s: stdout is not JSON: %v\n%s", what, err, out)
		return nil
	}
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Errorf("%s: stdout holds more than one JSON document (%v)\n%s", what, err, out)
	}
	return v
}

// jsonRun runs emuctl with --json (as given in args) and checks the exit
// code and that stdout is one JSON document.
func jsonRun(t *testing.T, code int, args ...string) any {
	t.Helper()
	r := run(t, "", args...)
	if r.code != code {
		t.Errorf("emuctl %v: exit %d, want %d\nstderr: %s", args, r.code, code, r.stderr)
	}
	return oneJSON(t, strings.Join(args, " "), r.stdout)
}

// TestJSONNoRoot: --json on the commands that need no lab prints one JSON
// document on stdout; where --format exists, --json is --format json.
func TestJSONNoRoot(t *testing.T) {
	jsonRun(t, 0, "version", "--json")
	jsonRun(t, 0, "doctor", "--json")
	jsonRun(t, 0, "test", "--list", "--json")
	jsonRun(t, 0, "model", "wifi", "--mode", "g", "--duration", "0.2s", "--json")
	a := must(t, run(t, "", "model", "tack", "--bw", "48mbit,200mbit", "--rtt", "10ms", "--json")).stdout
	b := must(t, run(t, "", "model", "tack", "--bw", "48mbit,200mbit", "--rtt", "10ms", "--format", "json")).stdout
	if a != b {
		t.Errorf("model tack: --json and --format json differ:\n%s\n%s", a, b)
	}
	if _, ok := oneJSON(t, "model tack --json", a).([]any); !ok {
		t.Errorf("model tack --json with two points is not one array:\n%s", a)
	}
}

// TestJSON: --json on every lab command that prints a table or a result:
// one JSON document on stdout, the rest on stderr, the exit status as
// without --json. traffic's --json prints the result, its FILE form and
// -o write it; capture acks --json of several files is one array.
func TestJSON(t *testing.T) {
	needRoot(t)
	must(t, run(t, "", "up", "--topo", "single,2", "--name", "tjson"), "up")
	t.Cleanup(func() { run(t, "", "down", "tjson") })
	dir := t.TempDir()

	if rows, ok := jsonRun(t, 0, "ls", "--json").([]any); !ok || len(rows) != 1 {
		t.Errorf("ls --json: %v", rows)
	}
	jsonRun(t, 0, "ls", "-l", "tjson", "--json")
	jsonRun(t, 0, "inspect", "--json")
	if a, b := must(t, run(t, "", "inspect")).stdout, must(t, run(t, "", "inspect", "--json")).stdout; a != b {
		t.Errorf("inspect and inspect --json differ")
	}
	jsonRun(t, 0, "link", "show", "--json")
	jsonRun(t, 0, "verify", "--json")
	if v, ok := jsonRun(t, 1, "clean", "--check", "--json").(map[string]any); !ok || len(v["objects"].([]any)) == 0 {
		t.Errorf("clean --check --json with a lab up: %v", v)
	}

	// traffic: --json prints the result, the summary goes to stderr
	r := must(t, run(t, "", "traffic", "--from", "h1", "--to", "h2", "-t", "1s", "--json"))
	if res, ok := oneJSON(t, "traffic --json", r.stdout).(map[string]any); !ok || res["flows"] == nil || !strings.Contains(r.stderr, "h1") {
		t.Errorf("traffic --json: stdout %.200s\nstderr %s", r.stdout, r.stderr)
	}
	for _, c := range []struct{ file, flag string }{{"o.json", "-o"}, {"j.json", "--json"}, {"e.json", "--json="}} {
		file := filepath.Join(dir, c.file)
		args := []string{"traffic", "--from", "h1", "--to", "h2", "-t", "1s", c.flag, file}
		if strings.HasSuffix(c.flag, "=") {
			args = append(args[:len(args)-2], c.flag+file)
		}
		r := must(t, run(t, "", args...), args...)
		b, err := os.ReadFile(file)
		if err != nil || !strings.Contains(r.stdout, "result: "+file) {
			t.Errorf("%v: %v, stdout %s", args, err, r.stdout)
			continue
		}
		oneJSON(t, file, string(b))
	}

	// capture acks: several files, one array
	pcap := filepath.Join(dir, "h2.pcapng")
	must(t, run(t, "", "capture", "h2:h2-eth0", "-c", "1", "-d", "1s", "-w", pcap), "capture")
	if v, ok := jsonRun(t, 0, "capture", "acks", "--json", pcap, pcap).([]any); !ok || len(v) != 2 {
		t.Errorf("capture acks --json of two files: %v", v)
	}
	if _, ok := jsonRun(t, 0, "capture", "acks", "--json", pcap).(map[string]any); !ok {
		t.Errorf("capture acks --json of one file is not its report")
	}
	must(t, run(t, "", "down", "tjson"))

	v, ok := jsonRun(t, 0, "bench", "--json", "--topo", "single,2", "--ovs-topo", "single,2", "--reps", "1", "--mininet=false", "--traffic=false").(map[string]any)
	if rows, _ := v["rows"].([]any); !ok || len(rows) == 0 {
		t.Errorf("bench --json: %v", v)
	}
}
