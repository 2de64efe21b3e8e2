package topo

import (
	"strconv"
	"strings"
)

// GenOptions tune Generate.
type GenOptions struct {
	// Name is the lab name; empty derives one from the generator
	// ("linear200", "tree3x10").
	Name string
	// Switch is the switch type: "" (linux-bridge), "linux-bridge" or "ovs".
	Switch string
	// Link holds link parameters for every link in --link syntax, e.g.
	// "rate=10mbit,delay=5ms,jitter=1ms,loss=1%,queue=100".
	Link string
}

// MaxGenNodes bounds the size of generated labs.
const MaxGenNodes = 100_000

// generators: name, parameter names, defaults (as Mininet's).
var generators = []struct {
	name     string
	params   []string
	defaults []int
}{
	{"minimal", nil, nil}, // Mininet's default: single,2
	{"single", []string{"k"}, []int{2}},
	{"linear", []string{"k", "n"}, []int{2, 1}},
	{"tree", []string{"depth", "fanout"}, []int{1, 2}},
	{"dumbbell", []string{"n"}, []int{2}},
	{"wifi", []string{"n"}, []int{2}}, // Mininet-WiFi's default: ap1 with sta1, sta2
}

// Generate builds a Mininet-style topology and resolves it like a file:
//
//   - "single,K": switch s1 with hosts h1..hK (Mininet SingleSwitchTopo);
//     "minimal" is single,2 named "minimal".
//   - "linear,K[,N]": switches s1..sK in a chain, N hosts per switch
//     (Mininet LinearTopo): hosts hI for N=1, else hJsI; links in Mininet's
//     order h1-s1, h2-s2, s2-s1, h3-s3, s3-s2, ...
//   - "tree,DEPTH,FANOUT": Mininet TreeTopo; switches are numbered
//     depth-first from the root s1 (as Mininet does), hosts h1.. at the
//     leaves from left to right.
//   - "dumbbell,N": hosts h1..hN on switch s1 and hN+1..h2N on switch s2;
//     the bottleneck s1-s2 is links[0], so it is always s1-eth1 <-> s2-eth1.
//   - "wifi,N": access point ap1 (802.11n, 2.4 GHz channel 1, open, SSID
//     the lab's name) with stations sta1..staN (Mininet-WiFi's default
//     topology for N=2); the link parameters shape every station's
//     wireless hop.
//
// Parameters may also be given by name as in Mininet ("tree,depth=2,fanout=3")
// and default to Mininet's values (single,2; linear,2; tree,1,2; dumbbell,2).
// Hosts share one L2 segment and get 10.0.0.1, 10.0.0.2, ... in order, in
// the smallest prefix from /24 to /8 that fits them.
func Generate(gen string, opt GenOptions) (*Spec, error) {
	d := &diag{file: gen}
	name, args, ok := parseGen(d, gen)
	if !ok {
		return nil, d.result()
	}
	doc := &rawDoc{source: gen, addr: defaultAddressing(), routing: "auto"}
	doc.addr.p2p = doc.addr.prefix // two hosts get a /24 too, as in Mininet
	switch opt.Switch {
	case "", SwitchLinuxBridge, SwitchOVS:
		doc.defSwitch = opt.Switch
	default:
		d.errorf(loc{}, "unknown switch type %q %s", clip(opt.Switch), choices("valid", opt.Switch, switchTypes))
	}
	if opt.Link != "" {
		if _, err := ParseLinkParams(opt.Link); err != nil {
			d.errorf(loc{}, "%v", err)
		}
		doc.defLink, _ = parseLinkString(opt.Link)
	}
	doc.name = opt.Name
	if doc.name == "" {
		doc.name = genName(name, args)
	}
	if msg := checkLabName(doc.name); msg != "" {
		d.errorf(loc{}, "%s", msg)
	}
	if total, ok := genSize(name, args); !ok || total > MaxGenNodes {
		d.errorf(loc{}, "%s would have more than %d nodes", gen, MaxGenNodes)
	}
	if d.failed() {
		return nil, d.result()
	}
	g := &genDoc{doc: doc}
	switch name {
	case "minimal":
		g.single(2)
	case "single":
		g.single(args[0])
	case "linear":
		g.linear(args[0], args[1])
	case "tree":
		g.tree(args[0], args[1])
	case "dumbbell":
		g.dumbbell(args[0])
	case "wifi":
		g.wifi(args[0], doc.name)
	}
	doc.nodes = append(g.hosts, g.switches...)
	return resolve(d, doc)
}

// parseGen splits "tree,2,3" or "tree,depth=2,fanout=3" into the
// generator name and its parameters (defaults filled in).
func parseGen(d *diag, gen string) (string, []int, bool) {
	fields := strings.Split(strings.TrimSpace(gen), ",")
	name := strings.ToLower(strings.TrimSpace(fields[0]))
	var names []string
	for _, g := range generators {
		names = append(names, g.name)
		if g.name != name {
			continue
		}
		if len(fields)-1 > len(g.params) {
			if len(g.params) == 0 {
				d.errorf(loc{}, "%s takes no parameters", name)
				return "", nil, false
			}
			d.errorf(loc{}, "%s takes at most %d parameters (%s)", name, len(g.params), strings.Join(g.params, ", "))
			return "", nil, false
		}
		args := append([]int(nil), g.defaults...)
		ok := true
		for i, f := range fields[1:] {
			f = strings.TrimSpace(f)
			j := i
			if k, v, named := strings.Cut(f, "="); named {
				j = indexOf(g.params, strings.TrimSpace(k))
				if j < 0 {
					d.errorf(loc{}, "%s has no parameter %q %s", name, k, choices("valid", k, g.params))
					ok = false
					continue
				}
				f = strings.TrimSpace(v)
			}
			v, err := strconv.Atoi(f)
			if err != nil || v < 1 {
				d.errorf(loc{}, "%s: %s must be a whole number >= 1, got %q", name, g.params[j], clip(f))
				ok = false
				continue
			}
			args[j] = v
		}
		return name, args, ok
	}
	d.errorf(loc{}, "unknown topology %q %s", clip(name), choices("valid", name, names))
	return "", nil, false
}

// genName derives a lab name: "linear200", "linear4x2", "tree3x10".
func genName(name string, args []int) string {
	if name == "linear" && args[1] == 1 {
		args = args[:1]
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = strconv.Itoa(a)
	}
	return name + strings.Join(parts, "x")
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// genSize counts the nodes a generator would create, without overflow.
func genSize(name string, a []int) (int, bool) {
	const limit = MaxGenNodes + 1
	mul := func(x, y int) int {
		if x > 0 && y > limit/x {
			return limit
		}
		return x * y
	}
	switch name {
	case "minimal":
		return 3, true
	case "single":
		return a[0] + 1, a[0] < limit
	case "linear":
		return mul(a[0], a[1]+1), true
	case "tree":
		total, level := 0, 1
		for i := 0; i <= a[0] && total < limit; i++ {
			total += level
			level = mul(level, a[1])
		}
		return min(total, limit), true
	case "dumbbell":
		return mul(a[0], 2) + 2, a[0] < limit
	case "wifi":
		return a[0] + 1, a[0] < limit
	}
	return 0, false
}

// genDoc accumulates generated hosts and switches (hosts are listed first
// in the Spec so they are addressed h1=.1, h2=.2, ...).
type genDoc struct {
	doc      *rawDoc
	hosts    []*rawNode
	switches []*rawNode
}

func (g *genDoc) host(name string) string {
	g.hosts = append(g.hosts, &rawNode{name: name, kind: KindHost})
	return name
}

func (g *genDoc) switch_(i int) string {
	name := "s" + strconv.Itoa(i)
	g.switches = append(g.switches, &rawNode{name: name, kind: KindSwitch})
	return name
}

func (g *genDoc) link(a, b string) {
	i := len(g.doc.links)
	g.doc.links = append(g.doc.links, &rawLink{
		loc:  loc{path: "links[" + strconv.Itoa(i) + "]"},
		ends: [2]rawEnd{{node: a}, {node: b}},
	})
}

func (g *genDoc) single(k int) {
	s := g.switch_(1)
	for h := 1; h <= k; h++ {
		g.link(g.host("h"+strconv.Itoa(h)), s)
	}
}

func (g *genDoc) linear(k, n int) {
	name := func(i, j int) string {
		if n == 1 {
			return "h" + strconv.Itoa(i)
		}
		return "h" + strconv.Itoa(j) + "s" + strconv.Itoa(i)
	}
	// Mininet sorts hosts naturally (h1s1, h1s2, ..., h2s1), which is
	// also its address order.
	for j := 1; j <= n; j++ {
		for i := 1; i <= k; i++ {
			g.host(name(i, j))
		}
	}
	last := ""
	for i := 1; i <= k; i++ {
		s := g.switch_(i)
		for j := 1; j <= n; j++ {
			g.link(name(i, j), s)
		}
		if last != "" {
			g.link(s, last)
		}
		last = s
	}
}

func (g *genDoc) tree(depth, fanout int) {
	hostNum, switchNum := 1, 1
	var add func(depth int) string
	add = func(depth int) string {
		if depth == 0 {
			h := g.host("h" + strconv.Itoa(hostNum))
			hostNum++
			return h
		}
		s := g.switch_(switchNum)
		switchNum++
		for i := 0; i < fanout; i++ {
			child := add(depth - 1)
			g.link(s, child)
		}
		return s
	}
	add(depth)
}

func (g *genDoc) dumbbell(n int) {
	s1, s2 := g.switch_(1), g.switch_(2)
	g.link(s1, s2)
	for i := 1; i <= 2*n; i++ {
		s := s1
		if i > n {
			s = s2
		}
		g.link(g.host("h"+strconv.Itoa(i)), s)
	}
}

// wifi: ap1 and stations sta1..staN; --link shapes each wireless hop (the
// file-level link defaults do not reach wireless hops, so the generator
// puts them on each station).
func (g *genDoc) wifi(n int, ssid string) {
	for i := 1; i <= n; i++ {
		w := &rawWiFi{ap: "ap1"}
		if !g.doc.defLink.empty() {
			w.params, w.hasLink = g.doc.defLink, true
		}
		g.hosts = append(g.hosts, &rawNode{name: "sta" + strconv.Itoa(i), kind: KindHost, wifiKind: kindStation, wifi: w})
	}
	g.switches = append(g.switches, &rawNode{name: "ap1", kind: KindSwitch, wifiKind: kindAP,
		wifi: &rawWiFi{isAP: true, ssid: ssid, mode: WiFiModeN, channel: 1}})
}
