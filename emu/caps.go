package emu

import (
	"os"
	"os/exec"
	"regexp"
	"strings"

	"github.com/emuctl/emuctl/internal/sysctl"
	"github.com/emuctl/emuctl/tc"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Capability is one line of `emuctl doctor`.
type Capability struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Backend is the choice emuctl makes for one concern on this machine.
type Backend struct {
	Concern string `json:"concern"`
	Uses    string `json:"uses"`
	Why     string `json:"why"`
}

// Report is what `emuctl doctor` prints.
type Report struct {
	Kernel       string       `json:"kernel"`
	Capabilities []Capability `json:"capabilities"`
	Tools        []Capability `json:"tools"`
	Backends     []Backend    `json:"backends"`
}

// Doctor probes the kernel and the tools emuctl can use, and says which
// backend each concern will get. Probes that need a namespace use a
// throw-away one; nothing on the host changes.
func Doctor() *Report {
	var uts unix.Utsname
	unix.Uname(&uts)
	r := &Report{Kernel: cstr(uts.Release[:]) + " " + cstr(uts.Machine[:])}
	add := func(name string, ok bool, detail string) {
		r.Capabilities = append(r.Capabilities, Capability{name, ok, detail})
	}
	_, err := os.Stat("/proc/self/ns/net")
	add("network namespaces", err == nil, "")
	caps := tc.Probe()
	for _, f := range []struct {
		name string
		ok   bool
	}{{"netem", caps.Netem}, {"htb", caps.HTB}, {"tbf", caps.TBF}, {"ifb", caps.IFB}} {
		add("qdisc/"+f.name, f.ok, caps.Reasons[f.name])
	}
	for _, d := range tc.Disciplines[1:] { // droptail is pfifo: always there
		add("qdisc/"+tc.KernelKind(d), caps.AQM[d], caps.Reasons[d])
	}
	ovsMod := moduleLoaded("openvswitch") || genlFamily("ovs_datapath")
	add("openvswitch kernel datapath", ovsMod, detailIf(!ovsMod, "module not loaded or not built; `modprobe openvswitch` if your kernel has it"))
	hwsim := moduleLoaded("mac80211_hwsim") || genlFamily("MAC80211_HWSIM")
	add("mac80211_hwsim", hwsim, detailIf(!hwsim, "not loaded; `modprobe mac80211_hwsim radios=0` if your kernel has it"))
	mptcp := readFile("/proc/sys/net/mptcp/enabled")
	add("mptcp", mptcp == "1", "net.mptcp.enabled="+orNone(mptcp))
	avail := readFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	allowed := readFile("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
	add("congestion control", avail != "", "available: "+orNone(avail)+"; allowed as a namespace default: "+orNone(allowed))

	for _, t := range []struct{ bin, pkg string }{
		{"ovsdb-server", "openvswitch-switch"}, {"ovs-vswitchd", "openvswitch-switch"},
		{"hostapd", "hostapd"}, {"wpa_supplicant", "wpasupplicant"}, {"iperf3", "iperf3"},
		{"nft", "nftables"}, {"ethtool", "ethtool"}, {"ping", "iputils-ping"},
	} {
		p, err := exec.LookPath(t.bin)
		if err != nil {
			r.Tools = append(r.Tools, Capability{t.bin, false, "not found (apt-get install " + t.pkg + ")"})
			continue
		}
		r.Tools = append(r.Tools, Capability{t.bin, true, p + " " + toolVersion(p)})
	}

	if caps.Netem {
		r.Backends = append(r.Backends, Backend{"delay / jitter / loss / rate / queue", "netem (kernel)", "sch_netem is available"})
	} else {
		r.Backends = append(r.Backends, Backend{"delay / jitter / loss / rate / queue", "userspace link engine", "no sch_netem: " + caps.Reasons["netem"]})
	}
	r.Backends = append(r.Backends, queueBackends(caps)...)
	r.Backends = append(r.Backends,
		Backend{"link trace (trace:, mahimahi:)", "userspace link engine", "netem cannot replay a delivery trace (slot batches at random): backend auto puts a traced link on the engine, a pinned kernel backend is refused"},
		Backend{"schedules (rate, delay, loss, queue steps)", scheduleBackend(caps), "the lab's supervisor applies each step on time: tc change on netem links (queued packets keep their times), Update on engine links (queued packets re-timed to a new rate)"})
	r.Backends = append(r.Backends, Backend{"switch (type: linux-bridge)", "Linux bridge in the switch's namespace", "always available"})
	if err := sysctl.Probe(); err == nil {
		r.Backends = append(r.Backends, Backend{"node sysctls", "a private procfs instance per namespace", "fsopen/fsmount work: set-up cost per node stays constant however many namespaces live"})
	} else {
		r.Backends = append(r.Backends, Backend{"node sysctls", "the host's /proc/sys", "no private procfs (" + err.Error() + "): each lookup walks one dentry per live namespace, so labs of thousands of nodes set up slower"})
	}
	r.Backends = append(r.Backends, ovsBackends()...)       // OVS: system or embedded, socket, datapath (ovs_doctor.go)
	r.Backends = append(r.Backends, wifiBackends(hwsim)...) // Wi-Fi (wifi.go)
	return r
}

// queueBackends says, per queue discipline, what runs it with backend:
// auto: netem and the kernel's qdisc when the kernel has both, else the
// link engine (which implements all but cake). The kernel's reasons are
// in the capability lines above.
func queueBackends(caps tc.Caps) []Backend {
	var out []Backend
	for _, d := range tc.Disciplines {
		b := Backend{Concern: "queue discipline " + d}
		kind := tc.KernelKind(d)
		engineOK := (&tc.AQM{Discipline: d}).EngineSupports() == nil
		switch {
		case caps.Netem && caps.AQM[d]:
			b.Uses, b.Why = "kernel "+kind+" (under netem and tbf)", "sch_netem and "+kind+" are available"
			if engineOK {
				b.Why += "; backend: userspace runs the link engine's own"
			}
		case engineOK && !caps.Netem:
			b.Uses, b.Why = "userspace link engine (its own "+d+")", "no sch_netem"
		case engineOK:
			b.Uses, b.Why = "userspace link engine (its own "+d+")", "no kernel "+kind
		default:
			b.Uses = "none: a link with it is refused"
			b.Why = "the link engine does not implement " + d + " (README, Known limits); the kernel has no " + kind
			if !caps.Netem {
				b.Why = "the link engine does not implement " + d + " (README, Known limits); the kernel has no sch_netem to put it under"
			}
		}
		out = append(out, b)
	}
	return out
}

func cstr(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

func detailIf(c bool, s string) string {
	if c {
		return s
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func readFile(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func moduleLoaded(name string) bool {
	_, err := os.Stat("/sys/module/" + name)
	return err == nil
}

func genlFamily(name string) bool {
	_, err := netlink.GenlFamilyGet(name)
	return err == nil
}

var versionRe = regexp.MustCompile(`\d+\.\d+(\.\d+)?`)

// toolVersion runs `tool --version` (or -v) and returns the first version
// number it prints.
func toolVersion(path string) string {
	for _, arg := range []string{"--version", "-v"} {
		out, _ := exec.Command(path, arg).CombinedOutput()
		if v := versionRe.FindString(string(out)); v != "" {
			return v
		}
	}
	return ""
}

// scheduleBackend says what carries out schedule steps on this kernel.
func scheduleBackend(caps tc.Caps) string {
	if caps.Netem {
		return "supervisor: tc change (netem links), engine Update (engine links)"
	}
	return "supervisor: engine Update"
}
