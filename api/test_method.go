package api

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/emuctl/emuctl/suite"
)

// The test method runs an experiment suite as `emuctl test` does; each
// progress line is a notification (method "progress"); the answer is the
// outcome: every check's verdict, the report's directory.

type testParams struct {
	Suite   string   `json:"suite"`
	Profile string   `json:"profile,omitempty"` // quick, default or paper
	Quick   bool     `json:"quick,omitempty"`
	Reps    int      `json:"reps,omitempty"`
	Only    []string `json:"only,omitempty"`
	Out     string   `json:"out,omitempty"`
	Seed    uint64   `json:"seed,omitempty"`
}

// progressWriter turns the runner's progress text into notifications.
type progressWriter struct{ s *session }

func (w progressWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line = strings.TrimSpace(strings.TrimLeft(line, "\r")); line != "" {
			w.s.notify("progress", map[string]string{"line": line})
		}
	}
	return len(p), nil
}

func testMethod(ctx context.Context, s *session, p testParams) (any, error) {
	profile := p.Profile
	switch {
	case p.Quick && profile != "" && profile != "quick":
		return nil, newError(CodeInvalidParams, "test: quick and profile %q disagree", profile)
	case p.Quick:
		profile = "quick"
	case profile == "":
		profile = "default"
	}
	su, err := suite.Open(p.Suite)
	if err != nil {
		return nil, err
	}
	only, err := suite.ParseOnly(p.Only)
	if err != nil {
		return nil, err
	}
	plan, err := su.Plan(profile, suite.PlanOptions{Reps: p.Reps, Only: only})
	if err != nil {
		return nil, err
	}
	out := p.Out
	if out == "" {
		out = "results"
	}
	dir := filepath.Join(out, su.Name, time.Now().Format("20060102-150405"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	o, err := suite.Run(ctx, plan, suite.Options{Dir: dir, Seed: p.Seed, Progress: progressWriter{s}})
	if o == nil {
		return nil, err
	}
	latest := filepath.Join(out, su.Name, "latest")
	os.Remove(latest)
	os.Symlink(filepath.Base(dir), latest)
	return map[string]any{"dir": dir, "exit_code": o.ExitCode(), "outcome": o}, err
}
