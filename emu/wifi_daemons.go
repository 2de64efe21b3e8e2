package emu

// Wi-Fi daemons: hostapd and wpa_supplicant started inside the nodes under
// the daemon keeper, and the wait until APs are up and stations associated.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
)

// startDaemon has the lab's supervisor start argv inside the node and
// keep it running (supervisor_daemons.go: restarted when it exits, up to a
// burst), its output in logPath (a new file); down stops the supervisor,
// which stops its daemons.
func (d *deployer) startDaemon(n *node, what string, argv []string, logPath string) error {
	if err := os.WriteFile(logPath, nil, 0o600); err != nil {
		return err
	}
	resp, err := supervisorCall(d.spec.Name, ctlRequest{Op: "daemon-start", Node: n.spec.Name, What: what, Argv: argv, Log: logPath})
	if err != nil {
		return fmt.Errorf("node %s: start %s: %w", n.spec.Name, what, err)
	}
	d.log.Debug("daemon started", "node", n.spec.Name, "what", what, "pid", resp.Daemons[0].PID)
	return nil
}

// Daemons returns the daemons the lab's supervisor keeps (none when the
// lab has no supervisor).
func Daemons(lab string) ([]DaemonStatus, error) {
	resp, err := supervisorCall(lab, ctlRequest{Op: "daemons"})
	if err != nil {
		return nil, err
	}
	return resp.Daemons, nil
}

func (d *deployer) startHostapd(n *node, hostapd wifi.Tool) error {
	dir := wifiDir(d.spec.Name, n.spec.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// the regulatory country: the default gives way where the database
	// lets no AP start on its channels (wifi_regdom.go)
	was := n.spec.AP.Country
	if err := resolveCountry(n.spec.AP); err != nil {
		return fmt.Errorf("access point %s: %w", n.spec.Name, err)
	}
	if n.spec.AP.Country != was {
		d.log.Info("regulatory country", "node", n.spec.Name, "country", n.spec.AP.Country, "instead of", was,
			"why", "the regulatory database lets no access point start on its channels in "+was)
	}
	// one file per BSS: a multi-link AP has one per link, all given to
	// one hostapd
	files, err := wifi.HostapdConfigs(n.spec.AP, filepath.Join(dir, "ctrl"))
	if err != nil {
		return fmt.Errorf("access point %s: %w", n.spec.Name, err)
	}
	argv := hostapd.Argv()
	for _, f := range files {
		// hostapd creates its ctrl_interface directory, but not the
		// parent of a multi-link AP's per-link ones (ctrl/link<N>)
		if err := os.MkdirAll(filepath.Dir(f.CtrlDir), 0o700); err != nil {
			return err
		}
		p := filepath.Join(dir, f.Name)
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			return err
		}
		argv = append(argv, p)
	}
	return d.startDaemon(n, "hostapd", argv, filepath.Join(dir, "hostapd.log"))
}

// ctrlPath is the control socket of a node's daemon: the station's, the
// AP's, or for a multi-link AP its first link's.
func ctrlPath(lab string, n *topo.Node) string {
	dir := filepath.Join(wifiDir(lab, n.Name), "ctrl")
	if n.Station != nil {
		return filepath.Join(dir, n.Station.Iface)
	}
	if n.AP.MLO() {
		if p, err := wifi.FindCtrlSocket(filepath.Join(dir, "link0"), n.AP.Iface, 0); err == nil {
			return p
		}
		return filepath.Join(dir, "link0", n.AP.Iface)
	}
	return filepath.Join(dir, n.AP.Iface)
}

func (d *deployer) startWpaSupplicant(n *node, wpas wifi.Tool) error {
	st := n.spec.Station
	dir := wifiDir(d.spec.Name, n.spec.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ap := d.spec.Node(st.AP).AP
	freqs := wifi.APFreqs(ap)
	for _, name := range st.ESS { // a network of several APs: all their channels
		for _, f := range wifi.APFreqs(d.spec.Node(name).AP) {
			if !slices.Contains(freqs, f) {
				freqs = append(freqs, f)
			}
		}
	}
	if ap.MLO() && !st.MLO {
		// a station without multi-link joins an AP MLD on its first link
		// (link 0): which one is then no choice of wpa_supplicant's
		// scoring, and the medium's fixed rate is that link's
		freqs = freqs[:1]
	}
	// a station of several networks (ssid: [a, b]): one network block
	// each, with the security of its access points
	var others []wifi.StaNetwork
	for _, ssid := range st.Networks {
		if ssid == st.SSID {
			continue
		}
		for _, name := range st.ESS {
			if a := d.spec.Node(name).AP; a.SSID == ssid {
				others = append(others, wifi.StaNetwork{SSID: a.SSID, Security: a.Security, Passphrase: a.Passphrase})
				break
			}
		}
	}
	conf, err := wifi.WpaSupplicantConfig(st, filepath.Join(dir, "ctrl"), freqs, others...)
	if err != nil {
		return fmt.Errorf("station %s: %w", n.spec.Name, err)
	}
	confPath := filepath.Join(dir, "wpa_supplicant.conf")
	if err := os.WriteFile(confPath, conf, 0o600); err != nil {
		return err
	}
	return d.startDaemon(n, "wpa_supplicant", append(wpas.Argv(), "-D", "nl80211", "-i", st.Iface, "-c", confPath),
		filepath.Join(dir, "wpa_supplicant.log"))
}

// daemon asks the supervisor for the daemon bin of a node.
func (d *deployer) daemon(node, bin string) (DaemonStatus, bool) {
	ds, err := Daemons(d.spec.Name)
	if err != nil {
		return DaemonStatus{}, false
	}
	for _, s := range ds {
		if s.Node == node && s.What == bin {
			return s, true
		}
	}
	return DaemonStatus{}, false
}

// daemonFailure describes a daemon that exited or did not get ready, with
// its last log lines (the log itself goes with the lab's state dir when
// the deploy rolls back).
func daemonFailure(what, node string, p DaemonStatus, problem string) error {
	tail, _ := os.ReadFile(p.Log)
	lines := strings.TrimSpace(lastLines(string(tail), 12))
	if lines == "" {
		return fmt.Errorf("%s %s: %s; %s had logged nothing yet", what, node, problem, what)
	}
	return fmt.Errorf("%s %s: %s; its last log lines:\n%s", what, node, problem, indent(lines))
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// waitWiFi waits until every hostapd reports state=ENABLED (aps) or every
// wpa_supplicant wpa_state=COMPLETED.
func (d *deployer) waitWiFi(ctx context.Context, wnodes []*node, aps bool) error {
	deadline := time.Now().Add(WiFiTimeout())
	pending := map[string]*node{}
	for _, n := range wnodes {
		if (n.spec.AP != nil) == aps && !n.spec.AdhocStation() { // members: joinAdhocMembers
			pending[n.spec.Name] = n
		}
	}
	t0 := time.Now()
	retries := map[string]int{}
	for len(pending) > 0 {
		for name, n := range pending {
			bin, key, want := "wpa_supplicant", "wpa_state", "COMPLETED"
			if aps {
				bin, key, want = "hostapd", "state", "ENABLED"
			}
			p, ok := d.daemon(name, bin)
			if !ok {
				return fmt.Errorf("%s: the lab's supervisor keeps no %s", name, bin)
			}
			if p.GaveUp {
				return daemonFailure(bin, name, p, fmt.Sprintf("exited during start-up, %d times (%s)", p.Starts, p.LastExit))
			}
			out, err := wifi.CtrlRequest(ctrlPath(d.spec.Name, n.spec), "STATUS", 2*time.Second)
			if err == nil && wifi.ParseStatus(out)[key] == want {
				if st := n.spec.Station; st != nil && st.MLO {
					done, err := d.checkMLOLinks(n, retries)
					if err != nil {
						return err
					}
					if !done {
						continue
					}
				}
				d.log.Debug("wifi ready", "node", name, "what", bin, "after", time.Since(t0))
				delete(pending, name)
			}
		}
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			var names []string
			for name := range pending {
				names = append(names, name)
			}
			sort.Strings(names)
			n := pending[names[0]]
			bin, what := "wpa_supplicant", "did not associate"
			if aps {
				bin, what = "hostapd", "did not enable the access point"
			}
			p, _ := d.daemon(n.spec.Name, bin)
			err := daemonFailure(bin, n.spec.Name, p, fmt.Sprintf("%s within %v (EMUCTL_WIFI_TIMEOUT raises the limit); still waiting: %s", what, WiFiTimeout(), strings.Join(names, ", ")))
			if !aps {
				if ap, ok := d.daemon(n.spec.Station.AP, "hostapd"); ok {
					tail, _ := os.ReadFile(ap.Log)
					err = fmt.Errorf("%w\n  hostapd of %s, last log lines:\n%s", err, n.spec.Station.AP, indent(lastLines(string(tail), 8)))
				}
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// mloAssocAttempts bounds the associations up makes for a multi-link
// station that joined on fewer links than its AP MLD has.
const mloAssocAttempts = 3

// checkMLOLinks looks at an associated multi-link station: done when its
// association has every link of its AP MLD (wpa_supplicant's MLO_STATUS).
// A single-link (or partial) association — which wpa_supplicant makes
// when it did not learn every link from its scan — is never accepted: the
// station is disconnected and reconnected, up to mloAssocAttempts
// associations in all; then up fails, naming the links it got.
func (d *deployer) checkMLOLinks(n *node, attempts map[string]int) (bool, error) {
	ap := d.spec.Node(n.spec.Station.AP).AP
	ctrl := ctrlPath(d.spec.Name, n.spec)
	reply, err := wifi.CtrlRequest(ctrl, "MLO_STATUS", 2*time.Second)
	if err != nil {
		return false, fmt.Errorf("station %s: MLO_STATUS: %w", n.spec.Name, err)
	}
	links := wifi.ParseMLOStatus(reply)
	if len(links) == len(ap.Links) {
		return true, nil
	}
	name := n.spec.Name
	attempts[name]++
	var got []string
	for _, l := range links {
		got = append(got, fmt.Sprintf("link %d (AP %s)", l.ID, l.APAddr))
	}
	what := fmt.Sprintf("station %s associated on %d of its AP MLD's %d links (%s)", name, len(links), len(ap.Links), strings.Join(got, ", "))
	if attempts[name] >= mloAssocAttempts {
		p, _ := d.daemon(name, "wpa_supplicant")
		return false, daemonFailure("wpa_supplicant", name, p, fmt.Sprintf("%s after %d associations: a single-link fallback is refused (the lab would not be the multi-link lab the file describes)", what, attempts[name]))
	}
	d.log.Info("multi-link association incomplete; associating again", "node", name, "links", len(links), "want", len(ap.Links), "attempt", attempts[name])
	if _, err := wifi.CtrlRequest(ctrl, "DISCONNECT", 2*time.Second); err != nil {
		return false, fmt.Errorf("%s: DISCONNECT: %w", what, err)
	}
	if _, err := wifi.CtrlRequest(ctrl, "RECONNECT", 2*time.Second); err != nil {
		return false, fmt.Errorf("%s: RECONNECT: %w", what, err)
	}
	return false, nil
}
