package topo

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The lab's wireless medium as written: top-level wifi: {medium: ...},
// node position: [x, y, z], and wifi: {rate: ...} on APs and stations.

var (
	wifiTopKeys  = []string{"medium", "backend", "hostapd", "wpa_supplicant", "adhoc", "mesh"}
	mediumKeys   = []string{"path_loss", "noise_figure", "ampdu", "seed", "pairs", "retry_limit", "queue"}
	wifiBackends = []string{WiFiBackendAuto, WiFiBackendHwsim, WiFiBackendEngine}
	pathLossKeys = []string{"model", "exponent", "ref_loss", "ref_distance"}
	pathModels   = []string{"logdistance", "friis", "itu-indoor"}
	pairKeys     = []string{"nodes", "snr", "loss"}
)

// maxPosition bounds coordinates (metres).
const maxPosition = 100000

type rawMedium struct {
	loc      loc // the medium: key
	set      bool
	enabled  bool
	pathLoss string
	exponent float64
	refLoss  float64
	refDist  float64
	expSet   bool
	refSet   bool
	distSet  bool
	nf       float64
	nfSet    bool
	ampdu    *bool
	seed     uint64
	pairs    []rawPair
	retry    int
	queue    int
}

type rawWiFiTop struct {
	backend    string
	backendLoc loc
	// daemons named by the file: key -> path, and where
	daemons    map[string]string
	daemonLocs map[string]loc
	// adhoc: the ad hoc networks declared, in file order (decode_adhoc.go)
	adhoc []rawAdhoc
}

type rawPair struct {
	loc      loc
	a, b     string
	aLoc     loc
	bLoc     loc
	snr      *float64
	loss     *float64
	valueLoc loc
}

// wifiTop decodes the top-level wifi: block.
func (d *dec) wifiTop(n *yaml.Node, doc *rawDoc) {
	for _, e := range d.fields(n, "wifi", wifiTopKeys) {
		p := joinPath("wifi", e.Key)
		switch e.Key {
		case "adhoc", "mesh":
			d.adhocTop(e.V, p, doc, e.Key == "mesh")
			continue
		}
		if e.Key == "backend" {
			doc.wifi.backend, _ = d.oneOf(e.V, p, "Wi-Fi backend", wifiBackends)
			doc.wifi.backendLoc = at(e.V, p)
			continue
		}
		if e.Key == "hostapd" || e.Key == "wpa_supplicant" {
			if path, ok := d.str(e.V, p, "the path of the "+e.Key+" executable"); ok {
				if path == "" || strings.ContainsAny(path, "\x00\n") {
					d.errorf(at(e.V, p), "%s: %q is not a path", p, path)
					continue
				}
				if doc.wifi.daemons == nil {
					doc.wifi.daemons, doc.wifi.daemonLocs = map[string]string{}, map[string]loc{}
				}
				doc.wifi.daemons[e.Key], doc.wifi.daemonLocs[e.Key] = path, at(e.V, p)
			}
			continue
		}
		if e.Key != "medium" {
			continue
		}
		m := &rawMedium{loc: at(e.K, p), set: true, enabled: true}
		doc.medium = m
		v := deref(e.V)
		if v != nil && v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
			m.enabled, _ = d.boolean(e.V, p)
			continue
		}
		for _, f := range d.fields(e.V, p, mediumKeys) {
			fp := joinPath(p, f.Key)
			fl := at(f.V, fp)
			switch f.Key {
			case "path_loss":
				d.pathLoss(f.V, fp, m)
			case "noise_figure":
				if x, ok := d.decibels(f.V, fp, 0, 30); ok {
					m.nf, m.nfSet = x, true
				}
			case "ampdu":
				if b, ok := d.boolean(f.V, fp); ok {
					m.ampdu = &b
				}
			case "seed":
				if x, ok := d.integer(f.V, fp, 0, math.MaxInt32); ok {
					m.seed = uint64(x)
				}
			case "pairs":
				for i, item := range d.list(f.V, fp, false) {
					m.pairs = append(m.pairs, d.pair(item, idx(fp, i)))
				}
			case "retry_limit":
				if x, ok := d.integer(f.V, fp, 1, 31); ok {
					m.retry = int(x)
				}
			case "queue":
				if x, ok := d.integer(f.V, fp, 1, 10000); ok {
					m.queue = int(x)
				}
			}
			_ = fl
		}
	}
}

func (d *dec) pathLoss(n *yaml.Node, path string, m *rawMedium) {
	v := deref(n)
	if v != nil && v.Kind == yaml.ScalarNode {
		m.pathLoss, _ = d.oneOf(n, path, "path-loss model", pathModels)
		return
	}
	for _, f := range d.fields(n, path, pathLossKeys) {
		fp := joinPath(path, f.Key)
		switch f.Key {
		case "model":
			m.pathLoss, _ = d.oneOf(f.V, fp, "path-loss model", pathModels)
		case "exponent":
			if x, ok := d.number(f.V, fp, "a path-loss exponent between 1 and 8", 1, 8); ok {
				m.exponent, m.expSet = x, true
			}
		case "ref_loss":
			if x, ok := d.decibels(f.V, fp, 0, 200); ok {
				m.refLoss, m.refSet = x, true
			}
		case "ref_distance":
			if s, ok := d.scalar(f.V, fp, "a distance in metres such as 1m"); ok {
				x, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "m"), 64)
				if err != nil || x <= 0 || x > 1000 {
					d.errorf(at(f.V, fp), "ref_distance %q: want a distance in metres, 0 < d ≤ 1000 (e.g. 1m)", clip(s))
					continue
				}
				m.refDist, m.distSet = x, true
			}
		}
	}
}

func (d *dec) pair(n *yaml.Node, path string) rawPair {
	pr := rawPair{loc: at(n, path)}
	for _, f := range d.fields(n, path, pairKeys) {
		fp := joinPath(path, f.Key)
		switch f.Key {
		case "nodes":
			items := d.list(f.V, fp, false)
			if len(items) != 2 {
				d.errorf(at(f.V, fp), "nodes: want the two nodes of the pair, e.g. [sta1, ap1]")
				continue
			}
			pr.a, _ = d.str(items[0], idx(fp, 0), "a node name")
			pr.b, _ = d.str(items[1], idx(fp, 1), "a node name")
			pr.aLoc, pr.bLoc = at(items[0], idx(fp, 0)), at(items[1], idx(fp, 1))
		case "snr":
			if x, ok := d.decibels(f.V, fp, -20, 100); ok {
				pr.snr, pr.valueLoc = &x, at(f.V, fp)
			}
		case "loss":
			if x, ok := d.decibels(f.V, fp, 0, 200); ok {
				pr.loss, pr.valueLoc = &x, at(f.V, fp)
			}
		}
	}
	if pr.a == "" && !d.failedAt(pr.loc) {
		d.errorf(pr.loc, "a pair needs nodes: [a, b] and snr: or loss:")
	}
	if pr.snr != nil && pr.loss != nil {
		d.errorf(pr.valueLoc, "give snr: or loss: for a pair, not both (snr fixes the SNR; loss adds to the path loss)")
	}
	if pr.a != "" && pr.snr == nil && pr.loss == nil && !d.failedAt(pr.loc) {
		d.errorf(pr.loc, "pair %s–%s needs snr: (e.g. 25dB) or loss: (extra dB, e.g. 10dB)", pr.a, pr.b)
	}
	return pr
}

// decibels reads a value in dB ("25dB", "7 dB", 25) within [lo, hi].
func (d *dec) decibels(n *yaml.Node, path string, lo, hi float64) (float64, bool) {
	s, ok := d.scalar(n, path, "a value in dB such as 25dB")
	if !ok {
		return 0, false
	}
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "dB"), "db"))
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(x) || x < lo || x > hi {
		d.errorf(at(n, path), "%q: want a value in dB from %g to %g (e.g. %gdB)", clip(s), lo, hi, math.Max(lo, math.Min(hi, 25)))
		return 0, false
	}
	return x, true
}

// number reads a plain number within [lo, hi].
func (d *dec) number(n *yaml.Node, path, want string, lo, hi float64) (float64, bool) {
	s, ok := d.scalar(n, path, want)
	if !ok {
		return 0, false
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(x) || x < lo || x > hi {
		d.errorf(at(n, path), "%q: want %s", clip(s), want)
		return 0, false
	}
	return x, true
}

// position reads [x, y] or [x, y, z] in metres.
func (d *dec) position(n *yaml.Node, path string) ([3]float64, bool) {
	var p [3]float64
	items := d.list(n, path, false)
	if items == nil {
		return p, false
	}
	if len(items) < 2 || len(items) > 3 {
		d.errorf(at(n, path), "position: want [x, y] or [x, y, z] in metres, got %d values", len(items))
		return p, false
	}
	for i, it := range items {
		x, ok := d.number(it, idx(path, i), fmt.Sprintf("a coordinate in metres within ±%d", maxPosition), -maxPosition, maxPosition)
		if !ok {
			return p, false
		}
		p[i] = x
	}
	return p, true
}
