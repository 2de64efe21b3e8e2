package topo

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/emuctl/emuctl/units"
)

// linkParamKeys are the symmetric link-shaping keys, in documentation order.
var linkParamKeys = []string{
	"rate", "delay", "jitter", "jitter_dist", "reorder", "loss", "ge",
	"duplicate", "corrupt", "queue", "backend",
}

// dirParamKeys are the keys of a per-direction (a->b, b->a) block: all but
// backend, which is per link.
var dirParamKeys = []string{
	"rate", "delay", "jitter", "jitter_dist", "reorder", "loss", "ge",
	"duplicate", "corrupt", "queue",
}

// Jitter distributions (the names are iproute2's netem tables).
const (
	JitterUniform = "uniform" // the default: delay ± jitter, evenly spread
	JitterNormal  = "normal"  // normal, σ = jitter
	JitterPareto  = "pareto"  // heavy-tailed
)

var jitterDists = []string{JitterUniform, JitterNormal, JitterPareto}

// Link backends: what implements a link's parameters.
const (
	// BackendAuto (the default): netem where the kernel has it, else the
	// userspace link engine.
	BackendAuto = "auto"
	// BackendKernel: tc qdiscs only (netem; HTB/TBF when netem is missing
	// and only rate and queue are set).
	BackendKernel = "kernel"
	// BackendUserspace: the userspace link engine.
	BackendUserspace = "userspace"
)

var linkBackends = []string{BackendAuto, BackendKernel, BackendUserspace}

// lp is a partial set of link parameters: nil fields are not set, so a
// link can override a default with an explicit zero ("delay: 0").
type lp struct {
	rate      *units.BitRate
	delay     *time.Duration
	jitter    *time.Duration
	dist      *string
	reorder   *bool
	loss      *units.Percent
	ge        *units.GilbertElliott
	duplicate *units.Percent
	corrupt   *units.Percent
	queue     *Queue
	backend   *string
	// trace replaces the rate (decode_trace.go); order is mahimahi's
	// stage order when the direction came from a mahimahi: line.
	trace *Trace
	order []string
	// softDist and softReorder mark a jitter_dist or reorder that is not
	// an error without jitter: set in defaults.link (a lab-wide policy for
	// links that have jitter) or on a link's symmetric keys while one of
	// its directions sets the jitter. Where there is no jitter they are
	// dropped.
	softDist, softReorder bool
	// badRate, badDelay and badJitter record a value that did not parse,
	// so checks depending on it stay quiet instead of echoing the error.
	badRate, badDelay, badJitter bool
}

// empty reports whether p sets nothing that shapes a link or needs a
// check. backend, soft jitter qualifiers and "reorder: false" (the
// default) do not: they say how to shape, not what.
func (p lp) empty() bool {
	return p.rate == nil && p.delay == nil && p.jitter == nil && p.loss == nil && p.ge == nil &&
		p.duplicate == nil && p.corrupt == nil && p.queue == nil && p.trace == nil &&
		(p.dist == nil || p.softDist) && (p.reorder == nil || p.softReorder || !*p.reorder)
}

// over returns p with every field that o sets replaced by o's. loss and ge
// are two forms of one setting: the one o sets replaces either of p's. An
// explicit "jitter: 0" in o turns jitter off, and with it the jitter_dist
// and reorder o inherits from p.
func (p lp) over(o lp) lp {
	if o.rate != nil {
		p.rate = o.rate
	}
	if o.delay != nil {
		p.delay = o.delay
	}
	if o.jitter != nil {
		p.jitter = o.jitter
		if *o.jitter == 0 {
			p.dist, p.reorder = nil, nil
			p.softDist, p.softReorder = false, false
		}
	}
	if o.dist != nil {
		p.dist, p.softDist = o.dist, o.softDist
	}
	if o.reorder != nil {
		p.reorder, p.softReorder = o.reorder, o.softReorder
	}
	if o.loss != nil {
		p.loss, p.ge = o.loss, nil
	}
	if o.ge != nil {
		p.ge, p.loss = o.ge, nil
	}
	if o.duplicate != nil {
		p.duplicate = o.duplicate
	}
	if o.corrupt != nil {
		p.corrupt = o.corrupt
	}
	if o.queue != nil {
		p.queue = o.queue
	}
	if o.backend != nil {
		p.backend = o.backend
	}
	if o.trace != nil {
		// a trace is the rate, with mahimahi's queue: what the direction
		// inherits of either does not apply
		p.trace, p.order = o.trace, o.order
		if o.rate == nil {
			p.rate = nil
		}
		if o.queue == nil {
			p.queue = nil
		}
	}
	p.badRate = p.badRate || o.badRate
	p.badDelay = p.badDelay || o.badDelay
	p.badJitter = p.badJitter || o.badJitter
	return p
}

// params flattens p into LinkParams; zero values mean "not set". The
// jitter qualifiers (jitter_dist, reorder) appear only with jitter.
func (p lp) params() LinkParams {
	var out LinkParams
	if p.rate != nil {
		out.Rate = *p.rate
	}
	if p.delay != nil {
		out.Delay = *p.delay
	}
	if p.jitter != nil {
		out.Jitter = *p.jitter
	}
	if out.Jitter > 0 && p.dist != nil {
		out.JitterDist = *p.dist
	}
	if out.Jitter > 0 && p.reorder != nil {
		out.Reorder = *p.reorder
	}
	if p.loss != nil {
		out.Loss = *p.loss
	}
	if p.ge != nil {
		g := *p.ge
		out.GE = &g
	}
	if p.duplicate != nil {
		out.Duplicate = *p.duplicate
	}
	if p.corrupt != nil {
		out.Corrupt = *p.corrupt
	}
	if p.queue != nil {
		q := *p.queue
		out.Queue = &q
	}
	if p.backend != nil {
		out.Backend = *p.backend
	}
	if p.trace != nil {
		out.Trace, out.Order = p.trace, p.order
		if out.Queue != nil && out.Queue.Discipline == "" && out.Queue.Packets == 0 && out.Queue.Bytes == 0 {
			out.Queue = nil // mahimahi's infinite queue
		}
	}
	return out
}

// set parses one key given as text (the --link syntax, or a YAML scalar).
// It returns a message (what is wrong and what is valid) or "".
func (p *lp) set(key, value string) string {
	switch key {
	case "rate":
		v, err := units.ParseBitRate(value)
		if err != nil {
			p.badRate = true
			return err.Error()
		}
		p.rate = &v
	case "delay", "jitter":
		v, err := units.ParseDelay(value)
		if err != nil {
			p.badDelay = p.badDelay || key == "delay"
			p.badJitter = p.badJitter || key == "jitter"
			return err.Error()
		}
		if key == "delay" {
			p.delay = &v
		} else {
			p.jitter = &v
		}
	case "jitter_dist":
		v := strings.TrimSpace(value)
		if !slices.Contains(jitterDists, v) {
			return fmt.Sprintf("unknown jitter distribution %q %s", clip(v), choices("valid", v, jitterDists))
		}
		p.dist = &v
	case "reorder":
		var v bool
		switch strings.TrimSpace(value) {
		case "true":
			v = true
		case "false":
		default:
			return fmt.Sprintf("reorder %q is not true or false (true: jitter may reorder packets; false, the default: they keep their order)", clip(value))
		}
		p.reorder = &v
	case "loss", "duplicate", "corrupt":
		v, err := units.ParsePercent(value)
		if err != nil {
			return err.Error()
		}
		switch key {
		case "loss":
			p.loss = &v
		case "duplicate":
			p.duplicate = &v
		default:
			p.corrupt = &v
		}
	case "ge":
		g, err := units.ParseGilbertElliott(value)
		if err != nil {
			return err.Error()
		}
		p.ge = g
	case "queue":
		v, err := ParseQueue(value)
		if err != nil {
			return err.Error()
		}
		p.queue = v
	case "backend":
		v := strings.TrimSpace(value)
		if !slices.Contains(linkBackends, v) {
			return fmt.Sprintf("unknown backend %q %s", clip(v), choices("valid", v, linkBackends))
		}
		p.backend = &v
	default:
		return unknownLinkKey(key, value, linkParamKeys)
	}
	return ""
}

// netemNames maps netem and Mininet spellings to this schema's keys, for
// unknown-key messages.
var netemNames = map[string]string{
	"distribution": "the jitter distribution is jitter_dist (uniform, normal, pareto)",
	"dist":         "the jitter distribution is jitter_dist (uniform, normal, pareto)",
	"gemodel":      "Gilbert-Elliott burst loss is ge: {p, r, bad_loss, good_loss} (netem's loss gemodel p r 1-h 1-k), or ge=p/r/bad_loss/good_loss in --link syntax",
	"loss_ge":      "Gilbert-Elliott burst loss is ge: {p, r, bad_loss, good_loss} (netem's loss gemodel p r 1-h 1-k), or ge=p/r/bad_loss/good_loss in --link syntax",
	"limit":        "the queue limit is queue (packets such as 100, bytes such as 150kB, or a multiple of the BDP such as 2bdp), or queue: {discipline: codel, limit: 1000}",
	"aqm":          "the queue's discipline is queue: {discipline: codel|fq_codel|pie|red|cake|drophead|droptail, ...}",
	"discipline":   "the queue's discipline goes inside queue: queue: {discipline: codel, limit: 1000}",
	"latency":      "the one-way delay is delay (e.g. delay: 5ms)",
	"dup":          "duplication is duplicate (e.g. duplicate: 1%)",
	"qdisc":        "the qdisc layout is chosen by emuctl; to pick netem/tc or the userspace link engine use backend (auto, kernel, userspace)",
}

// unknownLinkKey is the message for a key that is not a link parameter:
// the complete list of valid keys, a close match, or the spelling this
// schema uses for a tc/netem/Mininet name.
func unknownLinkKey(key, value string, valid []string) string {
	if key == "bw" && value != "" {
		return fmt.Sprintf("unknown key %q: use rate=%smbit (Mininet's bw is in Mbit/s)", key, clip(value))
	}
	if hint, ok := netemNames[strings.ToLower(key)]; ok {
		return fmt.Sprintf("unknown key %q: %s", clip(key), hint)
	}
	return fmt.Sprintf("unknown key %q (valid: %s%s)", clip(key), strings.Join(valid, ", "), didYouMean(key, valid))
}

// conflicts reports keys of one mapping or --link string that exclude
// each other.
func (p lp) conflicts() []string {
	if p.loss != nil && p.ge != nil {
		return []string{"loss and ge are alternatives (loss: independent Bernoulli loss; ge: Gilbert-Elliott burst loss): set one of them"}
	}
	return nil
}

// check validates one direction's effective parameters.
func (p lp) check() []string {
	flat := p.params()
	msgs := checkParams(&flat, p.badRate, p.badDelay)
	backend := ""
	if p.backend != nil {
		backend = *p.backend
	}
	if p.trace != nil {
		msgs = append(msgs, traceChecks(p)...)
	} else {
		msgs = append(msgs, queueChecks(p.queue, p.rate, backend, p.badRate)...)
	}
	noJitter := (p.jitter == nil || *p.jitter == 0) && !p.badJitter
	if noJitter && p.dist != nil && !p.softDist {
		msgs = append(msgs, fmt.Sprintf("jitter_dist %s without jitter does nothing (it shapes the random delay variation): set jitter (and delay) too, or remove jitter_dist", *p.dist))
	}
	if noJitter && p.reorder != nil && *p.reorder && !p.softReorder {
		msgs = append(msgs, "reorder: true without jitter does nothing (only jitter can reorder packets): set jitter (and delay) too, or remove reorder")
	}
	return msgs
}

// checkParams validates one direction's effective parameters; it returns
// messages, empty when fine. A rate or delay that failed to parse silences
// the checks that depend on it.
func checkParams(p *LinkParams, badRate, badDelay bool) []string {
	var msgs []string
	if p.Jitter > 0 && p.Delay == 0 && !badDelay {
		msgs = append(msgs, fmt.Sprintf("jitter %v needs a delay (netem varies the delay): set delay too", units.FormatDuration(p.Jitter)))
	}
	if p.Queue != nil && p.Queue.BDP > 0 && (p.Rate == 0 || p.Delay == 0) && !badRate && !badDelay {
		msgs = append(msgs, fmt.Sprintf("queue %gbdp needs both rate and delay to compute the bandwidth-delay product", p.Queue.BDP))
	}
	return msgs
}

// ParseLinkParams parses a Mininet-like --link string such as
// "rate=10mbit,delay=5ms,jitter=1ms,jitter_dist=normal,loss=1%,queue=100"
// with the same keys and unit rules as the YAML link: block (ge is written
// "ge=p/r[/bad_loss[/good_loss]]"). It returns nil for an empty string, and
// for a string that only sets backend (nothing to shape).
func ParseLinkParams(s string) (*LinkParams, error) {
	p, msgs := parseLinkString(s)
	if len(msgs) > 0 {
		return nil, fmt.Errorf("link %q: %s", s, strings.Join(msgs, "; "))
	}
	if msgs := p.check(); len(msgs) > 0 {
		return nil, fmt.Errorf("link %q: %s", s, strings.Join(msgs, "; "))
	}
	if p.empty() {
		return nil, nil
	}
	out := p.params()
	return &out, nil
}

func parseLinkString(s string) (lp, []string) {
	var p lp
	var msgs []string
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		k, v, ok := strings.Cut(f, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !ok || v == "" {
			msgs = append(msgs, fmt.Sprintf("%q is not key=value (e.g. rate=10mbit,delay=5ms)", clip(f)))
			continue
		}
		if seen[k] {
			msgs = append(msgs, fmt.Sprintf("%s given twice", clip(k)))
			continue
		}
		seen[k] = true
		if m := p.set(k, v); m != "" {
			msgs = append(msgs, m)
		}
	}
	return p, append(msgs, p.conflicts()...)
}

// Dir returns the effective parameters of one direction: AtoB (aToB) or
// BtoA when set (they are complete, already merged with the symmetric
// values), else p itself without the per-direction fields.
func (p *LinkParams) Dir(aToB bool) LinkParams {
	if p == nil {
		return LinkParams{}
	}
	if aToB && p.AtoB != nil {
		return *p.AtoB
	}
	if !aToB && p.BtoA != nil {
		return *p.BtoA
	}
	q := *p
	q.AtoB, q.BtoA = nil, nil
	return q
}

// String renders p in --link syntax ("rate=10mbit,delay=5ms"), with
// per-direction parts as " a->b: ..." and " b->a: ...". Keys come in
// documentation order; reorder is shown only when true.
func (p *LinkParams) String() string {
	if p == nil {
		return ""
	}
	var parts []string
	if p.Rate > 0 {
		parts = append(parts, "rate="+p.Rate.String())
	}
	if p.Delay > 0 {
		parts = append(parts, "delay="+units.FormatDuration(p.Delay))
	}
	if p.Jitter > 0 {
		parts = append(parts, "jitter="+units.FormatDuration(p.Jitter))
	}
	if p.JitterDist != "" {
		parts = append(parts, "jitter_dist="+p.JitterDist)
	}
	if p.Reorder {
		parts = append(parts, "reorder=true")
	}
	if p.Loss > 0 {
		parts = append(parts, "loss="+p.Loss.String())
	}
	if p.GE != nil {
		parts = append(parts, "ge="+p.GE.String())
	}
	if p.Duplicate > 0 {
		parts = append(parts, "duplicate="+p.Duplicate.String())
	}
	if p.Corrupt > 0 {
		parts = append(parts, "corrupt="+p.Corrupt.String())
	}
	if q := p.Queue; q != nil {
		parts = append(parts, "queue="+q.String())
	}
	if p.Backend != "" {
		parts = append(parts, "backend="+p.Backend)
	}
	s := strings.Join(parts, ",")
	if p.AtoB != nil {
		s = strings.TrimSpace(s + " a->b: " + p.AtoB.String())
	}
	if p.BtoA != nil {
		s = strings.TrimSpace(s + " b->a: " + p.BtoA.String())
	}
	return s
}
