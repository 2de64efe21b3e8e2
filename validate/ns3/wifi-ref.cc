// wifi-ref: the ns-3 reference runs that emuctl's 802.11 model is checked
// against (validate/wifi). One infrastructure BSS, N stations sending
// saturated uplink traffic to the AP at a fixed rate; prints one JSON line.
//
// Written for emuctl against the ns-3 3.37 API (Debian libns3-dev); it
// contains no ns-3 source. See README.md next to it for what each figure
// means and which ns-3 defaults it relies on.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/propagation-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include <cmath>
#include <iomanip>
#include <map>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// Airtime statistics of one kind of frame seen on the air while measuring.
struct FrameStat
{
    uint64_t count = 0;
    double sumUs = 0;
    uint64_t sumBytes = 0;
    uint64_t sumMpdus = 0;
    std::string mode;
};

// Everything the traces collect. Counted only inside the measurement window.
struct Stats
{
    bool measuring = false;
    Mac48Address ap;
    std::map<Mac48Address, int> staIndex;
    // Whether each station's latest PPDU started inside the window: the AP's
    // receptions are charged to it, so frames straddling an edge count once.
    std::map<Mac48Address, bool> lastTxCounted;
    WifiPhyBand band = WIFI_PHY_BAND_5GHZ;

    std::map<std::string, FrameStat> frames; // by kind
    uint64_t staDataPpdus = 0;               // data PPDUs sent by stations
    uint64_t staDataMpdus = 0;               // data MPDUs in them
    uint64_t staFailedPpdus = 0;             // of those: no ACK / no BlockAck
    uint64_t apRxOkDataMpdus = 0;            // station data MPDUs the AP decoded
    double sumSignalDbm = 0;
    double sumNoiseDbm = 0;
    uint64_t signalSamples = 0;
    Time busy;                               // total PPDU airtime
};

Stats g;

std::string
Kind(const WifiMacHeader& h, bool fromSta)
{
    if (h.IsBeacon())
    {
        return "beacon";
    }
    if (h.IsAck())
    {
        return "ack";
    }
    if (h.IsBlockAck())
    {
        return "block_ack";
    }
    if (h.IsBlockAckReq())
    {
        return "block_ack_req";
    }
    if (h.IsCts())
    {
        return "cts";
    }
    if (h.IsRts())
    {
        return "rts";
    }
    if (h.IsData())
    {
        return fromSta ? "data_sta" : "data_ap";
    }
    return "other";
}

void
OnTxPsdu(WifiConstPsduMap psdus, WifiTxVector txv, double /* txPowerW */)
{
    for (const auto& [staId, psdu] : psdus)
    {
        Mac48Address ta = psdu->GetHeader(0).GetAddr2();
        if (g.staIndex.count(ta) > 0)
        {
            g.lastTxCounted[ta] = g.measuring;
        }
    }
    if (!g.measuring)
    {
        return;
    }
    Time d = WifiPhy::CalculateTxDuration(psdus, txv, g.band);
    g.busy += d;
    for (const auto& [staId, psdu] : psdus)
    {
        const WifiMacHeader& h = psdu->GetHeader(0);
        bool fromSta = g.staIndex.count(h.GetAddr2()) > 0;
        FrameStat& s = g.frames[Kind(h, fromSta)];
        s.count++;
        s.sumUs += d.GetNanoSeconds() / 1000.0;
        s.sumBytes += psdu->GetSize();
        s.sumMpdus += psdu->GetNMpdus();
        s.mode = txv.GetMode(staId).GetUniqueName();
        if (h.IsData() && fromSta)
        {
            g.staDataPpdus++;
            g.staDataMpdus += psdu->GetNMpdus();
        }
    }
}

void
OnMpduTimeout(uint8_t /* reason */, Ptr<const WifiMpdu> mpdu, const WifiTxVector&)
{
    if (g.measuring && mpdu->GetHeader().IsData())
    {
        g.staFailedPpdus++;
    }
}

void
OnPsduTimeout(uint8_t /* reason */, Ptr<const WifiPsdu> psdu, const WifiTxVector&)
{
    if (g.measuring && psdu->GetHeader(0).IsData())
    {
        g.staFailedPpdus++;
    }
}

void
OnApSnifferRx(Ptr<const Packet> p,
              uint16_t /* freq */,
              WifiTxVector /* txv */,
              MpduInfo info,
              SignalNoiseDbm sn,
              uint16_t /* staId */)
{
    // MPDUs of an A-MPDU arrive as subframes: delimiter first.
    Ptr<Packet> c = p->Copy();
    if (info.type != NORMAL_MPDU)
    {
        AmpduSubframeHeader delimiter;
        c->RemoveHeader(delimiter);
    }
    WifiMacHeader h;
    c->PeekHeader(h);
    if (h.IsData() && g.lastTxCounted[h.GetAddr2()] && h.GetAddr1() == g.ap)
    {
        g.apRxOkDataMpdus++;
        g.sumSignalDbm += sn.signal;
        g.sumNoiseDbm += sn.noise;
        g.signalSamples++;
    }
}

std::string
Num(double v)
{
    if (std::isnan(v) || std::isinf(v))
    {
        return "null";
    }
    std::ostringstream o;
    o << std::setprecision(6) << v;
    return o.str();
}

std::string
Str(const std::string& s)
{
    return "\"" + s + "\"";
}

// The data mode ns-3 calls the requested rate, or "" if unknown.
std::string
DataMode(const std::string& standard, const std::string& rate)
{
    if (standard == "n")
    {
        if (rate.rfind("mcs", 0) == 0)
        {
            return "HtMcs" + rate.substr(3);
        }
        return "";
    }
    if (standard == "b")
    {
        static const std::map<std::string, std::string> dsss{
            {"1", "DsssRate1Mbps"}, {"2", "DsssRate2Mbps"}, {"5.5", "DsssRate5_5Mbps"}, {"11", "DsssRate11Mbps"}};
        auto it = dsss.find(rate);
        return it == dsss.end() ? "" : it->second;
    }
    static const std::vector<std::string> legacy{"6", "9", "12", "18", "24", "36", "48", "54"};
    for (const auto& r : legacy)
    {
        if (rate == r)
        {
            return (standard == "g" ? "ErpOfdmRate" : "OfdmRate") + r + "Mbps";
        }
    }
    return "";
}

// The value of attribute name of obj, or, when it cannot be read, its
// initial value in TypeId tid.
std::string
Attr(Ptr<Object> obj, const std::string& tid, const std::string& name)
{
    StringValue v;
    if (obj->GetAttributeFailSafe(name, v))
    {
        return v.Get();
    }
    TypeId::AttributeInformation info;
    if (!TypeId::LookupByName(tid).LookupAttributeByName(name, &info))
    {
        return "?";
    }
    return info.initialValue->SerializeToString(info.checker);
}

// StaticArp fills every node's ARP cache with every other node's
// addresses (permanent entries), so no ARP exchange runs (call it after
// association: ns-3 flushes a cache when its device's link changes). With stations
// hidden from one another an ARP request (a broadcast: one attempt) can
// be lost three times in a row; ns-3's ArpCache then marks the entry dead
// for DeadTimeout (100 s) and drops that station's traffic.
void
StaticArp(const NodeContainer& nodes)
{
    for (uint32_t a = 0; a < nodes.GetN(); a++)
    {
        Ptr<Ipv4L3Protocol> ipA = nodes.Get(a)->GetObject<Ipv4L3Protocol>();
        for (uint32_t i = 1; i < ipA->GetNInterfaces(); i++) // 0 is the loopback
        {
            Ptr<ArpCache> cache = ipA->GetInterface(i)->GetArpCache();
            if (!cache)
            {
                continue;
            }
            for (uint32_t b = 0; b < nodes.GetN(); b++)
            {
                Ptr<Ipv4L3Protocol> ipB = nodes.Get(b)->GetObject<Ipv4L3Protocol>();
                for (uint32_t j = 1; a != b && j < ipB->GetNInterfaces(); j++)
                {
                    Ptr<Ipv4Interface> itf = ipB->GetInterface(j);
                    for (uint32_t k = 0; k < itf->GetNAddresses(); k++)
                    {
                        ArpCache::Entry* e = cache->Add(itf->GetAddress(k).GetLocal());
                        e->SetMacAddress(itf->GetDevice()->GetAddress());
                        e->MarkPermanent();
                    }
                }
            }
        }
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string scenario = "unnamed";
    std::string standard = "a"; // a (5 GHz), g (2.4 GHz), n (5 GHz, 20 MHz)
    std::string rate = "54";    // Mbit/s for a/g, mcsN for n
    std::string proto = "udp";
    std::string ampdu = "on"; // n only: BE_MaxAmpduSize default (65535) or 0
    std::string preamble = "on";
    std::string errorModel = "yans";
    std::string loss = "logdistance";
    std::string gi = "long";
    std::string hidden = "off"; // on: the stations cannot hear one another
    std::string arp = "dynamic";
    uint32_t stations = 1;
    uint32_t payload = 1472; // UDP payload bytes
    uint32_t segment = 1448; // TCP segment size
    uint32_t delAck = 2;     // TcpSocket::DelAckCount
    double distance = 1.0;   // m, station to AP
    double simTime = 5.0;    // s measured
    double warmup = 1.0;     // s before measuring
    uint32_t run = 1;
    double offered = 1.2; // UDP offered load per station, times the PHY rate

    // MSDU lifetime: ns-3's 500 ms expires the head of a saturated backlog
    // at low rates, and each expired in-window MPDU costs a BlockAckReq.
    // Set before parsing, so --ns3::WifiMacQueue::MaxDelay=500ms restores it.
    Config::SetDefault("ns3::WifiMacQueue::MaxDelay", TimeValue(Seconds(10)));

    CommandLine cmd(__FILE__);
    cmd.AddValue("scenario", "label printed in the JSON line", scenario);
    cmd.AddValue("standard", "a | b | g | n", standard);
    cmd.AddValue("rate", "6..54 (a, g) or mcs0..mcs7 (n)", rate);
    cmd.AddValue("stations", "number of saturated uplink stations", stations);
    cmd.AddValue("proto", "udp | tcp", proto);
    cmd.AddValue("payload", "UDP payload bytes", payload);
    cmd.AddValue("segment", "TCP SegmentSize bytes", segment);
    cmd.AddValue("delack", "TcpSocket::DelAckCount", delAck);
    cmd.AddValue("ampdu", "on | off (802.11n BE_MaxAmpduSize 65535 | 0)", ampdu);
    cmd.AddValue("gi", "long | short (802.11n)", gi);
    cmd.AddValue("distance", "station-AP distance in m (stations on a circle)", distance);
    cmd.AddValue("loss", "logdistance | friis", loss);
    cmd.AddValue("hidden",
                 "on: 200 dB more loss between every two stations (MatrixPropagationLossModel), "
                 "so they cannot hear one another; each still reaches the AP",
                 hidden);
    cmd.AddValue("arp", "dynamic | static (ARP caches filled before the sources start)", arp);
    cmd.AddValue("preamble", "on | off: ThresholdPreambleDetectionModel (ns-3 default on)", preamble);
    cmd.AddValue("error", "yans | table (error rate model)", errorModel);
    cmd.AddValue("time", "measured simulated seconds", simTime);
    cmd.AddValue("warmup", "simulated seconds before measuring", warmup);
    cmd.AddValue("run", "RNG run number (seed is fixed at 1)", run);
    cmd.AddValue("offered", "UDP offered load per station, times the PHY rate", offered);
    cmd.Parse(argc, argv);

    std::string mode = DataMode(standard, rate);
    if (mode.empty() || (proto != "udp" && proto != "tcp") || stations < 1)
    {
        std::cerr << "wifi-ref: bad --standard/--rate/--proto/--stations" << std::endl;
        return 2;
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(run);

    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAck));

    NodeContainer ap;
    ap.Create(1);
    NodeContainer stas;
    stas.Create(stations);

    // The channel: the path loss (log-distance or Friis), then, for hidden
    // stations, a matrix adding 200 dB between stations (0 dB elsewhere):
    // -184 dBm is far below the -101 dBm sensitivity, so a station's
    // frames neither reach nor disturb another.
    Ptr<PropagationLossModel> pathLoss;
    if (loss == "friis")
    {
        pathLoss = CreateObject<FriisPropagationLossModel>();
    }
    else
    {
        pathLoss = CreateObject<LogDistancePropagationLossModel>();
    }
    Ptr<MatrixPropagationLossModel> matrix;
    if (hidden == "on")
    {
        matrix = CreateObject<MatrixPropagationLossModel>();
        matrix->SetDefaultLoss(0);
        pathLoss->SetNext(matrix);
    }
    Ptr<YansWifiChannel> wifiChannel = CreateObject<YansWifiChannel>();
    wifiChannel->SetPropagationLossModel(pathLoss);
    wifiChannel->SetPropagationDelayModel(CreateObject<ConstantSpeedPropagationDelayModel>());
    YansWifiPhyHelper phy;
    phy.SetChannel(wifiChannel);
    phy.SetErrorRateModel(errorModel == "table" ? "ns3::TableBasedErrorRateModel"
                                                : "ns3::YansErrorRateModel");
    if (preamble == "off")
    {
        phy.DisablePreambleDetectionModel();
    }

    WifiHelper wifi;
    std::string control = "OfdmRate6Mbps"; // only RTS uses it, and RTS is off
    if (standard == "a")
    {
        wifi.SetStandard(WIFI_STANDARD_80211a);
        phy.Set("ChannelSettings", StringValue("{36, 20, BAND_5GHZ, 0}"));
        g.band = WIFI_PHY_BAND_5GHZ;
    }
    else if (standard == "b")
    {
        wifi.SetStandard(WIFI_STANDARD_80211b);
        phy.Set("ChannelSettings", StringValue("{1, 22, BAND_2_4GHZ, 0}")); // DSSS: 22 MHz
        g.band = WIFI_PHY_BAND_2_4GHZ;
        control = "DsssRate1Mbps";
    }
    else if (standard == "g")
    {
        wifi.SetStandard(WIFI_STANDARD_80211g);
        phy.Set("ChannelSettings", StringValue("{1, 20, BAND_2_4GHZ, 0}"));
        g.band = WIFI_PHY_BAND_2_4GHZ;
        control = "ErpOfdmRate6Mbps";
    }
    else
    {
        wifi.SetStandard(WIFI_STANDARD_80211n);
        phy.Set("ChannelSettings", StringValue("{36, 20, BAND_5GHZ, 0}"));
        g.band = WIFI_PHY_BAND_5GHZ;
    }
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 StringValue(mode),
                                 "ControlMode",
                                 StringValue(control));

    WifiMacHelper mac;
    Ssid ssid("emuctl-ref");
    uint32_t maxAmpdu = (ampdu == "off") ? 0 : 65535;
    mac.SetType("ns3::StaWifiMac",
                "Ssid",
                SsidValue(ssid),
                "BE_MaxAmpduSize",
                UintegerValue(maxAmpdu));
    NetDeviceContainer staDevs = wifi.Install(phy, mac, stas);
    mac.SetType("ns3::ApWifiMac",
                "Ssid",
                SsidValue(ssid),
                "BE_MaxAmpduSize",
                UintegerValue(maxAmpdu));
    NetDeviceContainer apDevs = wifi.Install(phy, mac, ap);
    if (standard == "n")
    {
        bool sgi = (gi == "short");
        Config::Set("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/HtConfiguration/"
                    "ShortGuardIntervalSupported",
                    BooleanValue(sgi));
    }

    MobilityHelper mobility;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0, 0, 0));
    for (uint32_t i = 0; i < stations; i++)
    {
        double a = 2 * M_PI * i / stations;
        pos->Add(Vector(distance * std::cos(a), distance * std::sin(a), 0));
    }
    mobility.SetPositionAllocator(pos);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(ap);
    mobility.Install(stas);
    if (matrix)
    {
        for (uint32_t i = 0; i < stations; i++)
        {
            for (uint32_t j = i + 1; j < stations; j++)
            {
                matrix->SetLoss(stas.Get(i)->GetObject<MobilityModel>(),
                                stas.Get(j)->GetObject<MobilityModel>(),
                                200);
            }
        }
    }

    InternetStackHelper stack;
    stack.Install(ap);
    stack.Install(stas);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.0.0", "255.255.0.0");
    Ipv4InterfaceContainer apIf = addr.Assign(apDevs);
    addr.Assign(staDevs);

    Ptr<WifiNetDevice> apDev = DynamicCast<WifiNetDevice>(apDevs.Get(0));
    g.ap = apDev->GetMac()->GetAddress();
    for (uint32_t i = 0; i < stations; i++)
    {
        auto d = DynamicCast<WifiNetDevice>(staDevs.Get(i));
        g.staIndex[d->GetMac()->GetAddress()] = i;
        d->GetMac()->TraceConnectWithoutContext("MpduResponseTimeout",
                                                MakeCallback(&OnMpduTimeout));
        d->GetMac()->TraceConnectWithoutContext("PsduResponseTimeout",
                                                MakeCallback(&OnPsduTimeout));
    }
    Config::ConnectWithoutContext("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Phy/PhyTxPsduBegin",
                                  MakeCallback(&OnTxPsdu));
    apDev->GetPhy()->TraceConnectWithoutContext("MonitorSnifferRx", MakeCallback(&OnApSnifferRx));

    // Saturated sources: UDP offered at --offered times the PHY rate; TCP bulk.
    Ptr<WifiPhy> staPhy = DynamicCast<WifiNetDevice>(staDevs.Get(0))->GetPhy();
    WifiMode wm(mode);
    uint16_t giNs = (standard == "n" && gi == "short") ? 400 : 800;
    double phyRateMbps = wm.GetDataRate(20, giNs, 1) / 1e6;
    double appStart = 0.5;
    NodeContainer all(ap, stas);
    if (arp == "static")
    {
        // After association: a link change (association) flushes the caches.
        Simulator::Schedule(Seconds(appStart - 0.05), &StaticArp, all);
    }
    double stop = warmup + simTime;
    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < stations; i++)
    {
        uint16_t port = 9000 + i;
        std::string factory = (proto == "tcp") ? "ns3::TcpSocketFactory" : "ns3::UdpSocketFactory";
        PacketSinkHelper sink(factory, InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sink.Install(ap.Get(0));
        s.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(s.Get(0)));
        InetSocketAddress dst(apIf.GetAddress(0), port);
        ApplicationContainer c;
        if (proto == "tcp")
        {
            BulkSendHelper bulk(factory, dst);
            bulk.SetAttribute("SendSize", UintegerValue(segment));
            c = bulk.Install(stas.Get(i));
        }
        else
        {
            OnOffHelper onoff(factory, dst);
            onoff.SetConstantRate(DataRate(uint64_t(phyRateMbps * offered * 1e6)), payload);
            c = onoff.Install(stas.Get(i));
        }
        // Stagger starts by 1 ms so ARP requests do not collide by construction.
        c.Start(Seconds(appStart + 0.001 * i));
        c.Stop(Seconds(stop + 0.1));
    }

    std::vector<uint64_t> rx0(stations);
    Simulator::Schedule(Seconds(warmup), [&]() {
        for (uint32_t i = 0; i < stations; i++)
        {
            rx0[i] = sinks[i]->GetTotalRx();
        }
        g.measuring = true;
    });
    std::vector<uint64_t> rx1(stations);
    Simulator::Schedule(Seconds(stop), [&]() {
        for (uint32_t i = 0; i < stations; i++)
        {
            rx1[i] = sinks[i]->GetTotalRx();
        }
        g.measuring = false;
    });
    Simulator::Stop(Seconds(stop + 0.2));
    Simulator::Run();

    // What ns-3 actually used, read back from the objects after the run.
    auto staMac = DynamicCast<WifiNetDevice>(staDevs.Get(0))->GetMac();
    bool qos = staMac->GetQosSupported();
    Ptr<Txop> txop = qos ? Ptr<Txop>(staMac->GetQosTxop(AC_BE)) : staMac->GetTxop();
    std::string maxAmpduVal = Attr(staMac, "ns3::WifiMac", "BE_MaxAmpduSize");
    // Several of these attributes are set-only; Attr falls back to the value
    // the TypeId starts objects with (nothing here changes them).
    std::string nf = Attr(staPhy, "ns3::WifiPhy", "RxNoiseFigure");
    auto rsm = DynamicCast<WifiNetDevice>(staDevs.Get(0))->GetRemoteStationManager();
    std::string maxSsrc = Attr(rsm, "ns3::WifiRemoteStationManager", "MaxSsrc");
    std::string maxSlrc = Attr(rsm, "ns3::WifiRemoteStationManager", "MaxSlrc");
    std::string rtsThr = Attr(rsm, "ns3::WifiRemoteStationManager", "RtsCtsThreshold");

    double total = 0;
    std::ostringstream per;
    per << "[";
    for (uint32_t i = 0; i < stations; i++)
    {
        double mbps = (rx1[i] - rx0[i]) * 8.0 / simTime / 1e6;
        total += mbps;
        per << (i ? "," : "") << Num(mbps);
    }
    per << "]";

    double failP = g.staDataPpdus ? double(g.staFailedPpdus) / g.staDataPpdus : NAN;
    double mpduPer =
        g.staDataMpdus ? 1.0 - double(g.apRxOkDataMpdus) / double(g.staDataMpdus) : NAN;

    std::ostringstream o;
    o << "{" << Str("scenario") << ":" << Str(scenario);
    o << "," << Str("standard") << ":" << Str(standard) << "," << Str("rate") << ":" << Str(rate)
      << "," << Str("data_mode") << ":" << Str(mode) << "," << Str("proto") << ":" << Str(proto)
      << "," << Str("stations") << ":" << stations << "," << Str("distance_m") << ":"
      << Num(distance);
    o << "," << Str("goodput_mbps") << ":" << Num(total);
    o << "," << Str("per_station_mbps") << ":" << per.str();
    o << "," << Str("collision_p") << ":" << Num(failP);
    o << "," << Str("mpdu_per") << ":" << Num(mpduPer);
    o << "," << Str("data_ppdus") << ":" << g.staDataPpdus << "," << Str("failed_ppdus") << ":"
      << g.staFailedPpdus;
    o << "," << Str("mpdus_per_ppdu") << ":"
      << Num(g.staDataPpdus ? double(g.staDataMpdus) / g.staDataPpdus : NAN);
    o << "," << Str("phy_rate_mbps") << ":" << Num(phyRateMbps);
    o << "," << Str("airtime_busy") << ":" << Num(g.busy.GetSeconds() / simTime);
    o << "," << Str("rx_signal_dbm") << ":"
      << Num(g.signalSamples ? g.sumSignalDbm / g.signalSamples : NAN) << ","
      << Str("rx_noise_dbm") << ":"
      << Num(g.signalSamples ? g.sumNoiseDbm / g.signalSamples : NAN);
    o << "," << Str("frames") << ":{";
    bool first = true;
    for (const auto& [kind, s] : g.frames)
    {
        o << (first ? "" : ",") << Str(kind) << ":{" << Str("count") << ":" << s.count << ","
          << Str("mean_us") << ":" << Num(s.sumUs / s.count) << "," << Str("mean_bytes") << ":"
          << Num(double(s.sumBytes) / s.count) << "," << Str("mean_mpdus") << ":"
          << Num(double(s.sumMpdus) / s.count) << "," << Str("mode") << ":" << Str(s.mode)
          << "}";
        first = false;
    }
    o << "}";
    o << "," << Str("ns3") << ":{" << Str("version") << ":" << Str("3.37") << ","
      << Str("qos") << ":" << (qos ? "true" : "false") << "," << Str("aifsn") << ":"
      << unsigned(txop->GetAifsn()) << "," << Str("cwmin") << ":" << txop->GetMinCw() << ","
      << Str("cwmax") << ":" << txop->GetMaxCw() << "," << Str("slot_us") << ":"
      << Num(staPhy->GetSlot().GetNanoSeconds() / 1000.0) << "," << Str("sifs_us") << ":"
      << Num(staPhy->GetSifs().GetNanoSeconds() / 1000.0) << "," << Str("ap_slot_us") << ":"
      << Num(apDev->GetPhy()->GetSlot().GetNanoSeconds() / 1000.0) << ","
      << Str("max_ampdu_bytes") << ":" << maxAmpduVal << "," << Str("max_ssrc") << ":"
      << maxSsrc << "," << Str("max_slrc") << ":" << maxSlrc << ","
      << Str("rts_threshold") << ":" << rtsThr << "," << Str("tx_power_dbm") << ":"
      << Num(staPhy->GetTxPowerStart()) << "," << Str("rx_sensitivity_dbm") << ":"
      << Num(staPhy->GetRxSensitivity()) << "," << Str("cca_ed_dbm") << ":"
      << Num(staPhy->GetCcaEdThreshold()) << "," << Str("noise_figure_db") << ":"
      << nf << "," << Str("preamble_detection") << ":" << Str(preamble) << ","
      << Str("error_model") << ":" << Str(errorModel) << "," << Str("loss") << ":" << Str(loss)
      << "," << Str("hidden") << ":" << Str(hidden) << "," << Str("arp") << ":" << Str(arp)
      << "}";
    o << "," << Str("sim_s") << ":" << Num(simTime) << "}";
    std::cout << o.str() << std::endl;

    Simulator::Destroy();
    return 0;
}
