package topo

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/units"
)

// A mahimahi: line is a mahimahi command line as Pantheon's calibrated
// emulators write it ("mm-delay 28 mm-loss uplink 0.0477 mm-link up.tr
// down.tr --uplink-queue=droptail --uplink-queue-args=packets=14"),
// mapped to the same model: the shells nest from the first (outermost)
// to mm-link, the application runs inside, and the link's a end is the
// inside (mahimahi's uplink is a->b). Each shell is one stage: mm-delay
// MS (integer ms) a delay both ways, mm-loss uplink|downlink P an IID loss
// one way, mm-link UP DOWN the two traces with their queues; the uplink
// crosses them from the innermost out and the downlink the other way,
// which is the stage order each direction gets.

// mmLine is a parsed mahimahi: line.
type mmLine struct {
	delay          time.Duration
	upLoss, dnLoss units.Percent
	up, down       mmTok // trace files as written
	once           bool
	upQ, dnQ       *Queue
	upOrder        []string
	dnOrder        []string
}

// mmTok is a word of the line and its byte offset.
type mmTok struct {
	s   string
	off int
}

// mmErr is a problem at a byte offset of the line.
type mmErr struct {
	off int
	msg string
}

const mmUsage = "valid: mm-delay MS, mm-loss uplink|downlink P, mm-link UPLINK-TRACE DOWNLINK-TRACE [--uplink-queue=droptail|drophead|infinite] [--uplink-queue-args=packets=N,bytes=B] (likewise --downlink-…) [--once]"

// mmWords splits s at blanks outside quotes; quotes are removed.
func mmWords(s string) []mmTok {
	var out []mmTok
	var b strings.Builder
	start, quote, in := 0, byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
			continue
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
			if !in {
				start, in = i, true
			}
			continue
		case quote == 0 && (c == ' ' || c == '\t' || c == '\n'):
			if in {
				out = append(out, mmTok{b.String(), start})
				b.Reset()
				in = false
			}
			continue
		}
		if !in {
			start, in = i, true
		}
		b.WriteByte(c)
	}
	if in {
		out = append(out, mmTok{b.String(), start})
	}
	return out
}

// parseMahimahi parses a mahimahi: line; it reports every problem.
func parseMahimahi(s string) (*mmLine, []mmErr) {
	w := mmWords(s)
	m := &mmLine{}
	var errs []mmErr
	bad := func(off int, format string, args ...any) {
		errs = append(errs, mmErr{off, fmt.Sprintf(format, args...)})
	}
	var shells []string // stages from the outermost in: delay, loss-up, loss-down, link
	seen := map[string]bool{}
	once := func(t mmTok, what string) bool {
		if seen[what] {
			bad(t.off, "a second %s: emuctl maps each shell to one stage of the link (%s)", what, mmUsage)
			return false
		}
		seen[what] = true
		return true
	}
	arg := func(i int, what string) (mmTok, bool) {
		if i >= len(w) {
			bad(len(s), "%s is missing", what)
			return mmTok{}, false
		}
		return w[i], true
	}
	i := 0
	for i < len(w) {
		t := w[i]
		switch t.s {
		case "mm-delay":
			v, ok := arg(i+1, "mm-delay's delay (integer ms)")
			i += 2
			if !ok || !once(t, "mm-delay") {
				continue
			}
			n, err := strconv.ParseUint(v.s, 10, 32)
			if err != nil {
				bad(v.off, "mm-delay takes an integer number of milliseconds, got %q", v.s)
				continue
			}
			m.delay = time.Duration(n) * time.Millisecond
			shells = append(shells, StageDelay)
		case "mm-loss":
			d, ok := arg(i+1, "mm-loss's direction (uplink or downlink)")
			if !ok {
				i++
				continue
			}
			p, ok := arg(i+2, "mm-loss's probability")
			i += 3
			if !ok {
				continue
			}
			if d.s != "uplink" && d.s != "downlink" {
				bad(d.off, "mm-loss direction %q (valid: uplink, downlink)", d.s)
				continue
			}
			if !once(t, "mm-loss "+d.s) {
				continue
			}
			v, err := strconv.ParseFloat(p.s, 64)
			if err != nil || v < 0 || v > 1 {
				bad(p.off, "mm-loss probability %q is not a number in [0, 1] (0.01 = 1 %%)", p.s)
				continue
			}
			if d.s == "uplink" {
				m.upLoss = units.Percent(v * 100)
				shells = append(shells, "loss-up")
			} else {
				m.dnLoss = units.Percent(v * 100)
				shells = append(shells, "loss-down")
			}
		case "mm-link":
			up, ok1 := arg(i+1, "mm-link's uplink trace")
			down, ok2 := arg(i+2, "mm-link's downlink trace")
			first := once(t, "mm-link")
			i += 3
			if ok1 && ok2 {
				if strings.HasPrefix(up.s, "--") || strings.HasPrefix(down.s, "--") {
					bad(up.off, "mm-link needs two trace files before its options (mm-link UPLINK-TRACE DOWNLINK-TRACE ...)")
				}
				m.up, m.down = up, down
			}
			if first {
				shells = append(shells, StageLink)
			}
			for i < len(w) && strings.HasPrefix(w[i].s, "--") {
				i = m.option(w, i, bad)
			}
		case "mm-onoff", "mm-intermittent", "mm-webrecord", "mm-webreplay", "mm-meter":
			bad(t.off, "%s is not emulated by emuctl (%s)", t.s, mmUsage)
			i = len(w)
		default:
			bad(t.off, "unexpected %q (%s)", t.s, mmUsage)
			i = len(w)
		}
	}
	if !seen["mm-link"] && len(errs) == 0 {
		bad(0, "no mm-link: a mahimahi line needs one (%s)", mmUsage)
	}
	m.upOrder, m.dnOrder = mmOrders(shells)
	return m, errs
}

// option decodes the mm-link option at w[i]; it returns the next index.
func (m *mmLine) option(w []mmTok, i int, bad func(int, string, ...any)) int {
	t := w[i]
	name, val, hasVal := strings.Cut(t.s, "=")
	next := i + 1
	needVal := func() (mmTok, bool) {
		if hasVal {
			return mmTok{val, t.off + len(name) + 1}, true
		}
		if next < len(w) && !strings.HasPrefix(w[next].s, "--") {
			next++
			return w[next-1], true
		}
		bad(t.off, "%s needs a value", name)
		return mmTok{}, false
	}
	switch name {
	case "--once":
		m.once = true
	case "--uplink-queue", "--downlink-queue":
		v, ok := needVal()
		if !ok {
			break
		}
		q := &m.upQ
		if name == "--downlink-queue" {
			q = &m.dnQ
		}
		if *q == nil {
			*q = &Queue{}
		}
		switch v.s {
		case "droptail":
			(*q).Discipline = QueueDropTail
		case "drophead":
			(*q).Discipline = QueueDropHead
		case "infinite":
			(*q).Discipline = "infinite"
		case "codel", "pie":
			bad(v.off, "mahimahi's %s queue on a trace is not implemented by emuctl (valid: droptail, drophead, infinite)", v.s)
		default:
			bad(v.off, "unknown queue %q (valid: droptail, drophead, infinite)", v.s)
		}
	case "--uplink-queue-args", "--downlink-queue-args":
		v, ok := needVal()
		if !ok {
			break
		}
		q := &m.upQ
		if name == "--downlink-queue-args" {
			q = &m.dnQ
		}
		if *q == nil {
			*q = &Queue{}
		}
		off := v.off
		for _, kv := range strings.Split(v.s, ",") {
			k, num, _ := strings.Cut(strings.TrimSpace(kv), "=")
			n, err := strconv.ParseUint(num, 10, 31)
			switch {
			case err != nil || n == 0:
				bad(off, "queue argument %q is not packets=N or bytes=B with N, B > 0", strings.TrimSpace(kv))
			case k == "packets":
				(*q).Packets = int(n)
			case k == "bytes":
				(*q).Bytes = units.Bytes(n)
			default:
				bad(off, "queue argument %q (valid: packets=N, bytes=B)", k)
			}
			off += len(kv) + 1
		}
	case "--uplink-log", "--downlink-log", "--meter-uplink", "--meter-downlink", "--meter-uplink-delay", "--meter-downlink-delay", "--meter-all":
		bad(t.off, "%s is mahimahi's own logging or meter: emuctl counts per link (emuctl link show, traffic results); remove it", name)
		if !hasVal && (name == "--uplink-log" || name == "--downlink-log") && next < len(w) && !strings.HasPrefix(w[next].s, "--") {
			next++
		}
	default:
		bad(t.off, "unknown mm-link option %s (%s)", name, mmUsage)
	}
	return next
}

// mmOrders turns the shells, outermost first, into each direction's stage
// order: the uplink leaves from the inside (innermost shell first), the
// downlink enters from the outside. A stage the line lacks goes where it
// changes nothing (it is empty).
func mmOrders(shells []string) (up, down []string) {
	add := func(o []string, s string) []string {
		for _, x := range o {
			if x == s {
				return o
			}
		}
		return append(o, s)
	}
	for k := len(shells) - 1; k >= 0; k-- {
		switch shells[k] {
		case "loss-up":
			up = add(up, StageLoss)
		case "loss-down":
		default:
			up = add(up, shells[k])
		}
	}
	for _, s := range shells {
		switch s {
		case "loss-down":
			down = add(down, StageLoss)
		case "loss-up":
		default:
			down = add(down, s)
		}
	}
	for _, s := range []string{StageLink, StageLoss, StageDelay} {
		up, down = add(up, s), add(down, s)
	}
	return up, down
}

// queue returns the topology queue of one direction of m (nil: infinite).
func (m *mmLine) queue(up bool) (*Queue, string) {
	q := m.dnQ
	if up {
		q = m.upQ
	}
	if q == nil || q.Discipline == "infinite" {
		if q != nil && (q.Packets > 0 || q.Bytes > 0) {
			return nil, "an infinite queue takes no packets= or bytes="
		}
		return nil, ""
	}
	if q.Packets == 0 && q.Bytes == 0 {
		return nil, fmt.Sprintf("a %s queue needs a limit: --%slink-queue-args=packets=N or bytes=B", q.DisciplineName(), map[bool]string{true: "up", false: "down"}[up])
	}
	out := *q
	if out.Discipline == QueueDropTail {
		out.Discipline = ""
	}
	return &out, ""
}
