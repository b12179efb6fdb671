// ns-3 (3.37, Debian's libns3-dev) twin of tcplab's dumbbell, for bench/run.py.
// Built by the suite on first use (g++ with pkg-config); never committed as a binary.
//
// Reads a plan written by bench/run.py from the resolved scenario (the same plan the
// ns-2 export uses, so start times and UDP departure times are identical):
//   duration <s>
//   seed <n>
//   bottleneck <rate_bps> <delay_s> <buffer_pkts>
//   flow <tcp|udp> <variant> <start_s> <stop_s> <packet_size> <acc_rate> <acc_delay> <acc_buf>
//        <sink_rate> <sink_delay> <sink_buf> <per> <udp_times_file|->     (one line)
// Prints "ns3 <version> events <n> setup_s <s> run_s <s> delivered <total>" and one
// "flow <i> <delivered_packets>" per flow.
//
// Matching ns-2/tcplab as closely as ns-3 allows: packet_size bytes on the wire
// (IP 20 + TCP 20 + PPP 2 headers; no timestamps), initial window 2, no delayed acks,
// min RTO 200 ms, 10 ms clock granularity, classic (non-PRR) recovery, SACK only for
// variant "sack"; buffers are the devices' DropTail queues with the traffic-control layer
// removed (a queue of B waiting packets, the packet on the wire not counted, as tcplab).
// ns-3's TCP is NewReno-like in recovery for every variant: the work is similar, not equal.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/nix-vector-routing-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>
#include <algorithm>

using namespace ns3;

struct FlowPlan
{
    std::string kind, variant, times;
    double start, stop, accRate, accDelay, sinkRate, sinkDelay, per;
    uint32_t size, accBuf, sinkBuf;
};

// UDP source sending at precomputed departure times (tcplab's own shaped-source
// departures), one event per packet, as ns-2's trace-driven source does.
class TimedUdpSource : public Application
{
  public:
    void Setup(Address peer, uint32_t payload, std::vector<double> times)
    {
        m_peer = peer;
        m_payload = payload;
        m_times = std::move(times);
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        m_socket->Connect(m_peer);
        ScheduleNext();
    }

    void StopApplication() override
    {
        Simulator::Cancel(m_ev);
    }

    void ScheduleNext()
    {
        if (m_next < m_times.size())
        {
            double at = m_times[m_next++];
            double now = Simulator::Now().GetSeconds();
            m_ev = Simulator::Schedule(Seconds(at > now ? at - now : 0), &TimedUdpSource::Send, this);
        }
    }

    void Send()
    {
        m_socket->Send(Create<Packet>(m_payload));
        ScheduleNext();
    }

    Ptr<Socket> m_socket;
    Address m_peer;
    uint32_t m_payload = 0;
    std::vector<double> m_times;
    size_t m_next = 0;
    EventId m_ev;
};

static std::string
Bps(double r)
{
    std::ostringstream s;
    s << static_cast<uint64_t>(r) << "bps";
    return s.str();
}

static std::string
Pkts(uint32_t n)
{
    return std::to_string(n == 0 ? 1 : n) + "p";
}

int
main(int argc, char* argv[])
{
    auto t0 = std::chrono::steady_clock::now();
    if (argc != 2)
    {
        std::cerr << "usage: dumbbell PLAN\n";
        return 2;
    }
    std::ifstream in(argv[1]);
    double duration = 0, bRate = 0, bDelay = 0;
    uint32_t bBuf = 0, seed = 1;
    std::vector<FlowPlan> flows;
    std::string key;
    while (in >> key)
    {
        if (key == "duration")
            in >> duration;
        else if (key == "seed")
            in >> seed;
        else if (key == "bottleneck")
            in >> bRate >> bDelay >> bBuf;
        else if (key == "flow")
        {
            FlowPlan f;
            in >> f.kind >> f.variant >> f.start >> f.stop >> f.size >> f.accRate >> f.accDelay >>
                f.accBuf >> f.sinkRate >> f.sinkDelay >> f.sinkBuf >> f.per >> f.times;
            flows.push_back(f);
        }
        else
        {
            std::cerr << "bad plan key " << key << "\n";
            return 2;
        }
    }
    if (flows.empty() || duration <= 0)
    {
        std::cerr << "plan has no flows or no duration\n";
        return 2;
    }
    std::string variant;
    uint32_t tcpSize = 0;
    for (auto& f : flows)
    {
        if (f.kind != "tcp")
            continue;
        if (!variant.empty() && (variant != f.variant || tcpSize != f.size))
        {
            std::cerr << "one TCP variant and packet size per run\n";
            return 2;
        }
        variant = f.variant;
        tcpSize = f.size;
    }
    const uint32_t hdr = 20 + 20 + 2; // IPv4 + TCP (no options on data) + PPP
    RngSeedManager::SetSeed(seed + 1);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(variant == "sack"));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(10)));
    if (tcpSize > hdr)
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(tcpSize - hdr));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    // Socket buffers: twice the most a flow can have in flight (bottleneck BDP + its
    // buffer), so the window, not the buffer, limits the flow. ns-3 keeps unsent data in
    // the send buffer and scans it, so a needlessly huge buffer costs time and memory.
    double rtt = 2 * bDelay;
    for (auto& f : flows)
        rtt = std::max(rtt, 2 * (f.accDelay + bDelay + f.sinkDelay));
    uint32_t mss = tcpSize > hdr ? tcpSize - hdr : 536;
    uint64_t inflight = static_cast<uint64_t>(bRate * rtt / 8 / (mss + hdr)) + bBuf;
    uint64_t bufBytes = std::max<uint64_t>(64, 2 * inflight) * mss;
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufBytes));

    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders, sinks;
    senders.Create(flows.size());
    sinks.Create(flows.size());
    // Nix-vector routing (ns-3's routing for large simulations: a path computed once per
    // destination and cached). Global routing's tables are scanned linearly on every packet,
    // which made the routers' cost per packet grow with the number of flows (46 us/event at
    // 100 flows against 13 us at 1); the twin should not lose by a configuration choice.
    Ipv4NixVectorHelper nix;
    InternetStackHelper stack;
    stack.SetRoutingHelper(nix);
    stack.InstallAll();
    TrafficControlHelper tch;
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");

    auto link = [&](Ptr<Node> a, Ptr<Node> b, double rate, double delay, uint32_t buf) {
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", StringValue(Bps(rate)));
        p2p.SetChannelAttribute("Delay", TimeValue(Seconds(delay)));
        p2p.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize(Pkts(buf))));
        NetDeviceContainer d = p2p.Install(a, b);
        Ipv4InterfaceContainer ifc = addr.Assign(d);
        addr.NewNetwork();
        tch.Uninstall(d); // no queue disc: the device queue is the buffer
        return std::make_pair(d, ifc);
    };
    link(routers.Get(0), routers.Get(1), bRate, bDelay, bBuf);
    std::vector<Ptr<PacketSink>> sinkApps;
    for (size_t i = 0; i < flows.size(); ++i)
    {
        const FlowPlan& f = flows[i];
        link(senders.Get(i), routers.Get(0), f.accRate, f.accDelay, f.accBuf);
        auto sl = link(routers.Get(1), sinks.Get(i), f.sinkRate, f.sinkDelay, f.sinkBuf);
        if (f.per > 0)
        {
            Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
            em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
            em->SetRate(f.per);
            sl.first.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em)); // data only
        }
        Address sinkAddr(InetSocketAddress(sl.second.GetAddress(1), 9000));
        bool tcp = f.kind == "tcp";
        PacketSinkHelper sh(tcp ? "ns3::TcpSocketFactory" : "ns3::UdpSocketFactory",
                            InetSocketAddress(Ipv4Address::GetAny(), 9000));
        ApplicationContainer sa = sh.Install(sinks.Get(i));
        sa.Start(Seconds(0));
        sinkApps.push_back(DynamicCast<PacketSink>(sa.Get(0)));
        if (tcp)
        {
            BulkSendHelper bs("ns3::TcpSocketFactory", sinkAddr);
            bs.SetAttribute("MaxBytes", UintegerValue(0));
            bs.SetAttribute("SendSize", UintegerValue(f.size - hdr));
            ApplicationContainer a = bs.Install(senders.Get(i));
            a.Start(Seconds(f.start));
            a.Stop(Seconds(f.stop));
        }
        else
        {
            std::vector<double> times;
            std::ifstream tf(f.times);
            double t;
            while (tf >> t)
                times.push_back(t);
            Ptr<TimedUdpSource> app = CreateObject<TimedUdpSource>();
            app->Setup(sinkAddr, f.size - 28 - 2, times);
            senders.Get(i)->AddApplication(app);
            app->SetStartTime(Seconds(f.start));
            app->SetStopTime(Seconds(f.stop));
        }
    }
    Simulator::Stop(Seconds(duration));
    auto t1 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t2 = std::chrono::steady_clock::now();
    uint64_t total = 0;
    std::vector<uint64_t> per;
    for (size_t i = 0; i < flows.size(); ++i)
    {
        uint32_t payload = flows[i].kind == "tcp" ? flows[i].size - hdr : flows[i].size - 30;
        uint64_t n = sinkApps[i]->GetTotalRx() / payload;
        per.push_back(n);
        total += n;
    }
    std::cout << "ns3 3.37 events " << Simulator::GetEventCount() << " setup_s "
              << std::chrono::duration<double>(t1 - t0).count() << " run_s "
              << std::chrono::duration<double>(t2 - t1).count() << " delivered " << total << "\n";
    for (size_t i = 0; i < per.size(); ++i)
        std::cout << "flow " << i << " " << per[i] << "\n";
    Simulator::Destroy();
    return 0;
}
