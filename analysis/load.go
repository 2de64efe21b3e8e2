package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// ErrNotResult marks a JSON file that is not a result document (no
// "version" or no "flows"), so directory scans can skip it.
var ErrNotResult = errors.New("not an emuctl result")

// Decode reads one result document. Unknown fields are errors (a misspelt
// field would otherwise silently read as zero), and so is any version
// other than Version.
func Decode(r io.Reader) (*Result, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var probe struct {
		Version *int             `json:"version"`
		Flows   *json.RawMessage `json:"flows"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, err
	}
	if probe.Version == nil || probe.Flows == nil {
		return nil, ErrNotResult
	}
	if *probe.Version != Version {
		return nil, fmt.Errorf("result version %d is not supported (this emuctl reads version %d)", *probe.Version, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var res Result
	if err := dec.Decode(&res); err != nil {
		return nil, err
	}
	if err := res.Validate(); err != nil {
		return nil, err
	}
	return &res, nil
}

// Load reads a result file.
func Load(path string) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

// Loaded is a result together with the file it came from.
type Loaded struct {
	Path   string
	Result *Result
}

// LoadDir reads every *.json result under dir (recursively), sorted by
// path. JSON files that are not results are skipped; a result that fails to
// decode is an error.
func LoadDir(dir string) ([]Loaded, error) {
	var out []Loaded
	// dir may be a symbolic link (a suite's results/SUITE/latest): its
	// target is walked, the paths stay under dir
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || filepath.Ext(path) != ".json" {
			return nil
		}
		if rel, err := filepath.Rel(root, path); err == nil {
			path = filepath.Join(dir, rel)
		}
		res, err := Load(path)
		if errors.Is(err, ErrNotResult) {
			return nil
		}
		if err != nil {
			return err
		}
		out = append(out, Loaded{Path: path, Result: res})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// Encode writes r as indented JSON, stamping the current Version.
func Encode(w io.Writer, r *Result) error {
	r.Version = Version
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Validate checks the invariants the metrics rely on: unique flow IDs,
// known protocols, samples in time order and inside the run.
func (r *Result) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, f := range r.Flows {
		where := fmt.Sprintf("flows[%d] (%s)", i, f.ID)
		if f.ID == "" {
			errs = append(errs, fmt.Errorf("flows[%d]: empty id", i))
		} else if seen[f.ID] {
			errs = append(errs, fmt.Errorf("%s: duplicate id", where))
		}
		seen[f.ID] = true
		switch f.Proto {
		case "tcp", "mptcp", "udp":
		default:
			errs = append(errs, fmt.Errorf("%s: proto %q (valid: tcp, mptcp, udp)", where, f.Proto))
		}
		if f.EndS < f.StartS {
			errs = append(errs, fmt.Errorf("%s: end_s %g before start_s %g", where, f.EndS, f.StartS))
		}
		for j := 1; j < len(f.Samples); j++ {
			if f.Samples[j].TS <= f.Samples[j-1].TS {
				errs = append(errs, fmt.Errorf("%s: samples[%d].t_s %g not after samples[%d].t_s %g", where, j, f.Samples[j].TS, j-1, f.Samples[j-1].TS))
				break
			}
		}
	}
	for i, e := range r.CongStateEvents {
		if !seen[e.Flow] {
			errs = append(errs, fmt.Errorf("cong_state_events[%d]: unknown flow %q", i, e.Flow))
			break
		}
	}
	return errors.Join(errs...)
}

// Flow returns the flow with the given ID, or nil.
func (r *Result) Flow(id string) *Flow {
	for i := range r.Flows {
		if r.Flows[i].ID == id {
			return &r.Flows[i]
		}
	}
	return nil
}
