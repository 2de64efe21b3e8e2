package suite

import (
	"time"

	"github.com/emuctl/emuctl/suite/expr"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/traffic"
	"go.yaml.in/yaml/v3"
)

// Suite is a loaded and validated suite file: a topology template, a
// parameter matrix, profiles, flows, checks and plots. It is pure data;
// Plan turns it into scenarios and Run runs them.
type Suite struct {
	// File is the name used in messages ("builtin:asym-mptcp" for the
	// embedded suites).
	File  string `json:"file"`
	Name  string `json:"suite"`
	Title string `json:"title"`
	// Study says what the study is and what this suite reproduces.
	Study string `json:"study,omitempty"`
	// Notes are the differences from the study, printed with the
	// conditions of every report.
	Notes []string `json:"notes,omitempty"`
	// Source cites the study.
	Source  string    `json:"source,omitempty"`
	Params  []*Param  `json:"params"`
	Exclude []Binding `json:"exclude,omitempty"`
	// Profiles are quick, default and paper (each with defaults).
	Profiles map[string]*Profile `json:"profiles"`
	// Collect names extra collectors: "cong_state" (tracefs recovery
	// episodes).
	Collect []string `json:"collect,omitempty"`
	Checks  []*Check `json:"checks"`
	Plots   []*Plot  `json:"plots,omitempty"`
	// Reference maps an engine ("ns3") to the program that runs the
	// scenarios in a simulator for the report's third column (reference.go).
	Reference map[string]*RefSpec `json:"reference,omitempty"`

	topology *yaml.Node
	flows    *yaml.Node
	// flowNames, nodeNames: every flow and node some scenario has.
	flowNames  map[string]bool
	nodeNames  map[string]bool
	namesKnown bool
}

// Param is one dimension of the matrix.
type Param struct {
	Name   string   `json:"name"`
	Values []*Value `json:"values"`
	line   int
	col    int
}

// Value is one value of a parameter: a label (what scenario names and
// selectors use) and a YAML value substituted for ${param}.
type Value struct {
	Label string `json:"label"`
	// Text is the scalar value as written ("" for mappings and lists).
	Text string `json:"value,omitempty"`
	// Medium says what carries the scenarios of this value (a mapping
	// value's medium: key), for the report: "wired stand-in: ...", "real
	// 802.11be multi-link ...".
	Medium string `json:"medium,omitempty"`
	// Needs names what the machine must have for this value's scenarios
	// (needs: key; capabilities, capability.go: wifi-mlo). Where it lacks
	// one, they are left out, said why.
	Needs []string `json:"needs,omitempty"`
	// Replaces is a label of the same parameter (replaces: key): where
	// this value's needs are met its scenarios run instead of that
	// value's (a stand-in for what this one really is), elsewhere that
	// value's run and this one's are left out.
	Replaces string `json:"replaces,omitempty"`
	node     *yaml.Node
	hasNeeds bool // needs: written (its names may have been wrong)
}

// Binding maps parameters to sets of labels (any of them matches).
type Binding map[string][]string

// Profile is one of quick, default and paper.
type Profile struct {
	Name     string        `json:"name"`
	Duration time.Duration `json:"duration"`
	Warmup   time.Duration `json:"warmup"`
	Interval time.Duration `json:"interval"`
	Reps     int           `json:"reps"`
	// RetryInvalid reruns a repetition whose fidelity checks failed, at
	// most this many times.
	RetryInvalid int `json:"retry_invalid"`
	// Params restricts parameters to some of their labels.
	Params Binding `json:"params,omitempty"`
}

// Scenario is one point of the matrix with its topology and flows.
type Scenario struct {
	// Name is "param=label,..." in parameter order.
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
	Spec   *topo.Spec        `json:"-"`
	Flows  []traffic.Flow    `json:"-"`
	values map[string]*Value
	// topoText is the instantiated topology, loaded afresh for each run.
	topoText []byte
	// refArgs are each reference engine's program flags for the scenario.
	refArgs map[string][]string
}

// Check classes (experiments.md §7).
const (
	Physics   = "physics"
	Fidelity  = "fidelity"
	Behaviour = "behaviour"
	Reference = "reference"
)

// Check is one acceptance check.
type Check struct {
	ID    string `json:"id"`
	Class string `json:"class"`
	Title string `json:"title"`
	// Per is "run" (every run on its own) or "scenario" (medians over
	// repetitions, the default).
	Per string `json:"per"`
	// Where restricts the check to matching scenarios.
	Where Binding `json:"where,omitempty"`
	// For evaluates the check once per label combination of these params.
	For []string `json:"for,omitempty"`
	// Expect must hold; Show is the number printed (default: the left
	// side of Expect's comparison).
	Expect   *expr.Expr `json:"expect,omitempty"`
	Show     *expr.Expr `json:"show,omitempty"`
	Monotone *Monotone  `json:"monotone,omitempty"`
	// Paper is the study's value as the study states it; Note explains.
	Paper string `json:"paper,omitempty"`
	Note  string `json:"note,omitempty"`
	// Unit labels shown values.
	Unit string `json:"unit,omitempty"`
	line int
	col  int
}

// Monotone checks that a value grows (or shrinks) along a parameter.
type Monotone struct {
	Value      *expr.Expr `json:"value"`
	Over       string     `json:"over"`
	Increasing bool       `json:"increasing"`
	Slack      float64    `json:"slack"`      // relative noise allowance, e.g. 0.1
	Inversions int        `json:"inversions"` // steps allowed to go the wrong way within the slack
}

// Plot is one figure of the report.
type Plot struct {
	// Kind is bars (one bar per scenario, mean ± CI of Metric), goodput or
	// cwnd (time series of the first repetition of each scenario),
	// rtt_cdf (probe RTT CDF per scenario) or tack (the TACK model sweep
	// with the measured ACK rates).
	Kind   string     `json:"kind"`
	Metric *expr.Expr `json:"metric,omitempty"`
	Title  string     `json:"title,omitempty"`
	Unit   string     `json:"unit,omitempty"`
	Where  Binding    `json:"where,omitempty"`
}
