// dumbbell: the ns-3 reference for emuctl's wired bottleneck suites
// (bufferbloat; cc-mlo's single-link cases). Every flow has its own
// sender and receiver host on unshaped links to the two ends of a path
// of shaped hops:
//
//   s1, s2, ... --+                                          +-- d1, d2, ...
//                 n0 ==(hop 1)== n1 ==(hop 2)== ... == nk
//
// Each hop is rate/delay/queue in both directions, as a lab link with
// rate, delay and queue. Flows are bulk TCP (a congestion control each)
// or constant-rate UDP with one-way delays. Prints one JSON line with the
// metrics the suites use.
//
// Written for emuctl against the ns-3 3.37 API (Debian libns3-dev); it
// contains no ns-3 source. README.md next to it says what each figure
// means and which ns-3 defaults it keeps or changes.

// ns3-libs: point-to-point internet applications traffic-control network core

#include "tcp-ref.h"

#include "ns3/point-to-point-module.h"

using namespace ns3;
using namespace emuctl;

namespace
{

std::vector<std::string>
Split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep))
    {
        if (!cur.empty())
        {
            out.push_back(cur);
        }
    }
    return out;
}

struct Hop
{
    double bps;
    double delay;
    uint32_t queue;
};

// Hops reads "10mbit/5ms/50,8mbit/0ms/60"; "none" stands for no hop.
std::vector<Hop>
Hops(const std::string& path)
{
    std::vector<Hop> out;
    for (const auto& h : Split(path, ','))
    {
        if (h == "none")
        {
            continue;
        }
        auto f = Split(h, '/');
        if (f.size() != 3)
        {
            Fail("--path: a hop is rate/delay/queue (10mbit/5ms/50), got \"" + h + "\"");
        }
        int q = std::atoi(f[2].c_str());
        if (q <= 0)
        {
            Fail("--path: queue of \"" + h + "\" must be a number of packets > 0");
        }
        out.push_back({ParseRate(f[0]), ParseSeconds(f[1]), uint32_t(q)});
    }
    if (out.empty())
    {
        Fail("--path: no hop");
    }
    return out;
}

struct FlowSpec
{
    std::string name;
    std::string proto; // tcp | udp
    std::string cc;    // tcp
    double bps = 0;    // udp
    uint32_t size = 0; // udp payload
};

// Flows reads "bulk:tcp:cubic,voice:udp:32kbit:160".
std::vector<FlowSpec>
Flows(const std::string& spec)
{
    std::vector<FlowSpec> out;
    for (const auto& f : Split(spec, ','))
    {
        auto p = Split(f, ':');
        if (p.size() == 3 && p[1] == "tcp")
        {
            out.push_back({p[0], "tcp", p[2]});
        }
        else if (p.size() == 4 && p[1] == "udp")
        {
            int size = std::atoi(p[3].c_str());
            if (size < 12)
            {
                Fail("--flows: a UDP payload carries a 12-byte sequence/timestamp header: size >= 12");
            }
            out.push_back({p[0], "udp", "", ParseRate(p[2]), uint32_t(size)});
        }
        else
        {
            Fail("--flows: name:tcp:CC or name:udp:RATE:SIZE, got \"" + f + "\"");
        }
    }
    if (out.empty())
    {
        Fail("--flows: no flow");
    }
    return out;
}

void
SetQueue(Ptr<NetDevice> d, uint32_t packets)
{
    DynamicCast<PointToPointNetDevice>(d)->GetQueue()->SetMaxSize(
        QueueSize(QueueSizeUnit::PACKETS, packets));
}

// HopCounters counts the forward direction of one hop.
struct HopCounters
{
    uint64_t in = 0;
    uint64_t drops = 0;
    uint32_t peak = 0;
};

void
CountIn(HopCounters* c, Ptr<const Packet>)
{
    c->in++;
}

void
CountDrop(HopCounters* c, Ptr<const Packet>)
{
    c->in++;
    c->drops++;
}

void
Peak(HopCounters* c, uint32_t, uint32_t now)
{
    c->peak = std::max(c->peak, now);
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string path = "10mbit/5ms/100";
    std::string flows = "bulk:tcp:cubic";
    double simTime = 10;
    double warmup = 2;
    double interval = 0.1;
    uint32_t seed = 1;
    uint32_t run = 1;
    uint32_t segment = 1448;
    uint32_t sndBuf = 4 << 20;
    uint32_t rcvBuf = 6 << 20;
    uint32_t first = 0;

    CommandLine cmd(__FILE__);
    cmd.AddValue("path", "shaped hops, rate/delay/queue, comma-separated (none: no hop)", path);
    cmd.AddValue("flows", "name:tcp:CC or name:udp:RATE:SIZE, comma-separated", flows);
    cmd.AddValue("first", "run only the first N of --flows (0: all)", first);
    cmd.AddValue("time", "seconds the flows run", simTime);
    cmd.AddValue("warmup", "seconds before the steady window", warmup);
    cmd.AddValue("interval", "sampling interval of srtt and cwnd, seconds", interval);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.AddValue("run", "RNG run (repetition)", run);
    cmd.AddValue("segment", "TcpSocket::SegmentSize", segment);
    cmd.AddValue("sndbuf", "TcpSocket::SndBufSize, bytes", sndBuf);
    cmd.AddValue("rcvbuf", "TcpSocket::RcvBufSize, bytes", rcvBuf);
    cmd.Parse(argc, argv);

    std::vector<Hop> hops = Hops(path);
    std::vector<FlowSpec> specs = Flows(flows);
    if (first > 0 && first < specs.size())
    {
        specs.resize(first);
    }
    if (simTime <= warmup || warmup < 0 || interval <= 0)
    {
        Fail("need --time > --warmup >= 0 and --interval > 0");
    }

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));

    NodeContainer path_nodes;
    path_nodes.Create(hops.size() + 1);
    NodeContainer senders;
    senders.Create(specs.size());
    NodeContainer receivers;
    receivers.Create(specs.size());
    NodeContainer all(path_nodes, senders, receivers);
    InternetStackHelper stack;
    stack.Install(all);
    Ipv4AddressHelper addr;
    int subnet = 1;
    auto assign = [&](NetDeviceContainer d) {
        std::ostringstream base;
        base << "10." << (subnet / 250) << "." << (subnet % 250) << ".0";
        subnet++;
        addr.SetBase(base.str().c_str(), "255.255.255.0");
        return addr.Assign(d);
    };

    std::vector<HopCounters> counters(hops.size());
    std::vector<NetDeviceContainer> hopDevs;
    for (size_t i = 0; i < hops.size(); i++)
    {
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", DataRateValue(FrameRate(hops[i].bps)));
        p2p.SetChannelAttribute("Delay", TimeValue(Seconds(hops[i].delay)));
        NetDeviceContainer d = p2p.Install(path_nodes.Get(i), path_nodes.Get(i + 1));
        SetQueue(d.Get(0), hops[i].queue);
        SetQueue(d.Get(1), hops[i].queue);
        assign(d);
        hopDevs.push_back(d);
    }
    // Hosts' links: unshaped (10 Gbit/s, no delay, deep queues).
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(FrameRate(10e9)));
    access.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    std::vector<Ipv4Address> dst(specs.size());
    for (size_t i = 0; i < specs.size(); i++)
    {
        NetDeviceContainer a = access.Install(senders.Get(i), path_nodes.Get(0));
        SetQueue(a.Get(0), 100000);
        SetQueue(a.Get(1), 100000);
        assign(a);
        NetDeviceContainer b = access.Install(path_nodes.Get(hops.size()), receivers.Get(i));
        SetQueue(b.Get(0), 100000);
        SetQueue(b.Get(1), 100000);
        dst[i] = assign(b).GetAddress(1);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    RemoveQueueDiscs(all);
    // A full device queue stops it; the traffic-control layer then drops
    // (TcDrop): the hop's drop-tail queue. Only a hop's forward device can
    // fill on its node.
    for (size_t i = 0; i < hops.size(); i++)
    {
        Trace(hopDevs[i].Get(0), "MacTx", MakeBoundCallback(&CountIn, &counters[i]));
        Trace(path_nodes.Get(i)->GetObject<TrafficControlLayer>(),
              "TcDrop",
              MakeBoundCallback(&CountDrop, &counters[i]));
        Trace(DynamicCast<PointToPointNetDevice>(hopDevs[i].Get(0))->GetQueue(),
              "PacketsInQueue",
              MakeBoundCallback(&Peak, &counters[i]));
    }

    const double start = 0.01;
    const double end = start + simTime;
    std::vector<std::unique_ptr<TcpFlow>> tcp;
    std::vector<std::unique_ptr<UdpStream>> udp;
    std::vector<std::string> order;
    for (size_t i = 0; i < specs.size(); i++)
    {
        uint16_t port = 5201 + i;
        const FlowSpec& s = specs[i];
        order.push_back(s.name);
        if (s.proto == "tcp")
        {
            PacketSinkHelper sh("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
            ApplicationContainer sa = sh.Install(receivers.Get(i));
            sa.Start(Seconds(0));
            auto f = std::make_unique<TcpFlow>();
            f->name = s.name;
            f->cc = s.cc;
            f->Start(senders.Get(i),
                     DynamicCast<PacketSink>(sa.Get(0)),
                     InetSocketAddress(dst[i], port),
                     start);
            Simulator::Schedule(Seconds(start + warmup), &TcpFlow::Mark, f.get());
            for (double t = start + interval; t <= end + 1e-9; t += interval)
            {
                Simulator::Schedule(Seconds(t), &TcpFlow::Sample, f.get(), t >= start + warmup - 1e-9);
            }
            tcp.push_back(std::move(f));
        }
        else
        {
            auto u = std::make_unique<UdpStream>();
            u->name = s.name;
            u->Start(senders.Get(i), receivers.Get(i), dst[i], port, s.bps, s.size, start, end);
            u->SetWindow(start + warmup, end);
            udp.push_back(std::move(u));
        }
    }

    Simulator::Stop(Seconds(end));
    double cpu0 = CpuSeconds();
    Simulator::Run();
    double cpu = CpuSeconds() - cpu0;

    Obj fj;
    size_t ti = 0;
    size_t ui = 0;
    for (size_t i = 0; i < specs.size(); i++)
    {
        if (specs[i].proto == "tcp")
        {
            fj.Add(specs[i].name, tcp[ti++]->Json(start, start + warmup, end));
        }
        else
        {
            fj.Add(specs[i].name, udp[ui++]->Json());
        }
    }
    Obj lj;
    for (size_t i = 0; i < hops.size(); i++)
    {
        Obj h;
        h.Add("rate_bps", hops[i].bps).Add("delay_s", hops[i].delay);
        h.Add("queue", double(hops[i].queue));
        h.Add("in", double(counters[i].in)).Add("queue_drops", double(counters[i].drops));
        h.Add("loss_drops", 0.0).Add("out", double(counters[i].in - counters[i].drops));
        h.Add("queue_peak", double(counters[i].peak));
        lj.Add("hop" + std::to_string(i + 1), h);
    }
    Obj cfg;
    cfg.Add("version", "3.37").Add("segment", double(segment));
    cfg.Add("link_rate_scale", 1502.0 / 1514.0);
    cfg.Add("sndbuf", double(sndBuf)).Add("rcvbuf", double(rcvBuf));
    cfg.Add("min_rto_s", 1.0).Add("delack_count", 2.0).Add("delack_timeout_ms", 200.0);
    cfg.Add("recovery", "prr").Add("sack", true).Add("timestamps", true);

    Obj out;
    out.Add("program", "dumbbell").Add("path", path).Add("time_s", simTime);
    out.Add("warmup_s", warmup).Add("seed", double(seed)).Add("run", double(run));
    // Only TcpBbr draws random numbers here (its ProbeBW cycle start): a
    // path of CUBIC, Reno and UDP flows gives the same result for every seed.
    bool deterministic = true;
    for (const auto& s : specs)
    {
        deterministic = deterministic && s.cc != "bbr";
    }
    out.Add("deterministic", deterministic);
    out.Add("flows", fj).Add("links", lj).Add("ns3", cfg).Add("cpu_s", cpu);
    std::cout << out.String() << std::endl;
    Simulator::Destroy();
    return 0;
}
