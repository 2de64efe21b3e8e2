package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/suggest"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/units"
)

// Options tune Up. The zero value is what `emuctl up` does by default.
type Options struct {
	// Name overrides the topology's lab name (emuctl up --name).
	Name string
	// Log receives debug lines, one per host change (default: discard).
	Log *slog.Logger
	// AllowExternal permits taking real host interfaces into the lab
	// (--allow-external).
	AllowExternal bool
	// ExtendAllowedCC lets nodes default to congestion controls outside
	// the host's allowed list, a host-wide change undone by Down
	// (--extend-allowed-cc).
	ExtendAllowedCC bool
	// Workers bounds parallel netlink work (default: 2 × CPUs).
	Workers int
}

// Lab is a running lab: what Up built or Open found. Its methods act on
// the lab through its recorded state, so a Lab from Open in another
// process works the same, and several may refer to one lab.
type Lab struct {
	name string
	spec *topo.Spec
	log  *slog.Logger
}

// Up resolves src and builds the lab on this machine (root needed):
// namespaces, links, shaping, switches, addresses, routes, processes. It
// returns once every link is up (and STP has converged, and every Wi-Fi
// station has associated). On any failure, or when ctx is cancelled,
// everything made so far is removed and nothing of the lab remains.
func Up(ctx context.Context, src Source, opt Options) (*Lab, error) {
	if src == nil {
		return nil, errors.New("lab.Up: no topology given")
	}
	spec, err := src.Spec()
	if err != nil {
		return nil, err
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	st, err := Deploy(ctx, spec, opt)
	if err != nil {
		return nil, err
	}
	return &Lab{name: st.Lab, spec: st.Spec, log: opt.Log}, nil
}

// Open returns the running lab called name, as `emuctl up` or another
// program left it.
func Open(name string) (*Lab, error) {
	st, err := emu.ReadState(name)
	if errors.Is(err, emu.ErrNoLab) {
		return nil, notRunning(name)
	}
	if err != nil {
		return nil, err
	}
	if st.Status != emu.StatusUp {
		return nil, fmt.Errorf("lab %s is %s, not up", name, st.Status)
	}
	return &Lab{name: st.Lab, spec: st.Spec, log: slog.New(slog.DiscardHandler)}, nil
}

// notRunning names the labs that do run, and the one meant.
func notRunning(name string) error {
	labs, _ := emu.Labs()
	if len(labs) == 0 {
		return fmt.Errorf("no lab %q is running (none is): %w", name, emu.ErrNoLab)
	}
	var names []string
	for _, l := range labs {
		names = append(names, l.Lab)
	}
	return fmt.Errorf("no lab %q is running (running: %s%s): %w", name, strings.Join(names, ", "), suggest.DidYouMean(name, names), emu.ErrNoLab)
}

// Name is the lab's name; its nodes' namespaces are "<name>.<node>".
func (l *Lab) Name() string { return l.name }

// Spec is the resolved topology the lab was built from: nodes with their
// interfaces, addresses and routes, links with their parameters as built.
// It is shared: do not modify it.
func (l *Lab) Spec() *topo.Spec { return l.spec }

// Nodes are the lab's node names, in declaration order.
func (l *Lab) Nodes() []string {
	out := make([]string, len(l.spec.Nodes))
	for i, n := range l.spec.Nodes {
		out[i] = n.Name
	}
	return out
}

// Addr is a node's first IPv4 address (else its first IPv6 one): the
// address Ping and traffic use for it by default.
func (l *Lab) Addr(node string) (netip.Addr, error) {
	n, err := l.node(node)
	if err != nil {
		return netip.Addr{}, err
	}
	a, ok := PrimaryAddr(n)
	if !ok {
		return netip.Addr{}, fmt.Errorf("lab %s: node %s has no address", l.name, node)
	}
	return a, nil
}

// node finds a node, or says which exist.
func (l *Lab) node(name string) (*topo.Node, error) {
	if n := l.spec.Node(name); n != nil {
		return n, nil
	}
	// added since this Lab last looked (by another program)?
	if st, err := emu.ReadState(l.name); err == nil && st.Spec.Node(name) != nil {
		l.spec = st.Spec
		return st.Spec.Node(name), nil
	}
	names := l.Nodes()
	return nil, fmt.Errorf("lab %s has no node %q (nodes: %s%s)", l.name, name, strings.Join(names, ", "), suggest.DidYouMean(name, names))
}

// Warnings are the lab's notes about links that do less than asked (for
// example a kernel shaper on a switched path); empty when there are none.
func (l *Lab) Warnings() ([]string, error) {
	st, err := emu.ReadState(l.name)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ls := range st.Links {
		if ls.Warning != "" {
			out = append(out, fmt.Sprintf("link %d (%s): %s", ls.Index, ls.Name, ls.Warning))
		}
	}
	return out, nil
}

// VerifyOptions tune Verify; the zero value is `emuctl verify`'s
// default.
type VerifyOptions struct {
	All          bool          // also check unshaped links (delay floor only)
	RateDuration time.Duration // back-to-back burst length (default 1 s)
	LossProbes   int           // loss probes per direction (default 3000)
	Tolerance    float64       // relative tolerance for rate and delay (default 0.05)
}

// DirResult is the verification of one direction of one link: configured
// and measured delay, rate and loss, and the Problems found.
type DirResult struct {
	Link      int           `json:"link"`
	Name      string        `json:"name"`
	Dir       string        `json:"dir"` // "a->b" or "b->a"
	Backend   string        `json:"backend"`
	WantDelay time.Duration `json:"want_delay"`
	MinDelay  time.Duration `json:"min_delay"`  // smallest one-way delay seen
	MeanDelay time.Duration `json:"mean_delay"` // mean one-way delay
	Jitter    time.Duration `json:"jitter"`     // stddev of the one-way delay
	WantRate  units.BitRate `json:"want_rate_bps"`
	Rate      units.BitRate `json:"rate_bps"` // arrival rate of back-to-back full frames (wire bytes)
	WantLoss  units.Percent `json:"want_loss_pct"`
	Loss      units.Percent `json:"loss_pct"`
	LossSent  int           `json:"loss_probes"`
	// ClockOffset is, for a direction across two machines, the receiving
	// machine's clock minus the sending one's that the one-way delays
	// were corrected by; ClockOffsetUp the one measured at up; ClockNote
	// why the offset from up was applied instead; ClockRTT the round
	// trip of the clock exchange (the offset is known to ± half of it).
	ClockOffset   time.Duration `json:"clock_offset_ns,omitempty"`
	ClockOffsetUp time.Duration `json:"clock_offset_up_ns,omitempty"`
	ClockNote     string        `json:"clock_note,omitempty"`
	ClockRTT      time.Duration `json:"clock_rtt_ns,omitempty"`
	Problems      []string      `json:"problems,omitempty"`
}

// OK reports whether the direction met its configuration.
func (r DirResult) OK() bool { return len(r.Problems) == 0 }

// Verify measures every shaped link in both directions (one-way delay,
// rate, loss) with probe frames that cross only that link, as `emuctl
// verify` does. A direction whose numbers are off has Problems; the error
// is for failures to measure.
func (l *Lab) Verify(ctx context.Context, opt VerifyOptions) ([]DirResult, error) {
	return Verify(ctx, l.name, opt)
}

// Verify is Lab.Verify on the lab called name.
func Verify(ctx context.Context, name string, opt VerifyOptions) ([]DirResult, error) {
	res, err := emu.Verify(ctx, name, emu.VerifyOptions(opt))
	return convert(res, func(r emu.DirResult) DirResult { return DirResult(r) }), err
}

// NodeBuilt is one node as read back from the kernel (and OVSDB): its
// interfaces, kernel settings and bridge, with Problems naming each
// difference from the lab's topology.
type NodeBuilt struct {
	Node  string `json:"node"`
	Kind  string `json:"kind"`
	Netns string `json:"netns,omitempty"`
	// Ifaces are its interfaces as the kernel has them.
	Ifaces []IfaceBuilt `json:"interfaces"`
	// Sysctls are the kernel settings its kind and topology ask for, as
	// the kernel has them.
	Sysctls map[string]string `json:"sysctls,omitempty"`
	// Bridge is a switch's bridge device, or an OVS bridge's name.
	Bridge string `json:"bridge,omitempty"`
	// Problems are the differences from the topology, each a sentence.
	Problems []string `json:"problems,omitempty"`
}

// OK says whether the node is built as its topology says.
func (b NodeBuilt) OK() bool { return len(b.Problems) == 0 }

// IfaceBuilt is one interface of a NodeBuilt.
type IfaceBuilt struct {
	Name string `json:"name"`
	// Device is the kernel's name when it is not Name (an OVS port).
	Device string `json:"device,omitempty"`
	MAC    string `json:"mac,omitempty"`
	MTU    int    `json:"mtu"`
	// Up is the administrative state (shown, not judged: link down and
	// schedules change it).
	Up bool `json:"up"`
	// Master is the device the interface is a port of (a bridge).
	Master string   `json:"master,omitempty"`
	Addrs  []string `json:"addrs,omitempty"`
}

// VerifyBuilt reads every node back and compares it with the lab's
// topology as it stands now — up's and every run-time change's — without
// traffic, as `emuctl verify --built` does: namespaces, interfaces, MACs,
// MTUs, addresses, each switch's bridge and ports, OVS bridges and ports,
// the kernel settings a node's kind and topology ask for. A node that
// differs has Problems; the error is for a lab that cannot be read.
func (l *Lab) VerifyBuilt() ([]NodeBuilt, error) {
	res, err := emu.VerifyBuilt(l.name)
	if err != nil {
		return nil, err
	}
	out := make([]NodeBuilt, len(res))
	for i, b := range res {
		out[i] = NodeBuilt{Node: b.Node, Kind: b.Kind, Netns: b.Netns, Sysctls: b.Sysctls, Bridge: b.Bridge, Problems: b.Problems}
		for _, ifc := range b.Ifaces {
			out[i].Ifaces = append(out[i].Ifaces, IfaceBuilt(ifc))
		}
	}
	return out, nil
}

// Down tears the lab down: its processes, namespaces, links, real adapters
// returned, state removed. It is idempotent: a lab already down is no
// error.
func (l *Lab) Down() error { return Down(l.name, l.log) }

// StateRoot is the directory under which labs keep their state
// (/run/emuctl, or $EMUCTL_RUN_DIR).
func StateRoot() string { return emu.RunDir() }
