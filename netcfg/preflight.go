package netcfg

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/internal/suggest"
	"github.com/emuctl/emuctl/topo"
)

// PreflightOptions are the deploy options that change what is allowed.
type PreflightOptions struct {
	// ExtendAllowedCC is the opt-in (emuctl up --extend-allowed-cc) that
	// lets node defaults use algorithms outside the root namespace's
	// allowed list, by adding them to it with ExtendAllowedCC.
	ExtendAllowedCC bool
}

// Problems is every problem Preflight found, one per line, each starting
// with the "file:line:col: path" of the setting.
type Problems []string

func (p Problems) Error() string { return strings.Join(p, "\n") }

// Preflight checks the tcp: and mptcp: settings of spec against the
// running kernel before anything is created: congestion control names
// (node defaults and tcp.routes congctl) against the available list, node
// defaults against the allowed list unless opt.ExtendAllowedCC, MPTCP
// schedulers against the available ones, and MPTCP itself. It returns
// Problems or nil.
func Preflight(spec *topo.Spec, opt PreflightOptions) error {
	h, err := ReadHost()
	if err != nil {
		return err
	}
	return CheckSpec(spec, h, opt)
}

// CheckSpec is Preflight against a given host description (pure).
func CheckSpec(spec *topo.Spec, h Host, opt PreflightOptions) error {
	var ps Problems
	seen := map[string]bool{}
	add := func(at, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if at != "" {
			msg = at + ": " + msg
		}
		if !seen[msg] { // settings from defaults repeat for every node
			seen[msg] = true
			ps = append(ps, msg)
		}
	}
	checkAvail := func(at, name string) bool {
		if slices.Contains(h.AvailableCC, name) {
			return true
		}
		hint := suggest.DidYouMean(name, h.AvailableCC)
		if hint == "" {
			hint = fmt.Sprintf("; a kernel with modules may need tcp_%s loaded", name)
		}
		add(at, "congestion control %q is not available in this kernel (available: %s%s)", name, strings.Join(h.AvailableCC, " "), hint)
		return false
	}
	for _, n := range spec.Hosts() {
		if t := n.TCP; t != nil {
			if cc := t.CongestionControl; cc != "" && checkAvail(t.CongestionControlAt, cc) &&
				!slices.Contains(h.AllowedCC, cc) && !opt.ExtendAllowedCC {
				add(t.CongestionControlAt, "congestion control %q cannot be %s's default: %s", cc, n.Name, ccAllowedAdvice(cc, h.AllowedCC))
			}
			for _, r := range t.Routes {
				if r.Congctl != "" {
					checkAvail(r.At+".congctl", r.Congctl)
				}
			}
		}
		m := n.MPTCP
		if m == nil {
			continue
		}
		if !h.MPTCP {
			add("", "node %s has mptcp: settings, but %v", n.Name, ErrNoMPTCP)
			continue
		}
		if m.PathManager != "" && !h.PathManager {
			add("", "node %s: mptcp.path_manager needs net.mptcp.pm_type (Linux 5.19+), which this kernel lacks", n.Name)
		}
		if m.Scheduler != "" && !slices.Contains(h.Schedulers, m.Scheduler) {
			add(m.SchedulerAt, "MPTCP scheduler %q is not available in this kernel (available: %s%s)",
				m.Scheduler, strings.Join(h.Schedulers, " "), suggest.DidYouMean(m.Scheduler, h.Schedulers))
		}
	}
	if len(ps) == 0 {
		return nil
	}
	sort.SliceStable(ps, func(i, j int) bool {
		li, ci := position(ps[i])
		lj, cj := position(ps[j])
		if li != lj {
			return li < lj
		}
		return ci < cj
	})
	return ps
}

var posRE = regexp.MustCompile(`^[^:]*:(\d+):(\d+): `)

// position extracts line and column of a "file:line:col: ..." problem.
func position(p string) (line, col int) {
	if m := posRE.FindStringSubmatch(p); m != nil {
		line, _ = strconv.Atoi(m[1])
		col, _ = strconv.Atoi(m[2])
	}
	return line, col
}

// NeedsAllowedCC lists the node default congestion controls of spec that
// the root namespace's allowed list lacks, in node order: what
// ExtendAllowedCC must add. Run Preflight first: names the kernel lacks
// cannot be added.
func NeedsAllowedCC(spec *topo.Spec, allowed []string) []string {
	var out []string
	for _, n := range spec.Hosts() {
		if n.TCP == nil || n.TCP.CongestionControl == "" {
			continue
		}
		cc := n.TCP.CongestionControl
		if !slices.Contains(allowed, cc) && !slices.Contains(out, cc) {
			out = append(out, cc)
		}
	}
	return out
}
