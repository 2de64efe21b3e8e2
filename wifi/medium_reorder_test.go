package wifi

import (
	"slices"
	"testing"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
)

// mloQoS is a unicast QoS data frame with TID tid and a marker byte.
func mloQoS(tid, mark byte) []byte {
	d := make([]byte, 40)
	d[0] = 0x88 // QoS data
	d[4] = 0x02 // unicast RA
	d[24] = tid
	d[30] = mark
	return d
}

// TestReorder: a multi-link sender's frames reach the receiver in the
// order sent, per TID: one that arrives early waits for the earlier ones,
// which either arrive or fail for good; a reorder timeout gives up on a
// missing one; other TIDs and untracked frames pass.
func TestReorder(t *testing.T) {
	r := newReorder[[]byte]()
	var got []byte
	deliver := func(d []byte) { got = append(got, d[30]) }
	frames := make([]*model.MediumFrame, 6)
	for i := range frames {
		tid := byte(0)
		if i == 5 {
			tid = 6
		}
		frames[i] = &model.MediumFrame{Radio: 0, Data: mloQoS(tid, byte(i))}
		r.track(frames[i], 1)
	}
	recv := func(now time.Duration, i int) {
		if r.received(now, frames[i], frames[i].Data, deliver) {
			deliver(frames[i].Data)
		}
	}
	recv(0, 1) // early: held
	recv(0, 5) // another TID: goes
	if !slices.Equal(got, []byte{5}) {
		t.Fatalf("delivered %v, want [5] (frame 1 held for frame 0)", got)
	}
	recv(time.Millisecond, 0) // 0, then the held 1
	if !slices.Equal(got, []byte{5, 0, 1}) {
		t.Fatalf("delivered %v, want [5 0 1]", got)
	}
	recv(2*time.Millisecond, 3) // held for 2
	r.status(frames[2], deliver)
	if !slices.Equal(got, []byte{5, 0, 1, 3}) {
		t.Fatalf("frame 2 failed for good: delivered %v, want 3 released", got)
	}
	// 4 stays missing: nothing behind it; a later frame waits for it
	// until the reorder timeout
	f6 := &model.MediumFrame{Radio: 0, Data: mloQoS(0, 6)}
	r.track(f6, 1)
	if r.received(10*time.Millisecond, f6, f6.Data, deliver) {
		t.Fatal("frame 6 not held behind 4")
	}
	r.expire(50*time.Millisecond, deliver)
	if len(got) != 4 {
		t.Fatalf("released before the timeout: %v", got)
	}
	r.expire(10*time.Millisecond+reorderTimeout, deliver)
	if !slices.Equal(got, []byte{5, 0, 1, 3, 6}) {
		t.Fatalf("after the timeout: %v", got)
	}
	if !r.received(time.Second, frames[4], frames[4].Data, deliver) {
		t.Error("frame 4 after the timeout was held again")
	}
	for _, f := range append(frames, f6) {
		r.status(f, deliver)
	}
	if len(r.fifo) != 0 || len(r.byFrame) != 0 || r.held != 0 || r.Held != 3 {
		t.Errorf("left: %d queues, %d frames, %d held; held in all %d (want 3)", len(r.fifo), len(r.byFrame), r.held, r.Held)
	}
	// a refused frame no longer blocks
	a := &model.MediumFrame{Data: mloQoS(0, 7)}
	b := &model.MediumFrame{Data: mloQoS(0, 8)}
	r.track(a, 1)
	r.track(b, 1)
	r.untrack(a)
	if r.received(0, b, b.Data, deliver) || got[len(got)-1] != 8 {
		t.Errorf("frame after a refused one held: %v", got)
	}
}
