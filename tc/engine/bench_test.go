package engine

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/emuctl/emuctl/internal/testutil/netlab"
	"github.com/emuctl/emuctl/tc"
)

// Engine throughput benchmarks (root). The traffic generators run in the
// same process, so ns/op is the end-to-end cost per packet or per MB.

// BenchmarkEngineUDP pushes b.N 1472-byte datagrams h1 → h2 and reports
// what got through per second.
func BenchmarkEngineUDP(b *testing.B) {
	for _, c := range []struct {
		name string
		d    tc.Dir
	}{
		{"unshaped", tc.Dir{}},
		{"delay1ms", tc.Dir{Delay: time.Millisecond}},
		{"rate1G-loss1%", tc.Dir{Rate: 1e9, Loss: 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			l := newEngineLab(b, c.d, tc.Dir{}, 1)
			sink := netlab.NewUDPSink(b, l.h2, ip2, 6100)
			b.SetBytes(1472)
			b.ResetTimer()
			t0 := time.Now()
			netlab.UDPSend(b, l.h1, ip2, 6100, b.N, 1472, 64, 0)
			// wait until every datagram is accounted for, or nothing moves
			var st DirStats
			last, lastChange := -1, time.Now()
			for time.Since(lastChange) < 500*time.Millisecond {
				st = l.eng.Stats().AToB
				done := sink.Count() + int(st.LossDrops+st.QueueDrops+st.RecvDrops)
				if done >= b.N {
					break
				}
				if done != last {
					last, lastChange = done, time.Now()
				}
				time.Sleep(200 * time.Microsecond)
			}
			el := time.Since(t0).Seconds()
			b.ReportMetric(float64(sink.Count())/el, "delivered/s")
			b.ReportMetric(float64(sink.Count())/float64(b.N), "delivered/sent")
		})
	}
}

// BenchmarkEngineTCP moves b.N MB over one TCP connection h1 → h2.
func BenchmarkEngineTCP(b *testing.B) {
	for _, c := range []struct {
		name string
		d    tc.Dir
	}{
		{"delay10ms", tc.Dir{Delay: 10 * time.Millisecond}},
		{"rate1G-delay1ms", tc.Dir{Rate: 1e9, Delay: time.Millisecond}},
	} {
		b.Run(c.name, func(b *testing.B) {
			l := newEngineLab(b, c.d, c.d, 1)
			var ln net.Listener
			if err := nsutil.Do(l.h2.NS, func() (err error) { ln, err = net.Listen("tcp4", ip2+":5100"); return }); err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			got := make(chan int64, 1)
			go func() {
				cn, err := ln.Accept()
				if err != nil {
					got <- 0
					return
				}
				n, _ := io.Copy(io.Discard, cn)
				got <- n
			}()
			var conn net.Conn
			if err := nsutil.Do(l.h1.NS, func() (err error) {
				d := net.Dialer{Control: netlab.SetCubic}
				conn, err = d.Dial("tcp4", ip2+":5100")
				return
			}); err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 1<<20)
			b.SetBytes(1 << 20)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := conn.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			conn.Close()
			if n := <-got; n != int64(b.N)<<20 {
				b.Fatalf("received %d of %d bytes", n, b.N<<20)
			}
		})
	}
}
