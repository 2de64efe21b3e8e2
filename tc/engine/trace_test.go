package engine

import (
	"net"
	"sort"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/mmtrace"
	"golang.org/x/sys/unix"
)

// stepTrace is a looping 3 s trace: 1 s at 8 Mbit/s (two opportunities
// every 3 ms), a 500 ms outage, then 1.5 s of bursts (five opportunities
// every 15 ms: 4 Mbit/s).
func stepTrace() []uint32 {
	var ms []uint32
	for t := uint32(1); t < 1000; t += 3 {
		ms = append(ms, t, t)
	}
	for t := uint32(1500); t < 3000; t += 15 {
		ms = append(ms, t, t, t, t, t)
	}
	return append(ms, 3000)
}

// opportunities counts a looping trace's opportunities at trace times
// ≤ d.
func opportunities(ms []uint32, d time.Duration) int {
	period := time.Duration(ms[len(ms)-1]) * time.Millisecond
	cycles := int(d / period)
	rest := uint32((d - time.Duration(cycles)*period) / time.Millisecond)
	return cycles*len(ms) + sort.Search(len(ms), func(i int) bool { return ms[i] > rest })
}

// TestEngineTraceDelivery sends UDP datagrams of 1472 bytes (1514-byte
// frames: one opportunity each) at 12 Mbit/s, above the trace's best
// rate, through a traced direction with a 50-packet drop-tail queue. At
// every instant the receiver must have got at most as many datagrams as
// the trace had opportunities since the engine started, and over the run
// all of them but what the queue holds at the end.
func TestEngineTraceDelivery(t *testing.T) {
	ms := stepTrace()
	d := tc.Dir{Trace: &tc.Trace{File: "step", Loop: true, Ms: ms}, QueuePackets: 50}
	l := &engineLab{}
	l.h1, l.e, l.h2 = engineNodes(t)
	before := time.Now() // the engine's clock (and the trace) start after this
	l.start(t, d, tc.Dir{}, 1)

	var rx *net.UDPConn
	if err := nsutil.Do(l.h2.NS, func() (err error) {
		rx, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(ip2), Port: 6001})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Arrivals are the kernel's receive timestamps (SO_TIMESTAMPNS), not
	// when this goroutine got to read them: a test process kept off the
	// CPU would otherwise count datagrams that arrived in time as late.
	raw, err := rx.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		t.Fatalf("SO_TIMESTAMPNS: %v %v", err, serr)
	}
	var mu sync.Mutex
	var arrivals []time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		oob := make([]byte, 128)
		for {
			_, oobn, _, _, err := rx.ReadMsgUDP(buf, oob)
			if err != nil {
				return
			}
			at := time.Now()
			if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
				for _, m := range msgs {
					if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
						ts := *(*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
						at = time.Unix(ts.Unix())
					}
				}
			}
			mu.Lock()
			arrivals = append(arrivals, at)
			mu.Unlock()
		}
	}()
	var tx *net.UDPConn
	if err := nsutil.Do(l.h1.NS, func() (err error) {
		tx, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.ParseIP(ip2), Port: 6001})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer tx.Close()

	// 1000 datagrams a second in bursts of 5 every 5 ms, on absolute
	// deadlines; a sender that falls 60 ms behind (75 ms of queue at the
	// best rate) could let the queue run dry, and the run is invalid.
	const dur = 6500 * time.Millisecond
	buf := make([]byte, 1472)
	start := time.Now()
	var worst, worstAt time.Duration
	sent := 0
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * 5 * time.Millisecond)
		if due.Sub(start) >= dur {
			break
		}
		time.Sleep(time.Until(due))
		if late := time.Since(due); late > worst {
			worst, worstAt = late, due.Sub(start)
		}
		for k := 0; k < 5; k++ {
			if _, err := tx.Write(buf); err != nil {
				t.Fatal(err)
			}
			sent++
		}
	}
	end := time.Now()
	time.Sleep(300 * time.Millisecond)
	rx.Close()
	<-done
	st := l.eng.Stats().AToB

	// Upper bound: datagram n (1-based) arrives no earlier than the n-th
	// opportunity. Counting from before the engine started only widens it.
	over := 0
	for i, a := range arrivals {
		if i+1 > opportunities(ms, a.Sub(before)) {
			if over == 0 {
				t.Errorf("datagram %d arrived %v after the start, when the trace had had only %d opportunities", i+1, a.Sub(before), opportunities(ms, a.Sub(before)))
			}
			over++
		}
	}
	// What the trace offered while the sender kept the queue busy, against
	// what arrived meanwhile: from 300 ms after the first arrival (the
	// queue fills first: at the trace's best rate, 2 opportunities every
	// 3 ms against 5 datagrams every 5 ms, it grows by a third of a packet
	// a millisecond, 150 ms to 50; a sender held off the CPU before then
	// lets it run dry, after then it holds 75 ms) to the end of sending.
	from := arrivals[0].Add(300 * time.Millisecond)
	offered := opportunities(ms, end.Sub(before)) - opportunities(ms, from.Sub(before))
	got := 0
	for _, a := range arrivals {
		if a.After(from) && !a.After(end) {
			got++
		}
	}
	t.Logf("sent %d datagrams in %v (sender at most %v late, at %v); received %d (%d while the queue was full, to the end of sending) of %d opportunities offered meanwhile (%.3f); engine a→b in %d out %d queue drops %d peak queue %d, late mean %v max %v",
		sent, end.Sub(start), worst, worstAt.Round(time.Millisecond), len(arrivals), got, offered, float64(got)/float64(offered), st.InPackets, st.OutPackets, st.QueueDrops, st.QueuePeak, st.LateMean, st.LateMax)
	if over > 0 {
		t.Fatalf("%d datagrams arrived ahead of the trace's opportunities", over)
	}
	if cost := st.OutBytes - 10*st.OutPackets; cost > mmtrace.Bytes*st.TraceOpps {
		t.Errorf("the engine delivered %d bytes of cost in %d opportunities (%d bytes)", cost, st.TraceOpps, mmtrace.Bytes*st.TraceOpps)
	}
	t.Logf("engine counters: %d opportunities offered, %d frames out (%.3f of them)", st.TraceOpps, st.OutPackets, float64(st.OutPackets)/float64(st.TraceOpps))
	if st.QueuePeak > 51 {
		t.Errorf("queue peak %d: the limit counts 50 waiting packets plus the one in transit", st.QueuePeak)
	}
	if worst > 60*time.Millisecond {
		t.Skipf("CPU-starved run: the sender fell %v behind, the queue may have run dry; the lower bound is not checked", worst)
	}
	if got < offered-5 {
		t.Errorf("received %d datagrams while the trace offered %d opportunities to a busy queue", got, offered)
	}
}
