package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"time"

	"github.com/emuctl/emuctl/capture"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/traffic"
)

// method is one operation of the API: what the lab library does, with
// its params decoded strictly.
type method struct {
	run    func(ctx context.Context, s *session, raw json.RawMessage) (any, error)
	params reflect.Type // what its params decode into (schema_test.go)
}

// handle makes a method of a typed handler.
func handle[P any](name string, fn func(ctx context.Context, s *session, p P) (any, error)) method {
	return method{params: reflect.TypeFor[P](), run: func(ctx context.Context, s *session, raw json.RawMessage) (any, error) {
		p, err := decode[P](name, raw)
		if err != nil {
			return nil, err
		}
		return fn(ctx, s, p)
	}}
}

var methods = map[string]method{}

// MethodNames lists the methods served, sorted (schema.json has the same).
func MethodNames() []string { return slices.Sorted(maps.Keys(methods)) }

// onLab is the params every lab method takes: the lab it acts on.
type onLab struct {
	Lab string `json:"lab,omitempty"`
}

// seconds is a duration in seconds on the wire.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func init() {
	m := map[string]method{
		"methods": handle("methods", func(ctx context.Context, s *session, p struct{}) (any, error) { return MethodNames(), nil }),
		"schema":  handle("schema", func(ctx context.Context, s *session, p struct{}) (any, error) { return json.RawMessage(Schema), nil }),
		"labs":    handle("labs", labsMethod),
		"up":      handle("up", upMethod),
		"open": handle("open", func(ctx context.Context, s *session, p onLab) (any, error) {
			l, err := s.open(p.Lab)
			if err != nil {
				return nil, err
			}
			s.use(l.Name())
			return labView(l)
		}),
		"down": handle("down", func(ctx context.Context, s *session, p onLab) (any, error) {
			l, err := s.open(p.Lab)
			if err != nil {
				return nil, err
			}
			return nil, l.Down()
		}),
		"nodes": handle("nodes", func(ctx context.Context, s *session, p onLab) (any, error) {
			l, err := s.open(p.Lab)
			if err != nil {
				return nil, err
			}
			return l.Spec().Nodes, nil
		}),
		"links": handle("links", func(ctx context.Context, s *session, p onLab) (any, error) {
			l, err := s.open(p.Lab)
			if err != nil {
				return nil, err
			}
			return l.Links()
		}),
		"machines": handle("machines", func(ctx context.Context, s *session, p onLab) (any, error) {
			l, err := s.open(p.Lab)
			if err != nil {
				return nil, err
			}
			out := map[string]any{"machines": []topo.Machine{}, "nodes": map[string]string{}}
			if c := l.Spec().Cluster; c != nil {
				out["machines"], out["nodes"] = c.Machines, c.Nodes
			}
			return out, nil
		}),
		"topology": handle("topology", func(ctx context.Context, s *session, p onLab) (any, error) {
			l, err := s.open(p.Lab)
			if err != nil {
				return nil, err
			}
			doc, err := l.Topology()
			return map[string]string{"yaml": string(doc)}, err
		}),
		"node.add":        handle("node.add", nodeAdd),
		"node.del":        handle("node.del", nodeDel),
		"link.add":        handle("link.add", linkAdd),
		"link.del":        handle("link.del", linkDel),
		"link.set":        handle("link.set", linkSet),
		"link.up":         handle("link.up", func(ctx context.Context, s *session, p linkRef) (any, error) { return nil, linkState(s, p, true) }),
		"link.down":       handle("link.down", func(ctx context.Context, s *session, p linkRef) (any, error) { return nil, linkState(s, p, false) }),
		"exec":            handle("exec", execMethod),
		"shell.open":      handle("shell.open", shellOpen),
		"shell.cmd":       handle("shell.cmd", shellCmd),
		"shell.send":      handle("shell.send", shellSend),
		"shell.wait":      handle("shell.wait", shellWait),
		"shell.interrupt": handle("shell.interrupt", shellInterrupt),
		"shell.close":     handle("shell.close", shellClose),
		"tty.open":        handle("tty.open", ttyOpen),
		"tty.write":       handle("tty.write", ttyWrite),
		"tty.resize":      handle("tty.resize", ttyResize),
		"tty.close":       handle("tty.close", ttyClose),
		"ping":            handle("ping", pingMethod),
		"pingall":         handle("pingall", pingAllMethod),
		"traffic":         handle("traffic", trafficMethod),
		"verify": handle("verify", func(ctx context.Context, s *session, p onLab) (any, error) {
			l, err := s.open(p.Lab)
			if err != nil {
				return nil, err
			}
			return l.Verify(ctx, lab.VerifyOptions{})
		}),
		"verify.built": handle("verify.built", func(ctx context.Context, s *session, p onLab) (any, error) {
			l, err := s.open(p.Lab)
			if err != nil {
				return nil, err
			}
			return l.VerifyBuilt()
		}),
		"wifi.show":          handle("wifi.show", wifiShow),
		"wifi.move":          handle("wifi.move", wifiMove),
		"wifi.pair":          handle("wifi.pair", wifiPair),
		"wifi.mobility":      handle("wifi.mobility", wifiMobility),
		"capture":            handle("capture", captureMethod),
		"events.subscribe":   handle("events.subscribe", subscribe),
		"events.unsubscribe": handle("events.unsubscribe", unsubscribe),
		"test":               handle("test", testMethod),
	}
	for k, v := range m {
		methods[k] = v
	}
}

type labRow struct {
	Lab    string `json:"lab"`
	Status string `json:"status"`
	Nodes  int    `json:"nodes"`
	Links  int    `json:"links"`
}

func labsMethod(ctx context.Context, s *session, p struct{}) (any, error) {
	labs, err := emu.Labs()
	if err != nil {
		return nil, err
	}
	out := []labRow{}
	for _, st := range labs {
		r := labRow{Lab: st.Lab, Status: st.Status}
		if st.Spec != nil {
			r.Nodes, r.Links = len(st.Spec.Nodes), len(st.Spec.Links)
		}
		out = append(out, r)
	}
	return out, nil
}

type upParams struct {
	File      string `json:"file,omitempty"`
	Document  string `json:"document,omitempty"`
	Generator string `json:"generator,omitempty"`
	Name      string `json:"name,omitempty"`
	Switch    string `json:"switch,omitempty"`
	Link      string `json:"link,omitempty"`
	// AllowExternal is up's --allow-external: real adapters, kind root nodes.
	AllowExternal bool `json:"allow_external,omitempty"`
}

func upMethod(ctx context.Context, s *session, p upParams) (any, error) {
	var src lab.Source
	n := 0
	if p.File != "" {
		src, n = lab.File(p.File), n+1
	}
	if p.Document != "" {
		src, n = lab.YAML("document", []byte(p.Document)), n+1
	}
	if p.Generator != "" {
		src, n = lab.Generator(p.Generator, topo.GenOptions{Name: p.Name, Switch: p.Switch, Link: p.Link}), n+1
	}
	if n != 1 {
		return nil, newError(CodeInvalidParams, "up: give exactly one of file, document (YAML text) or generator (\"tree,2,2\")")
	}
	opt := s.opt.LabOptions
	if p.Generator == "" {
		opt.Name = p.Name
	}
	opt.AllowExternal = opt.AllowExternal || p.AllowExternal
	l, err := lab.Up(ctx, src, opt)
	if err != nil {
		return nil, err
	}
	s.use(l.Name())
	return labView(l)
}

// labView is what up and open answer: the lab's name, nodes and links.
func labView(l *lab.Lab) (any, error) {
	links, err := l.Links()
	if err != nil {
		return nil, err
	}
	return map[string]any{"lab": l.Name(), "nodes": l.Spec().Nodes, "links": links}, nil
}

type nodeAddParams struct {
	onLab
	Name       string `json:"name"`
	Kind       string `json:"kind,omitempty"`
	SwitchType string `json:"switch_type,omitempty"`
	Names      string `json:"names,omitempty"` // an ovs switch's names: unique or topology
	// Node is more of the node's keys, the topology file's ({"fail_mode": "secure"}).
	Node json.RawMessage `json:"node,omitempty"`
	// AllowExternal is up's --allow-external: a node of kind root.
	AllowExternal bool `json:"allow_external,omitempty"`
	// AP and Position: a station's access point and place (kind station).
	AP       string      `json:"ap,omitempty"`
	Position *[3]float64 `json:"position,omitempty"`
}

func nodeAdd(ctx context.Context, s *session, p nodeAddParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	var opt []lab.NodeKindOption
	switch p.Kind {
	case "", "host":
	case "router":
		opt = append(opt, lab.AsRouter())
	case "switch":
		if p.Names != "" {
			if p.SwitchType != "" && p.SwitchType != topo.SwitchOVS {
				return nil, newError(CodeInvalidParams, "node.add: names is for switch_type ovs")
			}
			opt = append(opt, lab.AsOVSSwitch(p.Names))
		} else {
			opt = append(opt, lab.AsSwitch(p.SwitchType))
		}
	case "station":
		opt = append(opt, lab.AsStation(p.AP))
	case "ap":
		opt = append(opt, lab.AsAP())
	default:
		return nil, newError(CodeInvalidParams, "node.add: kind %q (valid: host, router, switch, station, ap)", p.Kind)
	}
	if p.AP != "" && p.Kind != "station" {
		return nil, newError(CodeInvalidParams, "node.add: ap is for kind station")
	}
	if p.Position != nil {
		opt = append(opt, lab.AtPosition(p.Position[0], p.Position[1], p.Position[2]))
	}
	if p.Names != "" && p.Kind != "switch" {
		return nil, newError(CodeInvalidParams, "node.add: names is for kind switch (switch_type ovs)")
	}
	if len(p.Node) > 0 && string(p.Node) != "null" {
		if p.Node[0] != '{' {
			return nil, newError(CodeInvalidParams, "node.add: node is an object of the node's keys, as the topology file writes them ({\"fail_mode\": \"secure\"})")
		}
		opt = append(opt, lab.NodeKeys(string(p.Node)))
	}
	if p.AllowExternal {
		opt = append(opt, lab.AllowExternal())
	}
	if err := l.AddNode(ctx, p.Name, opt...); err != nil {
		return nil, topo.Named(err, "node.add "+p.Name)
	}
	return map[string]any{"name": p.Name, "node": l.Spec().Node(p.Name)}, nil
}

type nameParams struct {
	onLab
	Name string `json:"name"`
}

func nodeDel(ctx context.Context, s *session, p nameParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	return nil, l.RemoveNode(ctx, p.Name)
}

type linkAddParams struct {
	onLab
	A      string              `json:"a"`
	B      string              `json:"b"`
	Params string              `json:"params,omitempty"`
	Link   map[string]any      `json:"link,omitempty"`
	Keys   map[string]string   `json:"keys,omitempty"` // lab.AddLinkKeys: rate, trace, uplink_trace, ...
	IP     map[string][]string `json:"ip,omitempty"`
	MTU    int                 `json:"mtu,omitempty"`
	Name   string              `json:"name,omitempty"`
}

func linkAdd(ctx context.Context, s *session, p linkAddParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	var opts []lab.LinkOption
	if p.Params != "" && p.Link != nil {
		return nil, newError(CodeInvalidParams, "link.add: give params (a --link string) or link (the file's keys), not both")
	}
	if p.Params != "" {
		opts = append(opts, lab.LinkString(p.Params))
	}
	if p.Link != nil {
		opts = append(opts, lab.LinkField("link", p.Link))
	}
	if p.Keys != nil {
		if p.Params != "" {
			return nil, newError(CodeInvalidParams, "link.add: give params (a --link string) or keys, not both: a --link string has no trace")
		}
		kopts, err := lab.AddLinkKeys(p.Keys)
		if err != nil {
			return nil, newError(CodeBadInput, "%s", err)
		}
		opts = append(opts, kopts...)
	}
	for node, addrs := range p.IP {
		opts = append(opts, lab.IP(node, addrs...))
	}
	if p.MTU > 0 {
		opts = append(opts, lab.MTU(p.MTU))
	}
	if p.Name != "" {
		opts = append(opts, lab.Name(p.Name))
	}
	i, err := l.AddLink(ctx, p.A, p.B, opts...)
	if err != nil {
		return nil, topo.Named(err, "link.add "+p.A+" "+p.B)
	}
	links, err := l.Links()
	if err != nil || i >= len(links) {
		return map[string]any{"index": i}, err
	}
	return links[i], nil
}

type linkRef struct {
	onLab
	Link string `json:"link"`
}

func linkDel(ctx context.Context, s *session, p linkRef) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	return nil, l.RemoveLink(ctx, p.Link)
}

func linkState(s *session, p linkRef, up bool) error {
	l, err := s.open(p.Lab)
	if err != nil {
		return err
	}
	if up {
		return l.LinkUp(p.Link)
	}
	return l.LinkDown(p.Link)
}

type linkSetParams struct {
	onLab
	Link string            `json:"link"`
	Dir  string            `json:"dir,omitempty"`
	Set  map[string]string `json:"set"`
}

func linkSet(ctx context.Context, s *session, p linkSetParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	ch, err := l.SetLinkKeys(p.Link, p.Dir, p.Set)
	if err != nil {
		return nil, err
	}
	return ch, nil
}

type execParams struct {
	onLab
	Node     string   `json:"node"`
	Argv     []string `json:"argv"`
	Stdin    string   `json:"stdin,omitempty"`
	TimeoutS float64  `json:"timeout_s,omitempty"`
}

func execMethod(ctx context.Context, s *session, p execParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	if p.TimeoutS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, seconds(p.TimeoutS))
		defer cancel()
	}
	cmd, err := l.Command(ctx, p.Node, p.Argv...)
	if err != nil {
		return nil, err
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if p.Stdin != "" {
		cmd.Stdin = bytes.NewBufferString(p.Stdin)
	}
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, err
		}
		code = ee.ExitCode()
	}
	return map[string]any{"code": code, "stdout": out.String(), "stderr": errb.String()}, nil
}

type nodeParams struct {
	onLab
	Node string `json:"node"`
}

func shellOpen(ctx context.Context, s *session, p nodeParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	sh, err := l.Shell(ctx, p.Node)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	id := s.id("sh")
	s.shells[id] = sh
	s.mu.Unlock()
	return map[string]any{"shell": id, "pid": sh.Pid(), "node": p.Node}, nil
}

type shellParams struct {
	Shell    string  `json:"shell"`
	Line     string  `json:"line,omitempty"`
	TimeoutS float64 `json:"timeout_s,omitempty"`
}

func (p shellParams) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.TimeoutS > 0 {
		return context.WithTimeout(ctx, seconds(p.TimeoutS))
	}
	return context.WithCancel(ctx)
}

func shellCmd(ctx context.Context, s *session, p shellParams) (any, error) {
	sh, err := s.shell(p.Shell)
	if err != nil {
		return nil, err
	}
	ctx, cancel := p.ctx(ctx)
	defer cancel()
	var out bytes.Buffer
	code, err := sh.Stream(ctx, p.Line, &out)
	if err != nil {
		return nil, err
	}
	return map[string]any{"output": out.String(), "code": code}, nil
}

func shellSend(ctx context.Context, s *session, p shellParams) (any, error) {
	sh, err := s.shell(p.Shell)
	if err != nil {
		return nil, err
	}
	return nil, sh.Send(p.Line)
}

func shellWait(ctx context.Context, s *session, p shellParams) (any, error) {
	sh, err := s.shell(p.Shell)
	if err != nil {
		return nil, err
	}
	ctx, cancel := p.ctx(ctx)
	defer cancel()
	out, err := sh.Wait(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"output": out}, nil
}

func shellInterrupt(ctx context.Context, s *session, p shellParams) (any, error) {
	sh, err := s.shell(p.Shell)
	if err != nil {
		return nil, err
	}
	return nil, sh.SendInt()
}

func shellClose(ctx context.Context, s *session, p shellParams) (any, error) {
	sh, err := s.shell(p.Shell)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	delete(s.shells, p.Shell)
	s.mu.Unlock()
	return nil, sh.Close()
}

type pingParams struct {
	onLab
	From  string `json:"from"`
	To    string `json:"to"`
	Count int    `json:"count,omitempty"`
}

func pingMethod(ctx context.Context, s *session, p pingParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	n := max(p.Count, 1)
	rtts := []float64{}
	lost := 0
	for k := range n {
		if k > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		rtt, err := l.Ping(ctx, p.From, p.To)
		if err != nil {
			if n == 1 || ctx.Err() != nil {
				return nil, err
			}
			lost++
			continue
		}
		rtts = append(rtts, float64(rtt)/1e6)
	}
	return map[string]any{"rtt_ms": rtts, "sent": n, "lost": lost}, nil
}

type pingAllParams struct {
	onLab
	Tries int `json:"tries,omitempty"`
}

func pingAllMethod(ctx context.Context, s *session, p pingAllParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	res, err := l.PingAll(ctx, max(p.Tries, 1))
	if err != nil {
		return nil, err
	}
	lost := 0
	for _, r := range res {
		if !r.OK {
			lost++
		}
	}
	pct := 0.0
	if len(res) > 0 {
		pct = 100 * float64(lost) / float64(len(res))
	}
	return map[string]any{"results": res, "sent": len(res), "lost": lost, "dropped_pct": pct}, nil
}

type trafficParams struct {
	onLab
	// Flows are flow mappings with the keys of a flows file (from, to,
	// proto, cc, duration, parallel, reverse, rate, probe, ...).
	Flows    []map[string]any `json:"flows"`
	Defaults map[string]any   `json:"defaults,omitempty"`
	Capture  []string         `json:"capture,omitempty"`
}

func trafficMethod(ctx context.Context, s *session, p trafficParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	doc := map[string]any{"flows": p.Flows}
	if p.Defaults != nil {
		doc["defaults"] = p.Defaults
	}
	if len(p.Capture) > 0 {
		doc["capture"] = p.Capture
	}
	b, _ := json.Marshal(doc) // JSON is YAML: the flows file's decoder checks every key
	ff, err := traffic.ParseFlows("traffic", b)
	if err != nil {
		return nil, err
	}
	opt := lab.TrafficOptions{Captures: ff.Captures}
	if len(ff.Captures) > 0 {
		// the captures stay for the caller, named by absolute paths in
		// the result (a run without captures leaves no directory behind)
		dir, err := os.MkdirTemp("", "emuctl-api-traffic")
		if err != nil {
			return nil, err
		}
		opt.CaptureDir = dir
	}
	return l.TrafficWith(ctx, opt, ff.Flows...)
}

func wifiShow(ctx context.Context, s *session, p onLab) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	st, err := l.WiFiStatus()
	if err != nil {
		return nil, err
	}
	out := map[string]any{"nodes": st}
	if ms, err := l.MediumStats(); err == nil {
		out["medium"] = ms
	}
	return out, nil
}

type moveParams struct {
	onLab
	Node string     `json:"node"`
	Pos  [3]float64 `json:"pos"`
}

func wifiMove(ctx context.Context, s *session, p moveParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	return nil, l.MoveStation(p.Node, p.Pos)
}

type pairParams struct {
	onLab
	A    string   `json:"a"`
	B    string   `json:"b"`
	SNR  *float64 `json:"snr_db,omitempty"`
	Loss *float64 `json:"loss,omitempty"`
}

func wifiPair(ctx context.Context, s *session, p pairParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	return nil, l.SetPair(p.A, p.B, p.SNR, p.Loss)
}

type mobilityParams struct {
	onLab
	// Action: "" (show), "start" (Node's path over) or "stop" (Node, ""
	// every moving node).
	Action string `json:"action,omitempty"`
	Node   string `json:"node,omitempty"`
}

func wifiMobility(ctx context.Context, s *session, p mobilityParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	switch p.Action {
	case "":
	case "start":
		if p.Node == "" {
			return nil, &Error{Code: CodeBadInput, Message: "wifi.mobility: start needs node: the node whose path to start", Data: &ErrorData{Kind: codeKinds[CodeBadInput]}}
		}
		err = l.StartMobility(p.Node)
	case "stop":
		err = l.StopMobility(p.Node)
	default:
		return nil, &Error{Code: CodeBadInput, Message: fmt.Sprintf("wifi.mobility: action %q: want start, stop or none (show)", p.Action), Data: &ErrorData{Kind: codeKinds[CodeBadInput]}}
	}
	if err != nil {
		return nil, err
	}
	return l.Mobility()
}

type captureParams struct {
	onLab
	Node      string  `json:"node"`
	Iface     string  `json:"iface,omitempty"`
	File      string  `json:"file"`
	Count     int     `json:"count,omitempty"`
	DurationS float64 `json:"duration_s,omitempty"`
	Snaplen   int     `json:"snaplen,omitempty"`
}

func captureMethod(ctx context.Context, s *session, p captureParams) (any, error) {
	l, err := s.open(p.Lab)
	if err != nil {
		return nil, err
	}
	if p.File == "" || p.Count == 0 && p.DurationS == 0 {
		return nil, newError(CodeInvalidParams, "capture: give file, and count or duration_s (a capture over the API ends by itself)")
	}
	f, err := os.Create(p.File)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := emu.ReadState(l.Name())
	if err != nil {
		return nil, err
	}
	stats, err := emu.CaptureNode(ctx, st, p.Node, p.Iface, capture.Options{Count: p.Count, Duration: seconds(p.DurationS), Snaplen: p.Snaplen}, f)
	if err != nil {
		return nil, err
	}
	return map[string]any{"file": p.File, "stats": stats}, nil
}
