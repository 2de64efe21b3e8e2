package topo

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// linkParamKeys are the symmetric link-shaping keys, in documentation order.
var linkParamKeys = []string{"rate", "delay", "jitter", "loss", "queue"}

// lp is a partial set of link parameters: nil fields are not set, so a
// link can override a default with an explicit zero ("delay: 0").
type lp struct {
	rate   *uint64
	delay  *time.Duration
	jitter *time.Duration
	loss   *float64
	queue  *Queue
	// badRate and badDelay record a rate or delay that did not parse, so
	// checks depending on them stay quiet instead of echoing the error.
	badRate, badDelay bool
}

func (p lp) empty() bool {
	return p.rate == nil && p.delay == nil && p.jitter == nil && p.loss == nil && p.queue == nil
}

// over returns p with every field that o sets replaced by o's.
func (p lp) over(o lp) lp {
	if o.rate != nil {
		p.rate = o.rate
	}
	if o.delay != nil {
		p.delay = o.delay
	}
	if o.jitter != nil {
		p.jitter = o.jitter
	}
	if o.loss != nil {
		p.loss = o.loss
	}
	if o.queue != nil {
		p.queue = o.queue
	}
	p.badRate = p.badRate || o.badRate
	p.badDelay = p.badDelay || o.badDelay
	return p
}

// params flattens p into LinkParams; zero values mean "not set".
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
	if p.loss != nil {
		out.Loss = *p.loss
	}
	if p.queue != nil {
		q := *p.queue
		out.Queue = &q
	}
	return out
}

// set parses one key. It returns a message (what is wrong and what is
// valid) or "".
func (p *lp) set(key, value string) string {
	switch key {
	case "rate":
		v, err := ParseRate(value)
		if err != nil {
			p.badRate = true
			return err.Error()
		}
		p.rate = &v
	case "delay", "jitter":
		v, err := ParseDuration(value)
		if err != nil {
			p.badDelay = p.badDelay || key == "delay"
			return err.Error()
		}
		if key == "delay" {
			p.delay = &v
		} else {
			p.jitter = &v
		}
	case "loss":
		v, err := ParsePercent(value)
		if err != nil {
			return err.Error()
		}
		p.loss = &v
	case "queue":
		v, err := ParseQueue(value)
		if err != nil {
			return err.Error()
		}
		p.queue = v
	default:
		if key == "bw" {
			return fmt.Sprintf("unknown key %q: use rate=%smbit (Mininet's bw is in Mbit/s)", key, value)
		}
		return fmt.Sprintf("unknown key %q %s", key, choices("valid", key, linkParamKeys))
	}
	return ""
}

// check validates one direction's effective parameters.
func (p lp) check() []string {
	flat := p.params()
	return checkParams(&flat, p.badRate, p.badDelay)
}

// checkParams validates one direction's effective parameters; it returns
// messages, empty when fine. A rate or delay that failed to parse silences
// the checks that depend on it.
func checkParams(p *LinkParams, badRate, badDelay bool) []string {
	var msgs []string
	if p.Jitter > 0 && p.Delay == 0 && !badDelay {
		msgs = append(msgs, fmt.Sprintf("jitter %v needs a delay (netem varies the delay): set delay too", formatDuration(p.Jitter)))
	}
	if p.Queue != nil && p.Queue.BDP > 0 && (p.Rate == 0 || p.Delay == 0) && !badRate && !badDelay {
		msgs = append(msgs, fmt.Sprintf("queue %gbdp needs both rate and delay to compute the bandwidth-delay product", p.Queue.BDP))
	}
	return msgs
}

// ParseLinkParams parses a Mininet-like --link string such as
// "rate=10mbit,delay=5ms,jitter=1ms,loss=1%,queue=100" with the same unit
// rules as the YAML link: block. It returns nil for an empty string.
func ParseLinkParams(s string) (*LinkParams, error) {
	p, msgs := parseLinkString(s)
	if len(msgs) > 0 {
		return nil, fmt.Errorf("link %q: %s", s, strings.Join(msgs, "; "))
	}
	if p.empty() {
		return nil, nil
	}
	out := p.params()
	if msgs := checkParams(&out, false, false); len(msgs) > 0 {
		return nil, fmt.Errorf("link %q: %s", s, strings.Join(msgs, "; "))
	}
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
			msgs = append(msgs, fmt.Sprintf("%q is not key=value (e.g. rate=10mbit,delay=5ms)", f))
			continue
		}
		if seen[k] {
			msgs = append(msgs, fmt.Sprintf("%s given twice", k))
			continue
		}
		seen[k] = true
		if m := p.set(k, v); m != "" {
			msgs = append(msgs, m)
		}
	}
	return p, msgs
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
// per-direction parts as " a->b: ..." and " b->a: ...".
func (p *LinkParams) String() string {
	if p == nil {
		return ""
	}
	var parts []string
	if p.Rate > 0 {
		parts = append(parts, "rate="+FormatRate(p.Rate))
	}
	if p.Delay > 0 {
		parts = append(parts, "delay="+formatDuration(p.Delay))
	}
	if p.Jitter > 0 {
		parts = append(parts, "jitter="+formatDuration(p.Jitter))
	}
	if p.Loss > 0 {
		parts = append(parts, "loss="+strconv.FormatFloat(p.Loss, 'g', -1, 64)+"%")
	}
	if q := p.Queue; q != nil {
		parts = append(parts, "queue="+q.String())
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

// String renders a queue as it would be written: "100", "150000b", "2bdp".
func (q *Queue) String() string {
	switch {
	case q == nil:
		return ""
	case q.Bytes > 0:
		return strconv.FormatInt(q.Bytes, 10) + "b"
	case q.BDP > 0:
		return strconv.FormatFloat(q.BDP, 'g', -1, 64) + "bdp"
	}
	return strconv.Itoa(q.Packets)
}

// formatDuration is time.Duration.String with "us" for "µs", so the result
// parses back and stays ASCII.
func formatDuration(d time.Duration) string {
	return strings.ReplaceAll(d.String(), "µs", "us")
}
