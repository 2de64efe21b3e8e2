package emu

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/topo"
)

// The underlay is part of every cut link's path: its one-way delay d_u
// adds to the link's. Before any worker builds anything, the controller
// has each machine ping, from its root namespace, the underlay address of
// every machine it has a tunnel to (underlayProbes echo requests), and
// gives the workers each cut direction's delay less d_u = median RTT / 2
// of its sending machine's path. A direction whose delay is below
// d_u + 3σ (σ of the one-way samples, RTT/2) cannot be emulated there and
// is refused. A direction without delay is left as it is (the underlay's
// delay adds to it, as a cable's would). The measurements are kept in the
// controller's state (State.Underlay).

const underlayProbes = 50

// measureUnderlay is the controller's phase between making the machines
// and starting the workers.
func (d *deployer) measureUnderlay(ctx context.Context) error {
	c := d.spec.Cluster
	peers := map[string][]string{}
	for _, cut := range c.Cuts {
		for _, p := range [][2]string{{cut.A, cut.B}, {cut.B, cut.A}} {
			found := false
			for _, q := range peers[p[0]] {
				found = found || q == p[1]
			}
			if !found {
				peers[p[0]] = append(peers[p[0]], p[1])
			}
		}
	}
	var ms []topo.Machine
	for _, m := range c.Machines {
		if len(peers[m.Name]) > 0 {
			ms = append(ms, m)
		}
	}
	results := make([][]UnderlayPath, len(ms))
	idx := map[string]int{}
	for i, m := range ms {
		idx[m.Name] = i
	}
	err := parallel(ctx, max(1, len(ms)), ms, func(m topo.Machine) error {
		args := []string{"probe", d.spec.Name, strconv.Itoa(underlayProbes)}
		for _, p := range peers[m.Name] {
			args = append(args, c.Machine(p).Underlay.String())
		}
		out, err := runWorker(ctx, d.spec.Name, m, nil, args...)
		if err != nil {
			return fmt.Errorf("machine %s: measuring the underlay: %w", m.Name, err)
		}
		sc := bufio.NewScanner(strings.NewReader(out))
		for k := 0; sc.Scan() && k < len(peers[m.Name]); k++ {
			var addr, dev string
			var rtt, sigma, n, off, crtt, least int64
			var speed int
			if _, err := fmt.Sscan(sc.Text(), &addr, &rtt, &sigma, &n, &off, &crtt, &dev, &speed, &least); err != nil {
				return fmt.Errorf("machine %s: probe output %q: %w", m.Name, sc.Text(), err)
			}
			if dev == "-" {
				dev = ""
			}
			results[idx[m.Name]] = append(results[idx[m.Name]], UnderlayPath{From: m.Name, To: peers[m.Name][k], RTT: time.Duration(rtt), Min: time.Duration(least), Sigma: time.Duration(sigma), Samples: int(n),
				Offset: time.Duration(off), ClockRTT: time.Duration(crtt), Device: dev, SpeedMbps: speed})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range results {
		d.st.Underlay = append(d.st.Underlay, r...)
	}
	if _, err := compensated(d.spec, d.st.Underlay); err != nil {
		return fmt.Errorf("lab %s cannot be deployed (every machine is rolled back):\n  %w", d.spec.Name, err)
	}
	// up prints them (cmd/emuctl); the Go API finds them in the state
	d.st.Warnings = append(d.st.Warnings, sortedWarnings(capacityWarnings(d.spec, d.st.Underlay))...)
	return nil
}

// underlayPath is the measurement from machine from to machine to that a
// cut direction's delay is compensated by. Both machines' probes time the
// same round trip: the one with the lower estimate (OneWay) is the one
// less disturbed by its machine's scheduling (two VMs under emulation
// read medians of 2.37 and 0.89 ms), and taking too much off would make
// the link faster than configured.
func underlayPath(paths []UnderlayPath, from, to string) (UnderlayPath, bool) {
	var u, r UnderlayPath
	var okU, okR bool
	for _, p := range paths {
		switch {
		case p.From == from && p.To == to:
			u, okU = p, true
		case p.From == to && p.To == from:
			r, okR = p, true
		}
	}
	if okU && okR && r.OneWay() > 0 && r.OneWay() < u.OneWay() {
		u.RTT, u.Min, u.Sigma, u.Samples = r.RTT, r.Min, r.Sigma, r.Samples
	}
	return u, okU
}

// compensated returns spec's links with each cut direction's delay less
// its sending machine's underlay one-way delay (complete per-direction
// parameters), or why a direction cannot be emulated.
func compensated(spec *topo.Spec, paths []UnderlayPath) ([]topo.Link, error) {
	c := spec.Cluster
	links := append([]topo.Link(nil), spec.Links...)
	var errs []string
	for _, cut := range c.Cuts {
		l := links[cut.Link]
		if l.Params == nil {
			continue
		}
		p := *l.Params
		ab, ba := l.Params.Dir(true), l.Params.Dir(false)
		for _, dir := range []struct {
			name     string
			d        *topo.LinkParams
			from, to string
		}{{"a->b", &ab, cut.A, cut.B}, {"b->a", &ba, cut.B, cut.A}} {
			if dir.d.Delay == 0 {
				continue
			}
			u, ok := underlayPath(paths, dir.from, dir.to)
			if !ok {
				errs = append(errs, fmt.Sprintf("link %s <-> %s %s: no underlay measurement from machine %s to %s", l.A, l.B, dir.name, dir.from, dir.to))
				continue
			}
			// refused below the typical (median) one-way delay + 3σ;
			// lessened by the smallest (OneWay)
			oneWay, sigma := u.RTT/2, u.Sigma/2
			if dir.d.Delay < oneWay+3*sigma {
				where := l.Pos
				if where == "" {
					where = "link " + l.A.String() + " <-> " + l.B.String()
				}
				errs = append(errs, fmt.Sprintf("%s: %s: delay %v is below the underlay's own one-way delay from machine %s to %s (%v, σ %v, over %d probes): a link across machines cannot be faster than its underlay; give it at least %v, or place its ends on one machine",
					where, dir.name, dir.d.Delay, dir.from, dir.to, oneWay.Round(time.Microsecond), sigma.Round(time.Microsecond), u.Samples, (oneWay+3*sigma).Round(time.Microsecond)))
				continue
			}
			dir.d.Delay -= u.OneWay()
		}
		ab.AtoB, ab.BtoA, ba.AtoB, ba.BtoA = nil, nil, nil, nil
		p.AtoB, p.BtoA = &ab, &ba
		links[cut.Link].Params = &p
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n  "))
	}
	return links, nil
}

// workerProbe pings each address count times from this machine's root
// namespace, measures the clock offset to it (cluster_clock.go; answering
// its clock requests meanwhile), reads the link speed of the device that
// reaches it (cluster_capacity.go) and prints "addr median_ns sigma_ns
// samples offset_ns clock_rtt_ns device speed_mbps" per address.
func workerProbe(count int, addrs []string) error {
	resp, err := startClockResponder()
	if err != nil {
		return err
	}
	defer resp.stop()
	var peers []netip.Addr
	for _, a := range addrs {
		if p, err := netip.ParseAddr(a); err == nil {
			peers = append(peers, p)
		}
	}
	for _, a := range addrs {
		dst, err := netip.ParseAddr(a)
		if err != nil {
			return err
		}
		var rtts []time.Duration
		for range count {
			rtt, err := pingIn(context.Background(), hostNetns, "the machine", dst, time.Second)
			if err == nil {
				rtts = append(rtts, rtt)
			}
			time.Sleep(2 * time.Millisecond)
		}
		if len(rtts) < count/2 {
			return fmt.Errorf("underlay address %s: %d of %d echo requests answered", a, len(rtts), count)
		}
		// σ from the median absolute deviation (x 1.4826, σ for normal
		// samples): one scheduling hiccup on a busy host must not make
		// every link look slower than the underlay.
		sort.Slice(rtts, func(i, j int) bool { return rtts[i] < rtts[j] })
		med := rtts[len(rtts)/2]
		dev := make([]time.Duration, len(rtts))
		for i, r := range rtts {
			dev[i] = r - med
			if dev[i] < 0 {
				dev[i] = -dev[i]
			}
		}
		sort.Slice(dev, func(i, j int) bool { return dev[i] < dev[j] })
		sigma := math.Round(1.4826 * float64(dev[len(dev)/2]))
		off, crtt, err := clockOffset(dst, clockProbes)
		if err != nil {
			return err
		}
		ifname, speed := underlaySpeed(dst)
		if ifname == "" {
			ifname = "-"
		}
		fmt.Fprintf(os.Stdout, "%s %d %d %d %d %d %s %d %d\n", a, int64(med), int64(sigma), len(rtts), int64(off), int64(crtt), ifname, speed, int64(rtts[0]))
	}
	resp.waitAsked(peers, clockProbes, clockStart)
	return nil
}
