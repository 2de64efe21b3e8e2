// sack-reno: the ns-3 reference for emuctl's sack-reno suite (hop=wired).
// One bulk TCP flow from a station to a server through an access point,
// as the suite's wired stand-in builds it:
//
//   sta --(2 ms each way; random loss on sta->ap)-- ap --(54 Mbit/s, 100 packets)-- srv
//
// SACK on or off (ns3::TcpSocketBase::Sack on both ends), TcpLinuxReno
// by default (the increase rule of Linux's reno, which the lab runs).
// Prints one JSON line with the metrics the suite uses.
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

// LinkCounters counts what crosses one direction of a lab link, with the
// names emuctl's link engine uses.
struct LinkCounters
{
    uint64_t in = 0;          // frames offered to the direction
    uint64_t lossDrops = 0;   // dropped by the loss model
    uint64_t queueDrops = 0;  // dropped by the full queue
    uint32_t queuePeak = 0;   // largest queue length seen

    Obj Json() const
    {
        Obj o;
        o.Add("in", double(in)).Add("loss_drops", double(lossDrops));
        o.Add("queue_drops", double(queueDrops)).Add("queue_peak", double(queuePeak));
        o.Add("out", double(in - lossDrops - queueDrops));
        return o;
    }
};

LinkCounters g_staAp; // data direction, lossy
LinkCounters g_apSrv; // data direction, the bottleneck

void
CountIn(LinkCounters* c, Ptr<const Packet>)
{
    c->in++;
}

void
CountLoss(LinkCounters* c, Ptr<const Packet>)
{
    c->lossDrops++;
}

void
CountQueueDrop(LinkCounters* c, Ptr<const Packet>)
{
    c->queueDrops++;
}

void
QueueLength(LinkCounters* c, uint32_t, uint32_t now)
{
    c->queuePeak = std::max(c->queuePeak, now);
}

void
SetQueue(Ptr<NetDevice> d, uint32_t packets)
{
    Ptr<PointToPointNetDevice> p = DynamicCast<PointToPointNetDevice>(d);
    p->GetQueue()->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, packets));
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string loss = "0%";
    std::string sack = "true";
    std::string cc = "linux-reno";
    std::string rate = "54mbit";
    std::string delay = "2ms";
    uint32_t queue = 100;
    double simTime = 10;
    double warmup = 2;
    double interval = 0.1;
    uint32_t seed = 1;
    uint32_t run = 1;
    std::string minRto = "1s";      // ns-3's default; Linux: 200 ms
    uint32_t delAck = 2;            // ns-3's default (Linux: every 2nd segment, 40 ms+ timer)
    uint32_t segment = 1448;        // MSS with timestamps, as Linux on a 1500-byte MTU
    uint32_t sndBuf = 4 << 20;      // Linux tcp_wmem[2]
    uint32_t rcvBuf = 6 << 20;      // Linux tcp_rmem[2]
    std::string recovery = "prr";   // ns-3's default (and Linux's)

    CommandLine cmd(__FILE__);
    cmd.AddValue("loss", "random loss on the data direction (sta->ap): 5% or 0.05", loss);
    cmd.AddValue("sack", "SACK on both ends: true | false", sack);
    cmd.AddValue("cc", "congestion control: linux-reno | newreno | cubic | bbr", cc);
    cmd.AddValue("rate", "bottleneck rate ap->srv (Ethernet frames, as emuctl's links)", rate);
    cmd.AddValue("delay", "one-way delay of sta-ap, each way", delay);
    cmd.AddValue("queue", "bottleneck drop-tail queue, packets", queue);
    cmd.AddValue("time", "seconds the flow runs", simTime);
    cmd.AddValue("warmup", "seconds before the steady window", warmup);
    cmd.AddValue("interval", "sampling interval of srtt and cwnd, seconds", interval);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.AddValue("run", "RNG run (repetition)", run);
    cmd.AddValue("min-rto", "TcpSocketBase::MinRto (ns-3 1s, Linux 200ms)", minRto);
    cmd.AddValue("delack", "TcpSocket::DelAckCount", delAck);
    cmd.AddValue("segment", "TcpSocket::SegmentSize", segment);
    cmd.AddValue("sndbuf", "TcpSocket::SndBufSize, bytes", sndBuf);
    cmd.AddValue("rcvbuf", "TcpSocket::RcvBufSize, bytes", rcvBuf);
    cmd.AddValue("recovery", "prr | classic (TcpL4Protocol::RecoveryType)", recovery);
    cmd.Parse(argc, argv);

    double p = ParseProbability(loss);
    bool sackOn = ParseBool(sack, "--sack");
    double bps = ParseRate(rate);
    double d = ParseSeconds(delay);
    if (simTime <= warmup || warmup < 0 || interval <= 0 || queue == 0)
    {
        Fail("need --time > --warmup >= 0, --interval > 0, --queue > 0");
    }
    if (recovery != "prr" && recovery != "classic")
    {
        Fail("--recovery: prr or classic");
    }

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sackOn));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(ParseSeconds(minRto))));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAck));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(recovery == "prr" ? TcpPrrRecovery::GetTypeId()
                                                     : TcpClassicRecovery::GetTypeId()));

    NodeContainer nodes;
    nodes.Create(3);
    Ptr<Node> sta = nodes.Get(0);
    Ptr<Node> ap = nodes.Get(1);
    Ptr<Node> srv = nodes.Get(2);

    // sta-ap: the lab link has a delay and no rate (a veth pair through
    // the link engine): 10 Gbit/s here, deep device queues.
    PointToPointHelper hop;
    hop.SetDeviceAttribute("DataRate", DataRateValue(FrameRate(10e9)));
    hop.SetChannelAttribute("Delay", TimeValue(Seconds(d)));
    NetDeviceContainer staAp = hop.Install(sta, ap);
    // ap-srv: the bottleneck, both directions at the rate with the queue.
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(FrameRate(bps)));
    bottleneck.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    NetDeviceContainer apSrv = bottleneck.Install(ap, srv);
    SetQueue(staAp.Get(0), 100000);
    SetQueue(staAp.Get(1), 100000);
    SetQueue(apSrv.Get(0), queue);
    SetQueue(apSrv.Get(1), queue);

    // Bernoulli loss per packet on sta->ap (the data direction), where the
    // lab's link engine drops it.
    Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
    em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
    em->SetRate(p);
    em->SetRandomVariable(CreateObject<UniformRandomVariable>());
    staAp.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.1.0", "255.255.255.0");
    addr.Assign(staAp);
    addr.SetBase("10.0.2.0", "255.255.255.0");
    Ipv4InterfaceContainer srvIf = addr.Assign(apSrv);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    RemoveQueueDiscs(nodes);

    Trace(staAp.Get(1), "PhyRxEnd", MakeBoundCallback(&CountIn, &g_staAp));
    Trace(staAp.Get(1), "PhyRxDrop", MakeBoundCallback(&CountIn, &g_staAp));
    Trace(staAp.Get(1), "PhyRxDrop", MakeBoundCallback(&CountLoss, &g_staAp));
    Trace(apSrv.Get(0), "MacTx", MakeBoundCallback(&CountIn, &g_apSrv));
    // Without a queue disc the device stops its queue when full and the
    // traffic-control layer drops what comes next (ap's only full queue is
    // the bottleneck's): a drop-tail queue of --queue packets.
    Ptr<TrafficControlLayer> apTc = ap->GetObject<TrafficControlLayer>();
    Trace(apTc, "TcDrop", MakeBoundCallback(&CountQueueDrop, &g_apSrv));
    Trace(apTc, "TcDrop", MakeBoundCallback(&CountIn, &g_apSrv));
    Ptr<Queue<Packet>> bq = DynamicCast<PointToPointNetDevice>(apSrv.Get(0))->GetQueue();
    Trace(bq, "PacketsInQueue", MakeBoundCallback(&QueueLength, &g_apSrv));

    uint16_t port = 5201;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sinkHelper.Install(srv);
    sinkApp.Start(Seconds(0));
    Ptr<PacketSink> sink = DynamicCast<PacketSink>(sinkApp.Get(0));

    const double start = 0.01; // after the sink listens
    const double end = start + simTime;
    TcpFlow bulk;
    bulk.name = "bulk";
    bulk.cc = cc;
    bulk.Start(sta, sink, InetSocketAddress(srvIf.GetAddress(1), port), start);

    Simulator::Schedule(Seconds(start + warmup), &TcpFlow::Mark, &bulk);
    for (double t = start + interval; t <= end + 1e-9; t += interval)
    {
        Simulator::Schedule(Seconds(t), &TcpFlow::Sample, &bulk, t >= start + warmup - 1e-9);
    }
    Simulator::Stop(Seconds(end));
    double cpu0 = CpuSeconds();
    Simulator::Run();
    double cpu = CpuSeconds() - cpu0;

    Obj flows;
    flows.Add("bulk", bulk.Json(start, start + warmup, end));
    Obj links;
    links.Add("sta->ap", g_staAp.Json());
    links.Add("ap->srv", g_apSrv.Json());
    Obj cfg;
    cfg.Add("version", "3.37").Add("cc", cc).Add("sack", sackOn);
    cfg.Add("min_rto_s", ParseSeconds(minRto)).Add("delack_count", double(delAck));
    cfg.Add("delack_timeout_ms", 200.0).Add("segment", double(segment));
    cfg.Add("sndbuf", double(sndBuf)).Add("rcvbuf", double(rcvBuf)).Add("recovery", recovery);
    cfg.Add("timestamps", true).Add("initial_cwnd", 10.0).Add("limited_transmit", true);
    cfg.Add("rack", false).Add("tlp", false);
    cfg.Add("link_rate_bps", double(FrameRate(bps).GetBitRate()));

    Obj out;
    out.Add("program", "sack-reno");
    out.Add("loss", p).Add("sack", sackOn).Add("rate_bps", bps).Add("delay_s", d);
    out.Add("queue", double(queue)).Add("time_s", simTime).Add("warmup_s", warmup);
    out.Add("seed", double(seed)).Add("run", double(run));
    // Without loss nothing random touches the run: every seed gives it.
    out.Add("deterministic", p == 0);
    out.Add("flows", flows).Add("links", links).Add("ns3", cfg);
    out.Add("cpu_s", cpu);
    std::cout << out.String() << std::endl;
    Simulator::Destroy();
    return 0;
}
