// tcp-ref.h: what emuctl's TCP reference programs (sack-reno.cc,
// dumbbell.cc) share: parsing the values suite files write ("54mbit",
// "5%", "2ms"), a bulk TCP sender whose socket is instrumented the way
// emuctl measures a Linux flow (goodput, srtt sampled like tcpi_rtt,
// retransmitted segments, RTOs, loss-recovery episodes from the
// congestion state), a constant-rate UDP stream with one-way delays, and
// the JSON line each program prints.
//
// Written for emuctl against the ns-3 3.37 API (Debian libns3-dev); it
// contains no ns-3 source. README.md next to it says what each figure
// means and which ns-3 defaults the programs keep or change.

#ifndef EMUCTL_TCP_REF_H
#define EMUCTL_TCP_REF_H

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace emuctl
{

using namespace ns3;

// Fail prints why and exits 2 (a bad flag): the Go side shows stderr.
[[noreturn]] inline void
Fail(const std::string& msg)
{
    std::cerr << msg << std::endl;
    std::exit(2);
}

// Number splits "54mbit" into 54 and "mbit"; it fails on no number.
inline double
Number(const std::string& s, std::string& unit, const std::string& what)
{
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || std::isnan(v) || v < 0)
    {
        Fail("bad " + what + " \"" + s + "\"");
    }
    unit = std::string(end);
    std::transform(unit.begin(), unit.end(), unit.begin(), ::tolower);
    return v;
}

// ParseRate reads a rate as suite files write it (bit/s: 54mbit, 10Mbit,
// 1gbit, 500kbit, or a plain number of bit/s).
inline double
ParseRate(const std::string& s)
{
    std::string u;
    double v = Number(s, u, "rate");
    static const std::map<std::string, double> units{{"", 1},
                                                     {"bit", 1},
                                                     {"bps", 1},
                                                     {"kbit", 1e3},
                                                     {"kbps", 1e3},
                                                     {"mbit", 1e6},
                                                     {"mbps", 1e6},
                                                     {"gbit", 1e9},
                                                     {"gbps", 1e9}};
    auto it = units.find(u);
    if (it == units.end())
    {
        Fail("bad rate \"" + s + "\" (write 54mbit, 500kbit, 1gbit)");
    }
    return v * it->second;
}

// ParseProbability reads "5%" or "0.05".
inline double
ParseProbability(const std::string& s)
{
    std::string u;
    double v = Number(s, u, "probability");
    if (u == "%")
    {
        v /= 100;
    }
    else if (!u.empty())
    {
        Fail("bad probability \"" + s + "\" (write 5% or 0.05)");
    }
    if (v > 1)
    {
        Fail("probability \"" + s + "\" above 1");
    }
    return v;
}

// ParseSeconds reads "2ms", "10s", "500us" or a plain number of seconds.
inline double
ParseSeconds(const std::string& s)
{
    std::string u;
    double v = Number(s, u, "duration");
    static const std::map<std::string, double> units{{"", 1},
                                                     {"s", 1},
                                                     {"ms", 1e-3},
                                                     {"us", 1e-6},
                                                     {"m", 60}};
    auto it = units.find(u);
    if (it == units.end())
    {
        Fail("bad duration \"" + s + "\" (write 2ms or 10s)");
    }
    return v * it->second;
}

// ParseBool reads true/false, on/off, 1/0.
inline bool
ParseBool(const std::string& s, const std::string& what)
{
    if (s == "true" || s == "on" || s == "1" || s == "yes")
    {
        return true;
    }
    if (s == "false" || s == "off" || s == "0" || s == "no")
    {
        return false;
    }
    Fail("bad " + what + " \"" + s + "\" (true or false)");
}

// Trace connects a trace source and fails when the object has none of
// that name (TraceConnectWithoutContext only returns false).
template <class T, class C>
void
Trace(Ptr<T> obj, const std::string& name, const C& cb)
{
    if (!obj->TraceConnectWithoutContext(name, cb))
    {
        Fail("no trace source " + name + " on " + obj->GetInstanceTypeId().GetName());
    }
}

// FrameRate is the ns-3 point-to-point rate that makes a packet occupy
// the link as long as its Ethernet frame (14 bytes of header where PPP
// has 2) at rate bps does on emuctl's links, whose rate counts Ethernet
// frames: a 1500-byte IP packet then takes 1514·8/R seconds, and TCP's
// best goodput is R × 1448/1514 as in a lab.
inline DataRate
FrameRate(double bps)
{
    return DataRate(uint64_t(std::llround(bps * 1502.0 / 1514.0)));
}

// Num renders a number for JSON (null for NaN and infinities).
inline std::string
Num(double v)
{
    if (std::isnan(v) || std::isinf(v))
    {
        return "null";
    }
    std::ostringstream o;
    o << std::setprecision(7) << v;
    return o.str();
}

inline std::string
Str(const std::string& s)
{
    std::string out = "\"";
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

// Obj builds one JSON object, keys in insertion order.
class Obj
{
  public:
    Obj& Add(const std::string& k, double v)
    {
        return Raw(k, Num(v));
    }

    Obj& Add(const std::string& k, const std::string& v)
    {
        return Raw(k, Str(v));
    }

    Obj& Add(const std::string& k, const char* v)
    {
        return Raw(k, Str(v));
    }

    Obj& Add(const std::string& k, bool v)
    {
        return Raw(k, v ? "true" : "false");
    }

    Obj& Add(const std::string& k, const Obj& v)
    {
        return Raw(k, v.String());
    }

    Obj& Raw(const std::string& k, const std::string& json)
    {
        m_o << (m_first ? "" : ",") << Str(k) << ":" << json;
        m_first = false;
        return *this;
    }

    std::string String() const
    {
        return "{" + m_o.str() + "}";
    }

  private:
    std::ostringstream m_o;
    bool m_first = true;
};

// Stats of a sample: mean, standard deviation, 95th percentile, max.
struct Summary
{
    double mean = NAN;
    double std = NAN;
    double p95 = NAN;
    double max = NAN;
    size_t n = 0;
};

inline double
Percentile(std::vector<double> v, double q)
{
    if (v.empty())
    {
        return NAN;
    }
    std::sort(v.begin(), v.end());
    // linear interpolation between closest ranks, as analysis.Summarise
    double pos = q * (v.size() - 1);
    size_t lo = size_t(std::floor(pos));
    size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

inline Summary
Summarise(const std::vector<double>& v)
{
    Summary s;
    s.n = v.size();
    if (v.empty())
    {
        return s;
    }
    double sum = 0;
    s.max = v[0];
    for (double x : v)
    {
        sum += x;
        s.max = std::max(s.max, x);
    }
    s.mean = sum / v.size();
    double ss = 0;
    for (double x : v)
    {
        ss += (x - s.mean) * (x - s.mean);
    }
    s.std = v.size() > 1 ? std::sqrt(ss / (v.size() - 1)) : 0;
    s.p95 = Percentile(v, 0.95);
    return s;
}

// RtoCounting wraps a congestion control and counts retransmission
// timeouts: TcpSocketBase::ReTxTimeout reports every expiry, backed-off
// ones included, as CA_EVENT_LOSS (Linux's TcpExtTCPTimeouts counts the
// same way).
template <class Base>
class RtoCounting : public Base
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("emuctl::RtoCounting<" + Base::GetTypeId().GetName() + ">")
                                .template SetParent<Base>()
                                .template AddConstructor<RtoCounting<Base>>();
        return tid;
    }

    RtoCounting() = default;

    RtoCounting(const RtoCounting& o)
        : Base(o)
    {
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        if (event == TcpSocketState::CA_EVENT_LOSS)
        {
            rtos++;
        }
        Base::CwndEvent(tcb, event);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<RtoCounting<Base>>(this);
    }

    uint64_t rtos = 0;
};

// srttOf reads a socket's smoothed RTT (what Linux reports as tcpi_rtt):
// the estimator is a protected member without a getter, reached through
// a pointer to member of a derived class.
struct RttPeek : public TcpSocketBase
{
    static Ptr<RttEstimator> Of(Ptr<TcpSocketBase> s)
    {
        return (*s).*(&RttPeek::m_rtt);
    }
};

// TcpFlow is one bulk TCP flow from a sender node to a sink, measured as
// emuctl measures a Linux flow.
class TcpFlow
{
  public:
    std::string name;
    std::string cc; // linux-reno, newreno, cubic, bbr

    // Start creates the sender's socket at time at, connects it to dst and
    // keeps its send buffer full; the sink must already listen.
    void Start(Ptr<Node> from, Ptr<PacketSink> sink, InetSocketAddress dst, double at)
    {
        m_sink = sink;
        Simulator::Schedule(Seconds(at), &TcpFlow::Open, this, from, dst);
    }

    // Sample records srtt and cwnd (call it every sampling interval);
    // steady says whether the sample falls in the steady window.
    void Sample(bool steady)
    {
        if (!m_sock || !steady)
        {
            return;
        }
        Ptr<RttEstimator> rtt = RttPeek::Of(m_sock);
        if (rtt && rtt->GetNSamples() > 0)
        {
            m_srttMs.push_back(rtt->GetEstimate().GetSeconds() * 1000);
        }
        m_cwndBytes.push_back(m_cwnd);
    }

    // Mark records the sink's byte count at the start of the steady window.
    void Mark()
    {
        m_rxSteady0 = m_sink->GetTotalRx();
    }

    // Json renders the flow's metrics over the steady window [warmup,
    // end] (goodput over the whole run too); end is when the flow stopped.
    Obj Json(double start, double warmup, double end) const
    {
        Summary srtt = Summarise(m_srttMs);
        Summary cwnd = Summarise(m_cwndBytes);
        std::vector<double> eps;
        for (const auto& e : m_episodes)
        {
            eps.push_back(e * 1000);
        }
        Summary rec = Summarise(eps);
        uint64_t rx = m_sink->GetTotalRx();
        Obj o;
        o.Add("proto", "tcp").Add("cc", cc);
        o.Add("goodput_mbps", (rx - m_rxSteady0) * 8.0 / (end - warmup) / 1e6);
        o.Add("goodput_whole_mbps", rx * 8.0 / (end - start) / 1e6);
        o.Add("bytes", double(rx));
        o.Add("srtt_ms", srtt.mean).Add("srtt_p95_ms", srtt.p95).Add("srtt_std_ms", srtt.std);
        o.Add("srtt_max_ms", srtt.max);
        o.Add("min_rtt_ms", m_minRtt.IsStrictlyPositive() ? m_minRtt.GetSeconds() * 1000 : NAN);
        o.Add("cwnd_mean_bytes", cwnd.mean).Add("cwnd_max_bytes", m_cwndMax);
        o.Add("segments_sent", double(m_segs)).Add("retrans", double(m_retrans));
        o.Add("rtos", double(m_rtoCount ? m_rtoCount() : 0)).Add("tlps", 0.0);
        o.Add("recoveries", double(m_episodes.size())).Add("recoveries_rto", double(m_rtoEpisodes));
        o.Add("recovery_mean_ms", rec.mean).Add("recovery_p95_ms", rec.p95);
        o.Add("recovery_total_ms", rec.n ? rec.mean * rec.n : 0.0);
        o.Add("recovery_unfinished", double(m_inEpisode ? 1 : 0));
        o.Add("samples", double(m_srttMs.size()));
        return o;
    }

  private:
    void Open(Ptr<Node> from, InetSocketAddress dst)
    {
        Ptr<Socket> s = Socket::CreateSocket(from, TcpSocketFactory::GetTypeId());
        m_sock = DynamicCast<TcpSocketBase>(s);
        SetCongestionControl();
        Trace(m_sock, "Tx", MakeCallback(&TcpFlow::OnTx, this));
        Trace(m_sock, "CongState", MakeCallback(&TcpFlow::OnCongState, this));
        Trace(m_sock, "CongestionWindow", MakeCallback(&TcpFlow::OnCwnd, this));
        Trace(m_sock, "RTT", MakeCallback(&TcpFlow::OnRtt, this));
        m_sock->SetSendCallback(MakeCallback(&TcpFlow::Fill, this));
        m_sock->SetConnectCallback(MakeCallback(&TcpFlow::Connected, this),
                                   MakeNullCallback<void, Ptr<Socket>>());
        m_sock->Bind();
        m_sock->Connect(dst);
    }

    template <class T>
    void Use()
    {
        Ptr<RtoCounting<T>> c = CreateObject<RtoCounting<T>>();
        m_sock->SetCongestionControlAlgorithm(c);
        m_rtoCount = [c]() { return c->rtos; };
    }

    void SetCongestionControl()
    {
        if (cc == "linux-reno" || cc == "reno")
        {
            Use<TcpLinuxReno>();
        }
        else if (cc == "newreno")
        {
            Use<TcpNewReno>();
        }
        else if (cc == "cubic")
        {
            Use<TcpCubic>();
        }
        else if (cc == "bbr")
        {
            // BBR paces itself (ns-3's TcpBbr needs the socket's pacing on).
            m_sock->SetPacingStatus(true);
            Use<TcpBbr>();
        }
        else
        {
            Fail("unknown congestion control \"" + cc + "\" (linux-reno, newreno, cubic, bbr)");
        }
    }

    void Connected(Ptr<Socket> s)
    {
        Fill(s, s->GetTxAvailable());
    }

    // Fill keeps the send buffer full: a bulk writer.
    void Fill(Ptr<Socket> s, uint32_t)
    {
        while (s->GetTxAvailable() > 0)
        {
            uint32_t n = std::min<uint32_t>(s->GetTxAvailable(), 65536);
            if (s->Send(Create<Packet>(n)) < 0)
            {
                break;
            }
        }
    }

    void OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        uint32_t len = p->GetSize();
        if (len == 0)
        {
            return;
        }
        m_segs++;
        SequenceNumber32 end = h.GetSequenceNumber() + len;
        if (m_sentAny && h.GetSequenceNumber() < m_highEnd)
        {
            m_retrans++;
        }
        if (!m_sentAny || end > m_highEnd)
        {
            m_highEnd = end;
        }
        m_sentAny = true;
    }

    // An episode runs from entering Recovery or Loss until the first state
    // outside them, as emuctl reads Linux's tcp_cong_state_set.
    void OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
    {
        bool in = now == TcpSocketState::CA_RECOVERY || now == TcpSocketState::CA_LOSS;
        double t = Simulator::Now().GetSeconds();
        if (in && !m_inEpisode)
        {
            m_inEpisode = true;
            m_episodeStart = t;
            m_episodeRto = false;
        }
        if (in && now == TcpSocketState::CA_LOSS)
        {
            m_episodeRto = true;
        }
        if (!in && m_inEpisode)
        {
            m_inEpisode = false;
            m_episodes.push_back(t - m_episodeStart);
            m_rtoEpisodes += m_episodeRto ? 1 : 0;
        }
    }

    void OnCwnd(uint32_t, uint32_t now)
    {
        m_cwnd = now;
        m_cwndMax = std::max(m_cwndMax, double(now));
    }

    void OnRtt(Time, Time now)
    {
        if (now.IsStrictlyPositive() && (m_minRtt.IsZero() || now < m_minRtt))
        {
            m_minRtt = now;
        }
    }

    Ptr<TcpSocketBase> m_sock;
    Ptr<PacketSink> m_sink;
    std::function<uint64_t()> m_rtoCount;
    uint64_t m_rxSteady0 = 0;
    uint64_t m_segs = 0;
    uint64_t m_retrans = 0;
    bool m_sentAny = false;
    SequenceNumber32 m_highEnd{0};
    bool m_inEpisode = false;
    bool m_episodeRto = false;
    double m_episodeStart = 0;
    uint64_t m_rtoEpisodes = 0;
    std::vector<double> m_episodes; // seconds
    std::vector<double> m_srttMs;
    std::vector<double> m_cwndBytes;
    double m_cwnd = 0;
    double m_cwndMax = 0;
    Time m_minRtt{0};
};

// UdpStream is a constant-rate UDP flow (SeqTsHeader in each datagram)
// whose receiver records one-way delays, as emuctl's UDP flows do.
class UdpStream
{
  public:
    std::string name;

    // Start sends size-byte payloads at rate bps from `from` to dst
    // (port), starting at `at` and stopping at `stop`.
    void Start(Ptr<Node> from, Ptr<Node> to, Ipv4Address dst, uint16_t port, double bps,
               uint32_t size, double at, double stop)
    {
        m_rx = Socket::CreateSocket(to, UdpSocketFactory::GetTypeId());
        m_rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        m_rx->SetRecvCallback(MakeCallback(&UdpStream::Receive, this));
        UdpClientHelper c(dst, port);
        c.SetAttribute("MaxPackets", UintegerValue(std::numeric_limits<uint32_t>::max()));
        c.SetAttribute("Interval", TimeValue(Seconds(size * 8.0 / bps)));
        c.SetAttribute("PacketSize", UintegerValue(size));
        ApplicationContainer a = c.Install(from);
        a.Start(Seconds(at));
        a.Stop(Seconds(stop));
        m_size = size;
    }

    void SetWindow(double from, double to)
    {
        m_from = from;
        m_to = to;
    }

    Obj Json() const
    {
        Summary d = Summarise(m_owdMs);
        Obj o;
        o.Add("proto", "udp");
        o.Add("received", double(m_received)).Add("sent", double(m_maxSeq + 1));
        o.Add("udp_loss", m_maxSeq >= 0 ? 1.0 - double(m_received) / (m_maxSeq + 1) : NAN);
        o.Add("owd_mean_ms", d.mean).Add("owd_p95_ms", d.p95);
        o.Add("owd_p99_ms", Percentile(m_owdMs, 0.99)).Add("owd_max_ms", d.max);
        o.Add("owd_min_ms", m_owdMs.empty() ? NAN : *std::min_element(m_owdMs.begin(), m_owdMs.end()));
        o.Add("jitter_ms", m_jitter * 1000);
        o.Add("samples", double(m_owdMs.size()));
        return o;
    }

  private:
    void Receive(Ptr<Socket> s)
    {
        Ptr<Packet> p;
        while ((p = s->Recv()))
        {
            SeqTsHeader h;
            p->RemoveHeader(h);
            double now = Simulator::Now().GetSeconds();
            double owd = now - h.GetTs().GetSeconds();
            m_received++;
            m_maxSeq = std::max<int64_t>(m_maxSeq, h.GetSeq());
            if (now < m_from || now > m_to)
            {
                continue;
            }
            m_owdMs.push_back(owd * 1000);
            // RFC 3550 interarrival jitter over the steady window
            if (m_haveLast)
            {
                m_jitter += (std::fabs(owd - m_lastOwd) - m_jitter) / 16;
            }
            m_lastOwd = owd;
            m_haveLast = true;
        }
    }

    Ptr<Socket> m_rx;
    uint32_t m_size = 0;
    double m_from = 0;
    double m_to = 1e9;
    uint64_t m_received = 0;
    int64_t m_maxSeq = -1;
    std::vector<double> m_owdMs;
    double m_jitter = 0;
    double m_lastOwd = 0;
    bool m_haveLast = false;
};

// RemoveQueueDiscs takes the traffic-control layer off every device (the
// Ipv4AddressHelper installs FqCoDel by default), so each device's own
// drop-tail queue is the only queue, as a lab link's bounded queue is.
inline void
RemoveQueueDiscs(NodeContainer nodes)
{
    TrafficControlHelper tch;
    for (uint32_t i = 0; i < nodes.GetN(); i++)
    {
        Ptr<Node> n = nodes.Get(i);
        for (uint32_t d = 0; d < n->GetNDevices(); d++)
        {
            Ptr<NetDevice> dev = n->GetDevice(d);
            Ptr<TrafficControlLayer> tc = n->GetObject<TrafficControlLayer>();
            if (tc && tc->GetRootQueueDiscOnDevice(dev))
            {
                tch.Uninstall(dev);
            }
        }
    }
}

// CpuSeconds is the process's CPU time so far.
inline double
CpuSeconds()
{
    return double(std::clock()) / CLOCKS_PER_SEC;
}

} // namespace emuctl

#endif
