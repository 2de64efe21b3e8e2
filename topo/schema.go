package topo

import "net/netip"

// The raw* types hold a topology as written (after strict decoding, before
// resolution), with the location of everything a later check may blame.
// Generators build them directly, with zero locations.

// Keys accepted at each level, in documentation order.
var (
	docKeys        = []string{"version", "name", "addressing", "routing", "defaults", "nodes", "links", "wifi", "schedules"}
	addressingKeys = []string{"pool", "prefix", "p2p_prefix", "pool6", "auto"}
	defaultsKeys   = []string{"switch", "link", "tcp"}
	nodeKeys       = []string{"kind", "type", "stp", "routes", "sysctls", "env", "start", "tcp", "mptcp", "interfaces",
		"datapath", "fail_mode", "controller", "protocols", "rstp", "names", "ports", // ovs switches (decode_ovs.go)
		"wifi", "position", "mobility", // access points and stations (decode_wifi.go, decode_medium.go)
		"machine"} // labs over several machines (decode_cluster.go)
	ifaceKeys    = []string{"external", "force", "ip"}
	linkKeys     = []string{"name", "endpoints", "ip", "mtu", "link"}
	routeKeys    = []string{"to", "via", "dev"}
	kinds        = []string{string(KindHost), string(KindRouter), string(KindSwitch), kindAP, kindStation, string(KindRoot)}
	switchTypes  = []string{SwitchLinuxBridge, SwitchOVS}
	routingModes = []string{"auto", "none"}
)

// Addressing defaults.
var (
	defaultPool = netip.MustParsePrefix("10.0.0.0/8")
)

const (
	defaultPrefix    = 24
	defaultP2PPrefix = 30
	defaultMTU       = 1500
)

type rawDoc struct {
	source     string // file name or generator string
	name       string
	nameLoc    loc
	addr       rawAddressing
	routing    string
	routingLoc loc
	// defaults
	defSwitch  string
	defLink    lp
	defLinkLoc loc
	defTCP     *TCPProfile
	defTCPLoc  loc
	nodes      []*rawNode
	nodesLoc   loc
	links      []*rawLink
	medium     *rawMedium     // wifi: {medium: ...} (decode_medium.go)
	schedules  []*rawSchedule // schedules: (decode_schedule.go)
	wifi       rawWiFiTop     // wifi: {backend: ...}

	// machines:, placement:, tunnel: (decode_cluster.go)
	cluster *rawCluster
}

type rawAddressing struct {
	pool      netip.Prefix
	prefix    int
	p2p       int
	pool6     netip.Prefix // invalid (zero) when not set
	auto      bool
	poolLoc   loc
	prefixLoc loc
	p2pLoc    loc
	pool6Loc  loc
}

func defaultAddressing() rawAddressing {
	return rawAddressing{pool: defaultPool, prefix: defaultPrefix, p2p: defaultP2PPrefix, auto: true}
}

type rawNode struct {
	name       string
	loc        loc // the key in nodes:
	kind       NodeKind
	switchType string
	stp        bool
	routes     []rawRoute
	sysctls    []KV
	env        []KV
	start      []string
	tcp        *TCPProfile
	tcpLoc     loc
	mptcp      *MPTCPConfig
	mptcpLoc   loc
	mpEndLocs  []loc // mptcp.endpoints[i]
	ifaces     []rawIface
	ovs        *rawOVS // Open vSwitch keys (decode_ovs.go); nil when none given
	// wifiKind is "ap" or "station" for Wi-Fi nodes (kind then holds the
	// resolved switch, router or host); wifi is their wifi: block.
	wifiKind string
	wifi     *rawWiFi
	pos      [3]float64 // position: (metres), Wi-Fi nodes
	posSet   bool
	posLoc   loc
	mobility *rawMobility // mobility: (decode_mobility.go)

	// machine: (decode_cluster.go)
	machine    string
	machineLoc loc
}

type rawIface struct {
	name     string
	loc      loc
	external string
	extLoc   loc
	force    bool
	addrs    []rawAddr
}

type rawAddr struct {
	p   netip.Prefix
	loc loc
}

type rawRoute struct {
	loc loc
	dst netip.Prefix
	via netip.Addr
	dev string
}

type rawLink struct {
	loc     loc
	name    string // optional (decode_schedule.go checks it)
	nameLoc loc
	bad     bool // endpoints unusable; already reported
	ends    [2]rawEnd
	ips     []rawIP
	mtu     int
	mtuLoc  loc
	// own link parameters; dirs are the a->b and b->a overrides
	params    lp
	dirs      [2]*lp
	paramsLoc loc
	dirLocs   [2]loc
}

type rawEnd struct {
	node  string
	iface string // "" = default name
	loc   loc
}

type rawIP struct {
	node  string
	loc   loc
	addrs []rawAddr
}
