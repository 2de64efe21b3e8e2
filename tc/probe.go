//go:build linux

package tc

import (
	"errors"
	"fmt"

	"github.com/emuctl/emuctl/units"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Caps is what the running kernel can do for link shaping.
type Caps struct {
	Netem, HTB, TBF, IFB bool
	// AQM says, per queue discipline (droptail, drophead, codel,
	// fq_codel, pie, red, cake), whether the kernel has its qdisc.
	AQM map[string]bool
	// Reasons says, for each missing feature ("netem", "htb", "tbf",
	// "ifb", or a discipline), what the kernel answered.
	Reasons map[string]string
}

// Err is nil when feature is present, else an error wrapping
// ErrNotSupported with the reason. feature is "netem", "htb", "tbf",
// "ifb" or a queue discipline.
func (c Caps) Err(feature string) error {
	ok := map[string]bool{"netem": c.Netem, "htb": c.HTB, "tbf": c.TBF, "ifb": c.IFB}
	for _, d := range Disciplines {
		ok[d] = c.AQM[d]
	}
	present, known := ok[feature]
	if !known {
		return fmt.Errorf("unknown feature %q", feature)
	}
	if present {
		return nil
	}
	return &NotSupportedError{Feature: feature, Reason: c.Reasons[feature]}
}

// Probe finds out which qdiscs and devices the kernel offers by trying
// them on the loopback of a throw-away network namespace (never the
// caller's): modular kernels load the module on the way. It needs
// CAP_NET_ADMIN and CAP_SYS_ADMIN; without them every feature is reported
// missing with the reason.
func Probe() Caps {
	c := Caps{AQM: map[string]bool{}, Reasons: map[string]string{}}
	err := inThrowawayNS(func() error {
		conn, err := dialTC(netns.None())
		if err != nil {
			return err
		}
		defer conn.close()
		h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
		if err != nil {
			return err
		}
		defer h.Close()
		lo, err := h.LinkByName("lo")
		if err != nil {
			return err
		}
		idx := lo.Attrs().Index
		try := func(feature string, q Qdisc) bool {
			body, err := qdiscMsg(idx, q)
			if err == nil {
				_, err = conn.do(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK, body, 0)
			}
			if err != nil {
				c.Reasons[feature] = reason(feature, err)
				return false
			}
			_ = conn.deleteRoot(idx)
			return true
		}
		root := func(kind string) Qdisc { return Qdisc{Kind: kind, Handle: hMajor1, Parent: handleRoot} }
		q := root("netem")
		q.Netem = &NetemOpts{Limit: 1000}
		c.Netem = try("netem", q)
		q = root("tbf")
		q.TBF = &TBFOpts{Rate: 125000, Burst: 1600, Limit: 10000}
		c.TBF = try("tbf", q)
		c.HTB = try("htb", htbProbeQdisc())
		for _, disc := range Disciplines {
			c.AQM[disc] = try(disc, aqmProbeQdisc(disc))
		}
		ifb := &netlink.Ifb{LinkAttrs: netlink.NewLinkAttrs()}
		ifb.Name = "probe0"
		if err := h.LinkAdd(ifb); err != nil {
			c.Reasons["ifb"] = reason("ifb", err)
		} else {
			c.IFB = true
			_ = h.LinkDel(ifb)
		}
		return nil
	})
	if err != nil {
		for _, f := range append([]string{"netem", "htb", "tbf", "ifb"}, Disciplines...) {
			c.Reasons[f] = "probe failed: " + err.Error()
		}
		c.Netem, c.HTB, c.TBF, c.IFB = false, false, false, false
		c.AQM = map[string]bool{}
	}
	return c
}

func reason(feature string, err error) string {
	switch {
	case errors.Is(err, unix.ENOENT) && feature != "ifb":
		return fmt.Sprintf("qdisc kind %q unknown to this kernel (built without it, or its module cannot be loaded): %v", kernelKind(feature), err)
	case errors.Is(err, unix.EOPNOTSUPP) && feature == "ifb":
		return fmt.Sprintf("link kind ifb unknown to this kernel: %v", err)
	}
	return err.Error()
}

// aqmProbeQdisc is discipline disc's qdisc as planned for a 10 Mbit/s
// link, at the root.
func aqmProbeQdisc(disc string) Qdisc {
	d := Dir{Rate: 10 * units.Mbit, AQM: &AQM{Discipline: disc, ECN: DefaultECN(disc)}}
	if disc == DropTail {
		d.AQM = nil
	}
	p, err := PlanShaper(d, 1500)
	if err != nil || len(p.Qdiscs) == 0 {
		return Qdisc{Kind: kernelKind(disc), Handle: hMajor1, Parent: handleRoot}
	}
	q := p.Qdiscs[len(p.Qdiscs)-1]
	q.Handle, q.Parent = hMajor1, handleRoot
	return q
}

// htbProbeQdisc is a bare HTB root (TCA_HTB_INIT: version 3, r2q 10).
func htbProbeQdisc() Qdisc {
	return Qdisc{Kind: "htb", Handle: hMajor1, Parent: handleRoot}
}
