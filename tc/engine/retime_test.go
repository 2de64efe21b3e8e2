package engine

import (
	"math"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil/netlab"
	"github.com/emuctl/emuctl/tc"
)

// TestQueueRetime: ten 1514-byte frames queued at 1 Mbit/s (12.112 ms
// each) behind a 5 ms delay; at 20 ms the rate becomes 10 Mbit/s. The
// second frame, in service since 12.112 ms, has 4.224 ms of bits left at
// the old rate: 0.4224 ms at the new one; the eight behind it follow
// 1.2112 ms apart. Each due time moves with its departure, the line
// keeps its order, and a new frame queues behind the last.
func TestQueueRetime(t *testing.T) {
	d := tc.Dir{Rate: 1e6, Delay: 5 * time.Millisecond, QueuePackets: 100}
	pl := newPipeline(d, 1500, newRand(1, 1))
	var line fifoLine
	for i := 0; i < 10; i++ {
		p := wirePacket(1514)
		due, v := pl.run(p, 0)
		if v != pass {
			t.Fatal(v)
		}
		p.due = due
		line.push(p)
	}
	now := int64(20 * time.Millisecond)
	d.Rate = 10e6
	if !pl.retime(now, d) {
		t.Fatal("nothing re-timed")
	}
	frame := func(rate float64) float64 { return 1514 * 8 / rate * 1e9 }
	want := []float64{frame(1e6), float64(now) + (2*frame(1e6)-float64(now))/10}
	for i := 2; i < 10; i++ {
		want = append(want, want[i-1]+frame(10e6))
	}
	for i := 0; i < 10; i++ {
		p := line.ring[i]
		w := want[i] + 5e6
		if math.Abs(float64(p.due)-w) > 2 {
			t.Errorf("frame %d due at %.4f ms, want %.4f ms", i, float64(p.due)/1e6, w/1e6)
		}
	}
	pl.reconfigure(d, 1500, now, nil)
	due, _ := pl.run(wirePacket(1514), now)
	if w := want[9] + frame(10e6) + 5e6; math.Abs(float64(due)-w) > 2 {
		t.Errorf("new frame due at %.4f ms, want %.4f ms", float64(due)/1e6, w/1e6)
	}
	// slower: the same ten frames at 10 Mbit/s, then 1 Mbit/s at 3 ms
	pl = newPipeline(tc.Dir{Rate: 10e6, QueuePackets: 100}, 1500, newRand(1, 1))
	var last *packet
	for i := 0; i < 10; i++ {
		last = wirePacket(1514)
		last.due, _ = pl.run(last, 0)
	}
	pl.retime(3e6, tc.Dir{Rate: 1e6})
	// 2 frames done, the third (2.4224..3.6336 ms) has 0.6336 ms left → 6.336 ms, 7 more at 12.112 ms
	if w := 3e6 + (3*frame(10e6)-3e6)*10 + 7*frame(1e6); math.Abs(float64(last.due)-w) > 2 {
		t.Errorf("slower: last frame due at %.4f ms, want %.4f ms", float64(last.due)/1e6, w/1e6)
	}
}

// TestEngineRateChangeRetimes: a burst of 20 datagrams (1514-byte frames)
// queues at 1 Mbit/s — 242 ms to drain; 50 ms later the rate becomes
// 10 Mbit/s. The last datagram must arrive after about 50 ms + the 16
// frames left at 1.2 ms each ≈ 70 ms (the queued frames take the new
// rate), not after 242 ms (what keeping their times gave).
func TestEngineRateChangeRetimes(t *testing.T) {
	d := tc.Dir{Rate: 1e6, QueuePackets: 100}
	l := newEngineLab(t, d, tc.Dir{}, 1)
	sink := netlab.NewUDPSink(t, l.h2, ip2, 6002)
	start := time.Now()
	netlab.UDPSend(t, l.h1, ip2, 6002, 20, 1472, 20, 0)
	sent := time.Since(start)
	time.Sleep(50*time.Millisecond - sent)
	at := time.Since(start)
	d.Rate = 10e6
	if err := l.eng.Update(d, tc.Dir{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	delays := sink.Delays()
	if len(delays) != 20 {
		t.Fatalf("%d of 20 datagrams arrived", len(delays))
	}
	last := delays[len(delays)-1]
	// before the change: ⌊at / 12.112 ms⌋ frames out, one in service
	done := int(at.Seconds() / (1514 * 8 / 1e6))
	left := float64(19-done) * 1514 * 8 / 10e6
	want := at + time.Duration(left*1e9)
	t.Logf("burst sent in %v, rate changed at %v (%d frames out): last datagram after %v (expected ≈ %v; keeping old times: 242 ms)", sent, at, done, last, want)
	if sent > 10*time.Millisecond || at > 60*time.Millisecond {
		t.Skipf("CPU-starved run: the burst took %v, the change came at %v", sent, at)
	}
	if last > want+15*time.Millisecond+netlab.LabSlack() || last < want-12200*time.Microsecond {
		t.Errorf("last datagram after %v, expected %v (−1 frame at 1 Mbit/s, +15 ms)", last, want)
	}
}
