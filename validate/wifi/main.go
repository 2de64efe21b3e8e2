// Command wifi validates emuctl's 802.11 model (wifi/model, through
// `emuctl model wifi`) against ns-3 3.37: it builds the reference program
// validate/ns3/wifi-ref.cc into bin/validate/, runs every scenario there and
// in our model, and prints `scenario | metric | ns-3 | ours | ratio`. It
// exits 1 when a checked ratio falls outside [0.95, 1.05] and the row is not
// in the explained list (scenarios.go, mirrored in validate/ns3/README.md).
// Without g++ or libns3-dev it says what is missing and exits 0.
//
//	go run ./validate/wifi [--emuctl bin/emuctl] [--ns3-only] [--json] [--run REGEXP]
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"time"
)

func main() {
	emuctl := flag.String("emuctl", "bin/emuctl", "emuctl binary whose `model wifi` is checked (relative to the module root)")
	ns3Only := flag.Bool("ns3-only", false, "run and print ns-3 only")
	asJSON := flag.Bool("json", false, "print JSON instead of a table")
	only := flag.String("run", "", "run only scenarios whose name matches this regular expression")
	list := flag.Bool("list", false, "list the scenarios and exit")
	flag.Parse()
	code, err := run(*emuctl, *ns3Only, *asJSON, *only, *list)
	if err != nil {
		fmt.Fprintln(os.Stderr, "validate-wifi:", err)
	}
	os.Exit(code)
}

func run(emuctl string, ns3Only, asJSON bool, only string, list bool) (int, error) {
	root, err := moduleRoot()
	if err != nil {
		return 2, err
	}
	var re *regexp.Regexp
	if only != "" {
		if re, err = regexp.Compile(only); err != nil {
			return 2, fmt.Errorf("--run: %w", err)
		}
	}
	var todo []scenario
	for _, sc := range scenarios() {
		if re == nil || re.MatchString(sc.name) {
			todo = append(todo, sc)
		}
	}
	if list {
		for _, sc := range todo {
			fmt.Println(sc.name)
		}
		return 0, nil
	}
	if len(todo) == 0 {
		return 2, fmt.Errorf("--run %q matches no scenario (see --list)", only)
	}

	if err := probeNS3(); err != nil {
		fmt.Fprintln(os.Stderr, "validate-wifi: skipped:", err)
		return 0, nil
	}
	if !ns3Only {
		if !filepath.IsAbs(emuctl) {
			emuctl = filepath.Join(root, emuctl)
		}
		if _, err := os.Stat(emuctl); err != nil {
			return 2, fmt.Errorf("%s not found: run `make build` or pass --emuctl (or use --ns3-only)", emuctl)
		}
	}

	start := time.Now()
	bin, built, err := buildNS3(filepath.Join(root, "validate", "ns3", "wifi-ref.cc"), filepath.Join(root, "bin", "validate"))
	if err != nil {
		return 2, err
	}
	state := "up to date"
	if built {
		state = fmt.Sprintf("built in %.0fs", time.Since(start).Seconds())
	}
	// ns-3 and the model are both simulations (no wall-clock timing), so
	// scenarios run on every core; rows and lines keep the scenarios' order
	workers := max(1, runtime.NumCPU())
	fmt.Fprintf(os.Stderr, "validate-wifi: %s %s; %d scenarios, %d at a time\n", bin, state, len(todo), workers)

	type result struct {
		n         ns3Result
		o         *oursResult
		oursErr   error
		err       error
		ns3, ours time.Duration
		done      chan struct{}
	}
	res := make([]*result, len(todo))
	for i := range res {
		res[i] = &result{done: make(chan struct{})}
	}
	next := make(chan int)
	go func() {
		for i := range todo {
			next <- i
		}
		close(next)
	}()
	for w := 0; w < workers; w++ {
		go func() {
			for i := range next {
				r, sc := res[i], todo[i]
				t0 := time.Now()
				r.n, r.err = runNS3(bin, sc)
				r.ns3 = time.Since(t0)
				if r.err == nil && !ns3Only {
					t1 := time.Now()
					o, err := runOurs(emuctl, sc)
					r.ours = time.Since(t1)
					if err != nil {
						r.oursErr = err
					} else {
						r.o = &o
					}
				}
				close(r.done)
			}
		}()
	}

	var rows []row
	var raw []json.RawMessage
	var ns3Time, oursTime time.Duration
	for i, sc := range todo {
		r := res[i]
		<-r.done
		ns3Time += r.ns3
		oursTime += r.ours
		if r.err != nil {
			return 2, r.err // the workers still running end with the process
		}
		n := r.n
		raw = append(raw, n.Raw)
		rs := metricsOf(sc, &n, r.o)
		if r.oursErr != nil {
			for j := range rs {
				rs[j].Verdict, rs[j].Reason = vError, r.oursErr.Error()
			}
		}
		rows = append(rows, rs...)
		fmt.Fprintf(os.Stderr, "[%d/%d] %s: ns-3 %.2f Mbit/s (%.1fs)\n", i+1, len(todo), sc.name, n.GoodputMbps, (r.ns3 + r.ours).Seconds())
	}

	bad := 0
	for _, r := range rows {
		if r.Verdict == vFail || r.Verdict == vError {
			bad++
		}
	}
	if asJSON {
		if err := printJSON(rows, raw, ns3Only); err != nil {
			return 2, err
		}
	} else if err := printTable(os.Stdout, rows); err != nil {
		return 2, err
	}
	fmt.Fprintf(os.Stderr, "validate-wifi: %d scenarios in %.0fs (ns-3 %.0fs, ours %.1fs, summed over the workers); %d rows outside [%.2f, %.2f] unexplained\n",
		len(todo), time.Since(start).Seconds(), ns3Time.Seconds(), oursTime.Seconds(), bad, lo, hi)
	if bad > 0 {
		return 1, nil
	}
	return 0, nil
}

func printJSON(rows []row, raw []json.RawMessage, ns3Only bool) error {
	for i := range rows {
		if r := rows[i].Ratio; r != nil && math.IsInf(*r, 0) {
			rows[i].Ratio = nil // JSON has no infinity; ns3 0 with ours > 0 says it
		}
	}
	out := struct {
		Band       [2]float64        `json:"band"`
		NS3Only    bool              `json:"ns3_only"`
		Rows       []row             `json:"rows"`
		NS3        []json.RawMessage `json:"ns3_runs"`
		Explained  map[string]string `json:"explained"`
		NS3Version string            `json:"ns3_version"`
	}{[2]float64{lo, hi}, ns3Only, rows, raw, explained, "3.37"}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// moduleRoot is the nearest directory at or above the working directory
// holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory: run from the emuctl repository")
		}
		dir = parent
	}
}
