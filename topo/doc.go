// Package topo owns emuctl's topology files: the YAML schema, strict
// decoding with positions, validation, defaults, address allocation,
// routing, and the Mininet-style generators. Its output is a resolved,
// deterministic Spec: pure data that emu turns into kernel objects.
//
// topo never touches the host: no syscalls, no netlink, no files other
// than the one LoadFile is asked to read.
//
// # Entry points
//
//   - [LoadFile] and [Load] decode a topology file and return a [Spec], or
//     [Errors] listing every problem, sorted by position, each rendered as
//     "file:line:col: path: what is wrong (what would be valid)".
//   - [Generate] builds "minimal", "single,K", "linear,K", "tree,DEPTH,FANOUT"
//     and "dumbbell,N" labs like Mininet's --topo.
//   - [ParseLinkParams] and [ParseQueue] parse the --link string and a
//     queue limit; its values are typed and parsed by package units
//     (units.ParseBitRate, ParseDelay, ParsePercent, ParseGilbertElliott).
//
// # Schema v1
//
// A topology is one YAML mapping. Unknown keys, duplicate keys, wrong types
// and out-of-range values are errors; anchors, aliases and << merges work,
// and top-level keys starting with "x-" are ignored (a place for anchors).
// Every key, with a complete example (testdata/good/complete.yaml; the same
// text is in SCHEMA.md with the value syntax and resolution rules):
//
//	version: 1                 # optional; only 1 is valid
//	name: demo                 # lab name: [a-z0-9][a-z0-9_-]{0,31}, no dots
//	                           #   (namespaces are "<lab>.<node>"); default: the
//	                           #   file name, lower-cased and sanitised
//	addressing:                # optional
//	  pool: 10.0.0.0/16        # IPv4 pool for automatic subnets (default 10.0.0.0/8)
//	  prefix: 24               # subnet size per L2 segment (default 24; grown
//	                           #   automatically when a segment has more interfaces)
//	  p2p_prefix: 30           # subnet size for segments with exactly two
//	                           #   interfaces (default 30; 31 allowed)
//	  pool6: fd00::/48         # optional: every segment also gets an IPv6 /64
//	  auto: true               # default true; false: interfaces without explicit
//	                           #   addresses stay unaddressed
//	routing: auto              # auto (default): static routes across routers | none
//	defaults:                  # optional lab-wide defaults
//	  switch: linux-bridge     # type of switch nodes: linux-bridge | ovs
//	  link: {rate: 100mbit, delay: 1ms}    # every link; a link's own keys win
//	  tcp: {congestion_control: cubic}     # every host and router; node keys win
//	nodes:                     # name -> node, in file order
//	  h1:                      # [a-zA-Z][a-zA-Z0-9_-]*, at most 64 bytes, not "fabric"
//	    kind: host             # host (default) | router (forwards IP) | switch
//	    routes:                # hosts and routers
//	      - default via 10.0.0.254                   # "<dst>|default [via <ip>] [dev <iface>]"
//	      - 192.168.50.0/24 via 10.0.0.254 dev h1-eth0
//	      - {to: 192.168.60.0/24, via: 10.0.0.254}   # mapping form: to, via, dev
//	    sysctls: {net.ipv4.tcp_sack: 0, net/ipv4/tcp_ecn: 1}   # net.* only
//	    env: {FOO: bar}        # environment of start commands, exec and shell
//	    start: ["python3 -m http.server 80"]   # run with /bin/sh -c after up
//	    tcp:                   # hosts and routers
//	      congestion_control: bbr
//	      sack: true
//	      timestamps: true
//	      window_scaling: true
//	      ecn: 1               # 0, 1, 2, true (= 1) or false (= 0)
//	      no_metrics_save: true
//	      rmem: [4096, 131072, 6291456]        # min <= default <= max, bytes
//	      wmem: [4096, 16384, 4194304]
//	      recovery: 1          # tcp_recovery bits, 0..7
//	      early_retrans: 3     # 0..4
//	      backlog_ack_defer: false  # Linux >= 6.7: one ACK per backlog batch (default true)
//	    mptcp:                 # hosts and routers
//	      enabled: true
//	      path_manager: kernel # kernel | userspace
//	      scheduler: default
//	      limits: {subflows: 2, add_addr_accepted: 2}   # 0..8 each
//	      endpoints:           # address and/or interface of this node
//	        - {address: 10.0.0.1, flags: [signal], id: 1, port: 0}
//	        - {interface: h1-eth1, flags: [subflow, backup]}   # flags: signal subflow backup fullmesh
//	      policy_routing: true
//	    interfaces:            # existing host interfaces moved into the node
//	      eth9: {external: enp3s0, force: false, ip: 192.168.7.10/24}
//	  h2: {}                   # a host with every default
//	  s1: {kind: switch, type: linux-bridge, stp: false}
//	  s2:
//	    kind: switch
//	    type: ovs
//	    datapath: netdev       # ovs: kernel | netdev (default: kernel when the module is loaded)
//	    fail_mode: standalone  # ovs: standalone (default; L2 learning) | secure
//	    controller: [tcp:127.0.0.1:6653]   # ovs: tcp:IP[:PORT] | ptcp:PORT[:IP] | unix:PATH
//	    protocols: [OpenFlow13]            # ovs: OpenFlow10 .. OpenFlow15
//	    rstp: false            # ovs: rapid spanning tree (or stp: true)
//	    names: unique          # ovs: unique (default; hashed device names, s2.x2mqa) | topology (s2, s2-eth1)
//	    ports:                 # ovs: per port, by interface name
//	      s2-eth2:
//	        qos:               # linux-htb on the port's egress
//	          max_rate: 10mbit
//	          queue_limit: 100 # packets in the FIFO under each queue
//	          queues: [{min_rate: 1mbit, max_rate: 10mbit, priority: 1, burst: 15kB}]
//	        ingress_policing_rate: 100mbit
//	        ingress_policing_burst: 1MB
//	    interfaces:            # on a switch: a host interface attached as a port
//	      uplink: {external: eth1}
//	  r1: {kind: router}
//	  h3: {kind: host}
//	links:
//	  - endpoints: [h1, s1]               # "node" or "node:iface"
//	    ip: {h1: 10.0.0.1/24}             # per node on this link: one address or a list
//	  - endpoints: ["h2:eth0", s1]        # an explicit interface name
//	    link: {rate: 10mbit, delay: 5ms, jitter: 1ms, loss: 1%, queue: 100}
//	  - endpoints: [r1, s1]
//	    ip: {r1: [10.0.0.254/24, "fd00:0:0:1::fe/64"]}
//	  - endpoints: [h1, r1]
//	    mtu: 9000                         # 68..65535, default 1500
//	    link:                             # symmetric keys are defaults for both directions
//	      queue: 2bdp
//	      backend: auto                   # auto (default) | kernel (tc only) | userspace (link engine)
//	      a->b: {rate: 10mbit}            # a = endpoints[0], b = endpoints[1]
//	      b->a: {rate: 1mbit, delay: 20ms, queue: {discipline: codel, target: 5ms, ecn: true}}   # or "codel target 5ms ecn"
//	  - endpoints: [r1, s2]
//	    link:
//	      delay: 10ms
//	      jitter: 2ms                     # needs delay
//	      jitter_dist: normal             # uniform (default) | normal | pareto
//	      reorder: false                  # false (default): jitter keeps packet order
//	      ge: {p: 1%, r: 25%, bad_loss: 100%, good_loss: 0%}   # burst loss (instead of loss:)
//	      duplicate: 0.1%
//	      corrupt: 0.01%
//	  - endpoints: [h3, s2]
//	    link: "rate=1gbit,delay=100us"    # the --link string syntax works too
//
// Values: rates take tc bit units (10mbit, 1.5gbit, 100kbit, 10M; byte
// units such as mbps and bare numbers are refused as ambiguous), 1 kbit/s
// to 100 Gbit/s. Delay and jitter are Go durations or tc spellings (5ms,
// 250us, 5msec), 0 to under 60s; jitter needs a delay. jitter_dist
// (uniform, the default; normal; pareto) and reorder (false, the default,
// keeps packet order) qualify the jitter and need it, except as lab-wide
// policy in defaults.link. Loss, duplicate and corrupt are "1%" or a plain
// number that also means percent. ge is Gilbert-Elliott burst loss,
// {p, r, bad_loss, good_loss} or "p/r[/bad_loss[/good_loss]]" in percent:
// netem's "loss gemodel p r 1-h 1-k" with 1-h = bad_loss (default 100%)
// and 1-k = good_loss (default 0%); it excludes loss in the same mapping,
// and either replaces the other at a more specific level. A queue is
// packets (100), bytes (150kB, 64KiB) or a bandwidth-delay multiple (2bdp,
// needing rate and delay), or a discipline: {discipline: droptail |
// drophead | codel | fq_codel | pie | red | cake, limit, ecn, target,
// interval, flows, quantum, tupdate, alpha, beta, min, max, probability,
// weight, gentle}, each discipline taking only its own parameters, or
// tc's words as a string ("fq_codel limit 1000 ecn"). backend (auto, the default; kernel; userspace)
// chooses netem/tc or the userspace link engine per link, not per
// direction; defaults.link.backend sets it lab-wide. The --link string
// takes the same keys: "delay=5ms,jitter=1ms,jitter_dist=normal,ge=1%/25%".
//
// Switches of type ovs take datapath, fail_mode, controller, protocols,
// rstp, names and ports (per-interface qos with max_rate, queue_limit and
// queues, and ingress policing); they are decoded in decode_ovs.go,
// resolved into Node.OVS with defaults filled in, and documented in
// SCHEMA.md ("Open vSwitch switches"). On any other switch they are
// errors. names: topology makes the switch's name and its interfaces'
// names device names in the root namespace, so the switch's name must
// then fit IFNAMSIZ and no two devices of the lab may share a name;
// whether the host already has such a device is emu's to check at up.
//
// # Resolution
//
// Interfaces are named <node>-eth<N> unless given (N from 0 on hosts and
// routers, from 1 on switches, counting the node's links in file order). An
// L2 segment is a connected group of switches with the host and router
// interfaces on it, or a link between two non-switch nodes. Each segment
// gets one subnet: that of its explicit addresses, else the next free one
// from the pool (p2p_prefix for two interfaces, prefix grown to fit
// otherwise, plus a /64 from pool6 when set); unaddressed interfaces get the
// next free host addresses in node then interface order. With routing: auto
// and at least one router, each host and router gets a route to every
// subnet it is not on, via the first router of a shortest path; a host
// whose remote subnets share one gateway gets a default route instead.
// Switch cycles need stp: true (or rstp: true on an ovs switch) on one of
// their switches.
package topo
