package emu_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/traffic"
)

// TestCountersKernelQueue: a link shaped by the kernel at a forwarding
// hop (the switch's port towards h2; tbf here: rate only, a 50-packet
// queue) under a bulk CUBIC flow: the counters read its
// qdiscs' queue every 100 ms — it fills (CUBIC keeps a drop-tail queue
// full) and never holds more than its 50 packets — and count the
// overflow drops the flow causes; the other direction's queue stays near
// empty (ACKs at a tenth of the rate).
func TestCountersKernelQueue(t *testing.T) {
	upLab(t, `name: tckq
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch}
links:
  - {endpoints: [h1, s1]}
  - {endpoints: [s1, h2], link: {rate: 10mbit, queue: 50, backend: kernel}}
`)
	var mu sync.Mutex
	var maxAB, maxBA uint32
	var drops uint32
	n := 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			_, cs, err := emu.Counters("tckq")
			if err != nil || len(cs) != 2 || cs[1].Kernel == nil || cs[0].Kernel != nil {
				t.Errorf("counters: %+v, %v", cs, err)
				return
			}
			k := cs[1].Kernel // s1 → h2 is its a→b
			mu.Lock()
			maxAB, maxBA, drops = max(maxAB, k[0].Packets), max(maxBA, k[1].Packets), k[0].Drops
			n++
			mu.Unlock()
		}
	}()
	_, err := traffic.Run(context.Background(), "tckq", []traffic.Flow{{Client: "h1", Server: "h2", Duration: 5 * time.Second, Sock: traffic.SockOpts{CC: "cubic"}}}, traffic.Options{})
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d readings: a→b queue up to %d packets, b→a up to %d; a→b drops %d", n, maxAB, maxBA, drops)
	if maxAB < 25 || maxAB > 50 || maxBA > 5 || drops == 0 {
		t.Errorf("a→b queue up to %d packets (want it filled: 25..50 of its 50), b→a up to %d (want ≤ 5), drops %d (want > 0)", maxAB, maxBA, drops)
	}
}
