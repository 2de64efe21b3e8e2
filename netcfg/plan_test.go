package netcfg

import (
	"encoding/json"
	"flag"
	"net"
	"net/netip"
	"os"
	"reflect"
	"testing"

	"github.com/emuctl/emuctl/topo"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func load(t *testing.T, file string) *topo.Spec {
	t.Helper()
	s, err := topo.LoadFile(file)
	if err != nil {
		t.Fatalf("%s:\n%v", file, err)
	}
	return s
}

func plan(t *testing.T, s *topo.Spec, node string) *MPTCPPlan {
	t.Helper()
	p, err := PlanMPTCP(s.Node(node), s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanAuto: endpoints: auto on the server announces its second
// address and gives both MPTCP nodes limits 1/1; both multihomed nodes get
// one table and rule per address with the router on that link as gateway;
// routers without mptcp: get nothing.
func TestPlanAuto(t *testing.T) {
	s := load(t, "testdata/twopath.yaml")
	a := netip.MustParseAddr
	pfx := netip.MustParsePrefix
	want := map[string]*MPTCPPlan{
		"c": {Enabled: true, Limits: &PlanLimits{Subflows: 1, AddAddrAccepted: 1, Auto: true}, Policy: []PolicyRoute{
			{Table: 100, Priority: 100, From: a("10.31.1.1"), Subnet: pfx("10.31.1.0/24"), Interface: "c-eth0", Gateway: a("10.31.1.254")},
			{Table: 101, Priority: 101, From: a("10.31.2.1"), Subnet: pfx("10.31.2.0/24"), Interface: "c-eth1", Gateway: a("10.31.2.254")},
		}},
		"s": {Enabled: true, Limits: &PlanLimits{Subflows: 1, AddAddrAccepted: 1, Auto: true},
			Endpoints: []Endpoint{{Addr: a("10.31.4.2"), Interface: "s-eth1", Flags: []string{"signal"}}},
			Policy: []PolicyRoute{
				{Table: 100, Priority: 100, From: a("10.31.3.2"), Subnet: pfx("10.31.3.0/24"), Interface: "s-eth0", Gateway: a("10.31.3.254")},
				{Table: 101, Priority: 101, From: a("10.31.4.2"), Subnet: pfx("10.31.4.0/24"), Interface: "s-eth1", Gateway: a("10.31.4.254")},
			}},
		"r1": nil, "r2": nil,
	}
	for n, w := range want {
		if got := plan(t, s, n); !reflect.DeepEqual(got, w) {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(w)
			t.Errorf("%s:\n got %s\nwant %s", n, gj, wj)
		}
	}
}

// TestPlanExplicit: interface endpoints expand to each address of the
// interface, address endpoints are bound to their interface, unset limits
// keep the kernel's (-1), policy_routing: false and single-homed nodes get
// no tables, gateways are found across switches, a host-to-host link has
// none, and enabled: false does nothing but turn MPTCP off.
func TestPlanExplicit(t *testing.T) {
	s := load(t, "testdata/plan.yaml")
	pa := plan(t, s, "a")
	j, _ := json.MarshalIndent(pa, "", "  ")
	t.Logf("a: %s", j)
	eps := pa.Endpoints
	if len(eps) != 3 || eps[0].Interface != "a-eth1" || !eps[0].Addr.Is4() || !eps[1].Addr.Is6() || eps[1].Interface != "a-eth1" ||
		!reflect.DeepEqual(eps[0].Flags, []string{"subflow", "backup"}) ||
		!reflect.DeepEqual(eps[2], Endpoint{ID: 7, Addr: netip.MustParseAddr("10.40.3.1"), Interface: "a-eth2", Port: 5000, Flags: []string{"signal"}}) {
		t.Errorf("a endpoints: %+v", eps)
	}
	if *pa.Limits != (PlanLimits{Subflows: 4, AddAddrAccepted: -1}) {
		t.Errorf("a limits %+v", *pa.Limits)
	}
	gw := map[string]string{}
	for _, p := range pa.Policy {
		gw[p.Interface+" "+p.From.String()] = p.Gateway.String()
	}
	wantGW := map[string]string{
		"a-eth0 10.40.1.1": "10.40.1.254", // the router behind switch sw
		"a-eth1 10.40.2.1": "invalid IP",  // host-to-host link: no gateway
		"a-eth2 10.40.3.1": "invalid IP",
	}
	for k, v := range wantGW {
		if gw[k] != v {
			t.Errorf("gateway for %s: %s, want %s (all: %v)", k, gw[k], v, gw)
		}
	}
	if len(pa.Policy) != 6 || pa.Policy[5].Table != 105 || pa.Policy[5].Priority != 105 {
		t.Errorf("a: want 6 tables 100..105 (3 IPv4 + 3 IPv6), got %d", len(pa.Policy))
	}
	if pb := plan(t, s, "b"); pb.Policy != nil || len(pb.Endpoints) != 2 || pb.Limits != nil {
		t.Errorf("b (policy_routing: false, no limits): %+v", pb)
	}
	if pc := plan(t, s, "c"); !reflect.DeepEqual(pc, &MPTCPPlan{}) {
		t.Errorf("c (enabled: false): %+v", pc)
	}
	if pd := plan(t, s, "d"); !reflect.DeepEqual(pd, &MPTCPPlan{Enabled: true}) {
		t.Errorf("d (mptcp: {}, single-homed): %+v", pd)
	}
}

// TestPreflightGolden: unknown congestion controls name the available
// ones, a default outside the allowed list names the list and the opt-in,
// unknown schedulers name the available ones; each with file:line:col.
func TestPreflightGolden(t *testing.T) {
	s := load(t, "testdata/preflight.yaml")
	host := Host{AvailableCC: []string{"reno", "bbr", "cubic"}, AllowedCC: []string{"reno", "bbr"}, MPTCP: true, PathManager: true, Schedulers: []string{"default"}}
	err := CheckSpec(s, host, PreflightOptions{})
	if err == nil {
		t.Fatal("no problems found")
	}
	got := err.Error() + "\n"
	const golden = "testdata/preflight.golden"
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, _ := os.ReadFile(golden)
	if got != string(want) {
		t.Errorf("preflight problems differ from %s\n--- got:\n%s--- want:\n%s", golden, got, want)
	}
	err = CheckSpec(s, host, PreflightOptions{ExtendAllowedCC: true})
	if err == nil || len(err.(Problems)) != 3 {
		t.Errorf("with the opt-in, the allowed-list problem goes and the other three stay: %v", err)
	}
	if need := NeedsAllowedCC(s, host.AllowedCC); !reflect.DeepEqual(need, []string{"cubic", "cubci"}) {
		t.Errorf("NeedsAllowedCC = %v", need)
	}
	good := load(t, "testdata/twopath.yaml")
	if err := CheckSpec(good, host, PreflightOptions{}); err != nil {
		t.Errorf("twopath.yaml: %v", err)
	}
	if err := CheckSpec(good, Host{AvailableCC: host.AvailableCC}, PreflightOptions{}); err == nil {
		t.Errorf("mptcp: on a kernel without MPTCP must fail")
	}
}

// TestTCPSysctls: the order and values ApplyTCP writes; no_metrics_save
// defaults to on, also without a profile.
func TestTCPSysctls(t *testing.T) {
	if got := TCPSysctls(nil); !reflect.DeepEqual(got, []topo.KV{{Key: "net.ipv4.tcp_no_metrics_save", Value: "1"}}) {
		t.Errorf("nil profile: %v", got)
	}
	f, one := false, 1
	p := &topo.TCPProfile{CongestionControl: "bbr", SACK: &f, ECN: &one, NoMetricsSave: &f, Rmem: []int{1, 2, 3},
		Sysctls: []topo.KV{{Key: "net.ipv4.tcp_fastopen", Value: "3"}}}
	want := []topo.KV{
		{Key: "net.ipv4.tcp_congestion_control", Value: "bbr"}, {Key: "net.ipv4.tcp_sack", Value: "0"},
		{Key: "net.ipv4.tcp_ecn", Value: "1"}, {Key: "net.ipv4.tcp_no_metrics_save", Value: "0"},
		{Key: "net.ipv4.tcp_rmem", Value: "1 2 3"}, {Key: "net.ipv4.tcp_fastopen", Value: "3"},
	}
	if got := TCPSysctls(p); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// TestRouteMetricsFold: entries apply in order, later ones overriding the
// fields they set, each to the routes it selects.
func TestRouteMetricsFold(t *testing.T) {
	es := []topo.TCPRoute{
		{To: "all", InitCwnd: 10, Quickack: true},
		{To: "default", InitCwnd: 30, Congctl: "bbr"},
		{To: "10.0.1.0/24", InitRwnd: 40},
	}
	_, def, _ := net.ParseCIDR("0.0.0.0/0")
	_, sub, _ := net.ParseCIDR("10.0.1.0/24")
	_, other, _ := net.ParseCIDR("10.0.2.0/24")
	cases := []struct {
		dst  *net.IPNet
		want RouteMetrics
		n    int
	}{
		{def, RouteMetrics{Quickack: true, InitCwnd: 30, Congctl: "bbr"}, 2},
		{nil, RouteMetrics{Quickack: true, InitCwnd: 30, Congctl: "bbr"}, 2},
		{sub, RouteMetrics{Quickack: true, InitCwnd: 10, InitRwnd: 40}, 2},
		{other, RouteMetrics{Quickack: true, InitCwnd: 10}, 1},
	}
	for _, c := range cases {
		got, matched := metrics(es, c.dst)
		if got != c.want || len(matched) != c.n {
			t.Errorf("%v: %+v (%d entries), want %+v (%d)", c.dst, got, len(matched), c.want, c.n)
		}
	}
	if s := (RouteMetrics{Quickack: true, InitCwnd: 10, Congctl: "cubic"}).String(); s != "quickack 1 initcwnd 10 congctl cubic" {
		t.Errorf("String: %q", s)
	}
}

// TestExpectedSubflows: the estimate follows limits and endpoints.
func TestExpectedSubflows(t *testing.T) {
	dst := netip.MustParseAddr("10.0.0.2")
	sig := Endpoint{Addr: netip.MustParseAddr("10.0.1.2"), Flags: []string{"signal"}}
	sub := Endpoint{Addr: netip.MustParseAddr("10.0.3.1"), Flags: []string{"subflow"}}
	st := func(l Limits, eps ...Endpoint) *MPTCPState {
		return &MPTCPState{Enabled: true, PathManager: "kernel", Limits: l, Endpoints: eps}
	}
	cases := []struct {
		c, s *MPTCPState
		want int
	}{
		{st(Limits{2, 2}), st(Limits{2, 2}, sig), 2},
		{st(Limits{2, 0}), st(Limits{2, 2}, sig), 1}, // the client accepts no ADD_ADDR
		{st(Limits{2, 2}, sub), st(Limits{2, 2}, sig), 3},
		{st(Limits{1, 2}, sub), st(Limits{2, 2}, sig), 2}, // client subflows limit
		{st(Limits{2, 2}, sub), st(Limits{0, 2}, sig), 1}, // the server accepts no join
		{&MPTCPState{}, st(Limits{2, 2}, sig), 1},
	}
	for i, c := range cases {
		if got := ExpectedSubflows(c.c, c.s, dst); got != c.want {
			t.Errorf("case %d: %d, want %d", i, got, c.want)
		}
	}
}
