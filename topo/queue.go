package topo

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/units"
	"go.yaml.in/yaml/v3"
)

// Queue disciplines of a link direction's bottleneck queue (queue:
// {discipline: ...}); the names are tc's.
const (
	QueueDropTail = "droptail" // the default: drop arrivals when full
	QueueDropHead = "drophead" // drop the oldest packet when full
	QueueCoDel    = "codel"    // RFC 8289
	QueueFQCoDel  = "fq_codel" // RFC 8290
	QueuePIE      = "pie"      // RFC 8033
	QueueRED      = "red"      // RED, with ECN marking
	QueueCake     = "cake"     // kernel only
)

var queueDisciplines = []string{QueueDropTail, QueueDropHead, QueueCoDel, QueueFQCoDel, QueuePIE, QueueRED, QueueCake}

// queueParamKeys are the keys of a queue: mapping, in documentation order.
var queueParamKeys = []string{"discipline", "limit", "ecn", "target", "interval", "flows", "quantum",
	"tupdate", "alpha", "beta", "min", "max", "probability", "weight", "gentle"}

// disciplineKeys are the parameters each discipline has.
var disciplineKeys = map[string][]string{
	QueueDropTail: {"limit"},
	QueueDropHead: {"limit"},
	QueueCoDel:    {"limit", "ecn", "target", "interval"},
	QueueFQCoDel:  {"limit", "ecn", "target", "interval", "flows", "quantum"},
	QueuePIE:      {"limit", "ecn", "target", "tupdate", "alpha", "beta"},
	QueueRED:      {"limit", "ecn", "min", "max", "probability", "weight", "gentle"},
	QueueCake:     {"limit", "ecn", "target", "interval"},
}

// QueueSize is an amount of queue: packets (full frames) or bytes.
type QueueSize struct {
	Packets int         `json:"packets,omitempty"`
	Bytes   units.Bytes `json:"bytes,omitempty"`
}

// IsZero reports whether s is unset.
func (s QueueSize) IsZero() bool { return s.Packets == 0 && s.Bytes == 0 }

func (s QueueSize) String() string {
	if s.Bytes > 0 {
		return strconv.FormatInt(int64(s.Bytes), 10) + "b"
	}
	return strconv.Itoa(s.Packets)
}

// hasDiscipline reports whether q names a discipline other than drop-tail.
func (q *Queue) hasDiscipline() bool {
	return q != nil && q.Discipline != "" && q.Discipline != QueueDropTail
}

// DisciplineName is q's discipline, "droptail" when none is named.
func (q *Queue) DisciplineName() string {
	if q == nil || q.Discipline == "" {
		return QueueDropTail
	}
	return q.Discipline
}

// queueKV is one parameter of a queue as written: key, text value and
// where it is ("" value: a bare flag of the string form, "true").
type queueKV struct {
	key, val string
	l        loc
	keyLoc   loc
}

// buildQueue checks a discipline's parameters and returns the queue; each
// problem goes to errf at the parameter's location.
func buildQueue(disc string, discLoc loc, kvs []queueKV, errf func(loc, string)) *Queue {
	q := &Queue{Discipline: disc}
	if !slices.Contains(queueDisciplines, disc) {
		errf(discLoc, fmt.Sprintf("unknown queue discipline %q %s", clip(disc), choices("valid", disc, queueDisciplines)))
		return nil
	}
	valid := disciplineKeys[disc]
	ok := true
	seen := map[string]bool{}
	var ecnLoc loc
	for _, kv := range kvs {
		if seen[kv.key] {
			errf(kv.keyLoc, fmt.Sprintf("%s given twice", kv.key))
			ok = false
			continue
		}
		seen[kv.key] = true
		if !slices.Contains(valid, kv.key) {
			ok = false
			switch {
			case kv.key == "ecn" && (disc == QueueDropTail || disc == QueueDropHead):
				errf(kv.keyLoc, fmt.Sprintf("%s cannot mark ECN: it only drops (codel, fq_codel, pie, red and cake can mark)", disc))
			case slices.Contains(queueParamKeys, kv.key):
				errf(kv.keyLoc, fmt.Sprintf("%s has no parameter %s (%s takes: %s)", disc, kv.key, disc, strings.Join(valid, ", ")))
			default:
				errf(kv.keyLoc, fmt.Sprintf("unknown queue parameter %q (%s takes: %s%s)", clip(kv.key), disc, strings.Join(valid, ", "), didYouMean(kv.key, queueParamKeys)))
			}
			continue
		}
		if msg := q.setParam(disc, kv.key, kv.val); msg != "" {
			errf(kv.l, msg)
			ok = false
		}
		if kv.key == "ecn" {
			ecnLoc = kv.l
		}
	}
	if q.ECN != nil {
		if !*q.ECN && disc == QueueCake {
			errf(ecnLoc, "cake always marks ECN-capable packets (the kernel's cake has no switch to turn that off): remove ecn: false")
			ok = false
		}
	}
	if q.Target > 0 && q.Interval > 0 && q.Target >= q.Interval {
		errf(discLoc, fmt.Sprintf("target %s must be below interval %s (CoDel drops when the delay stays above target for an interval)",
			units.FormatDuration(q.Target), units.FormatDuration(q.Interval)))
		ok = false
	}
	if q.Min.Packets > 0 && q.Max.Packets > 0 && q.Min.Packets > q.Max.Packets || q.Min.Bytes > 0 && q.Max.Bytes > 0 && q.Min.Bytes > q.Max.Bytes {
		errf(discLoc, fmt.Sprintf("red min %s is above max %s", q.Min, q.Max))
		ok = false
	}
	if !ok {
		return nil
	}
	return q
}

// setParam parses one parameter's value; it returns a message or "".
func (q *Queue) setParam(disc, key, val string) string {
	val = strings.TrimSpace(val)
	switch key {
	case "limit":
		l, err := ParseQueue(val)
		if err != nil {
			return "limit: " + strings.TrimPrefix(err.Error(), "queue ")
		}
		if l.hasDiscipline() {
			return fmt.Sprintf("limit %q is not a size (e.g. 1000 packets, 150kB, 2bdp)", clip(val))
		}
		switch {
		case l.Bytes > 0 && (disc == QueueCoDel || disc == QueueFQCoDel || disc == QueuePIE || disc == QueueDropHead):
			return fmt.Sprintf("%s's limit counts packets (the kernel's %s does): give a number of packets or a bdp multiple, not %s", disc, kernelQdisc(disc), clip(val))
		case l.Bytes == 0 && disc == QueueCake:
			return fmt.Sprintf("cake's limit is its memory limit in bytes (e.g. 4MB), not %s", clip(val))
		}
		q.Packets, q.Bytes, q.BDP = l.Packets, l.Bytes, l.BDP
	case "ecn", "gentle":
		var b bool
		switch val {
		case "", "true":
			b = true
		case "false":
		default:
			return fmt.Sprintf("%s must be true or false, got %q", key, clip(val))
		}
		if key == "ecn" {
			q.ECN = &b
		} else {
			q.Gentle = b
		}
	case "target", "interval", "tupdate":
		d, err := units.ParseDuration(val)
		if err != nil {
			return fmt.Sprintf("%s: %v", key, err)
		}
		if d < time.Microsecond || d >= units.MaxDelay {
			return fmt.Sprintf("%s %s out of range [1us, %s)", key, clip(val), units.FormatDuration(units.MaxDelay))
		}
		switch key {
		case "target":
			q.Target = d
		case "interval":
			q.Interval = d
		default:
			q.TUpdate = d
		}
	case "flows":
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 || n > 65536 {
			return fmt.Sprintf("flows %q must be a whole number in 1 .. 65536", clip(val))
		}
		q.Flows = n
	case "quantum":
		b, err := parseByteCount(val)
		if err != nil || b < 64 || b > 1<<20 {
			return fmt.Sprintf("quantum %q must be a number of bytes in 64 .. 1048576 (default: one full frame, MTU + 14)", clip(val))
		}
		q.Quantum = int(b)
	case "alpha", "beta":
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 2 {
			return fmt.Sprintf("%s %q must be a number in 0 .. 2 (per second; the kernel keeps sixteenths)", key, clip(val))
		}
		f = math.Round(f*16) / 16
		if key == "alpha" {
			q.Alpha = f
		} else {
			q.Beta = f
		}
	case "min", "max":
		l, err := ParseQueue(val)
		if err != nil || l.BDP > 0 || l.hasDiscipline() {
			return fmt.Sprintf("red %s %q must be packets (20) or bytes (30kB)", key, clip(val))
		}
		s := QueueSize{Packets: l.Packets, Bytes: l.Bytes}
		if key == "min" {
			q.Min = s
		} else {
			q.Max = s
		}
	case "probability":
		p, err := units.ParsePercent(val)
		if err != nil || p <= 0 {
			return fmt.Sprintf("probability %q must be a percentage in (0%%, 100%%] (red's marking probability at max)", clip(val))
		}
		q.Probability = p
	case "weight":
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return fmt.Sprintf("weight %q must be a number in (0, 1] (red's EWMA weight; 1 = the instantaneous queue)", clip(val))
		}
		// the kernel keeps log2(1/W): the nearest power of two
		q.Weight = math.Exp2(-math.Min(math.Round(-math.Log2(f)), 31))
	}
	return ""
}

func kernelQdisc(disc string) string {
	if disc == QueueDropHead {
		return "pfifo_head_drop"
	}
	return disc
}

// parseByteCount reads a plain number of bytes or a size with a unit.
func parseByteCount(s string) (units.Bytes, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return units.Bytes(n), nil
	}
	return units.ParseBytes(s)
}

// parseDisciplineString parses the string form of a queue with a
// discipline, tc's words: "codel", "fq_codel limit 1000 target 5ms ecn",
// "red limit 400 min 20 max 60 probability 10% ecn gentle" ("noecn" for
// ecn false).
func parseDisciplineString(s string) (*Queue, error) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return nil, fmt.Errorf("queue is empty")
	}
	var kvs []queueKV
	for i := 1; i < len(words); i++ {
		w := strings.ToLower(words[i])
		switch w {
		case "ecn", "gentle":
			kvs = append(kvs, queueKV{key: w})
			continue
		case "noecn":
			kvs = append(kvs, queueKV{key: "ecn", val: "false"})
			continue
		}
		if k, v, ok := strings.Cut(w, "="); ok {
			kvs = append(kvs, queueKV{key: k, val: v})
			continue
		}
		if i+1 >= len(words) {
			kvs = append(kvs, queueKV{key: w, val: "\x00"})
			continue
		}
		kvs = append(kvs, queueKV{key: w, val: words[i+1]})
		i++
	}
	var msgs []string
	errf := func(_ loc, m string) { msgs = append(msgs, m) }
	for _, kv := range kvs {
		if kv.val == "\x00" {
			errf(loc{}, fmt.Sprintf("%s needs a value", kv.key))
		}
	}
	if len(msgs) > 0 {
		return nil, fmt.Errorf("queue %q: %s", clip(s), strings.Join(msgs, "; "))
	}
	q := buildQueue(strings.ToLower(words[0]), loc{}, kvs, errf)
	if len(msgs) > 0 {
		return nil, fmt.Errorf("queue %q: %s", clip(s), strings.Join(msgs, "; "))
	}
	return q, nil
}

// queueMapping decodes queue: {discipline: codel, limit: 1000, ...}.
func (d *dec) queueMapping(n *yaml.Node, path string, keyLoc loc) *Queue {
	var kvs []queueKV
	disc, discLoc := QueueDropTail, keyLoc
	ok := true
	for _, e := range d.entries(n, path) {
		kp := joinPath(path, keyPath(e.Key))
		s, good := d.scalar(e.V, kp, "a value such as 1000, 5ms, 2% or true")
		if !good {
			ok = false
			continue
		}
		if e.Key == "discipline" {
			disc, discLoc = strings.TrimSpace(s), at(e.V, kp)
			continue
		}
		kvs = append(kvs, queueKV{key: e.Key, val: s, l: at(e.V, kp), keyLoc: at(e.K, kp)})
	}
	q := buildQueue(disc, discLoc, kvs, func(l loc, m string) { d.errorf(l, "%s", m) })
	if !ok || q == nil {
		return nil
	}
	q.At = posString(d.file, keyLoc)
	return q
}

// String renders q as written in the string form: "100", "150000b",
// "2bdp", or "codel limit 1000 target 5ms ecn".
func (q *Queue) String() string {
	if q == nil {
		return ""
	}
	limit := ""
	switch {
	case q.Bytes > 0:
		limit = strconv.FormatInt(int64(q.Bytes), 10) + "b"
	case q.BDP > 0:
		limit = strconv.FormatFloat(q.BDP, 'g', -1, 64) + "bdp"
	case q.Packets > 0:
		limit = strconv.Itoa(q.Packets)
	}
	if !q.hasDiscipline() {
		return limit
	}
	parts := []string{q.Discipline}
	add := func(k, v string) { parts = append(parts, k, v) }
	if limit != "" {
		add("limit", limit)
	}
	dur := func(k string, v time.Duration) {
		if v > 0 {
			add(k, units.FormatDuration(v))
		}
	}
	dur("target", q.Target)
	dur("interval", q.Interval)
	dur("tupdate", q.TUpdate)
	if q.Flows > 0 {
		add("flows", strconv.Itoa(q.Flows))
	}
	if q.Quantum > 0 {
		add("quantum", strconv.Itoa(q.Quantum))
	}
	if q.Alpha > 0 {
		add("alpha", strconv.FormatFloat(q.Alpha, 'g', -1, 64))
	}
	if q.Beta > 0 {
		add("beta", strconv.FormatFloat(q.Beta, 'g', -1, 64))
	}
	if !q.Min.IsZero() {
		add("min", q.Min.String())
	}
	if !q.Max.IsZero() {
		add("max", q.Max.String())
	}
	if q.Probability > 0 {
		add("probability", q.Probability.String())
	}
	if q.Weight > 0 {
		add("weight", strconv.FormatFloat(q.Weight, 'g', -1, 64))
	}
	if q.Gentle {
		parts = append(parts, "gentle")
	}
	if q.ECN != nil {
		if *q.ECN {
			parts = append(parts, "ecn")
		} else {
			parts = append(parts, "noecn")
		}
	}
	return strings.Join(parts, " ")
}

// queueChecks are the checks of a direction's queue against the rest of
// its parameters and its backend.
func queueChecks(q *Queue, rate *units.BitRate, backend string, badRate bool) []string {
	if !q.hasDiscipline() {
		return nil
	}
	var msgs []string
	at := ""
	if q.At != "" {
		at = " (queue at " + q.At + ")"
	}
	if (rate == nil || *rate == 0) && !badRate {
		msgs = append(msgs, fmt.Sprintf("queue discipline %s needs a rate: only a rated direction has a queue%s", q.Discipline, at))
	}
	switch {
	case q.Discipline == QueueCake && backend == BackendUserspace:
		msgs = append(msgs, "cake is not implemented by the userspace link engine (backend: userspace): its COBALT AQM, per-host fairness, diffserv tins and overhead-compensating shaper are not modelled; use backend: kernel or auto on a kernel with sch_cake, or fq_codel"+at)
	case q.Discipline == QueueRED && q.Gentle && backend == BackendKernel:
		msgs = append(msgs, "red gentle needs the userspace link engine: the kernel's red has no gentle mode (use backend: userspace or auto, or drop gentle)"+at)
	case backend == BackendKernel && q.Bytes > 0 && q.Discipline == QueueDropHead:
		msgs = append(msgs, "drophead's limit counts packets on the kernel (pfifo_head_drop)"+at)
	}
	return msgs
}
