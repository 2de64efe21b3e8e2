package wifi

import (
	"time"

	"github.com/emuctl/emuctl/wifi/model"
)

// The receive reorder buffer of a multi-link device. mac80211_hwsim sends
// an MLD's data frames on its links in turn, and on the medium every link
// has its own channel access: a frame on one link often ends before the
// frame sent just before it on the other. An 802.11be receiver MLD puts
// them back in order — the Block Ack agreement of an MLD is per TID
// across its links, with one sequence-number space and one reorder buffer
// (IEEE 802.11be 35.3.8). mac80211 has that buffer only for a Block Ack
// agreement, which the medium never lets form (see MediumServer.schedule:
// ADDBA), so without this the kernel would see the frames in air order:
// TCP, taking the reordering for loss, measured 0.9-2.2 Mbit/s over two
// links where one link alone carried 4.4 (kernel lab, Debian 6.12, TCG).
//
// So the medium delivers a multi-link transmitter's unicast QoS data to
// each receiver in the order the transmitter sent it, per TID: a frame
// that arrives before an earlier one is held until the earlier one has
// arrived or has failed for good (its final status), or, as mac80211's
// reorder timeout (HT_RX_REORDER_BUF_TIMEOUT, 100 ms) does, until it has
// waited reorderTimeout.

const reorderTimeout = 100 * time.Millisecond

type reoKey struct{ tx, rx, tid int }

type reoEntry struct {
	key      reoKey
	arrived  bool // received, waiting for earlier frames
	finished bool // delivered, failed for good or given up on
	heldAt   time.Duration
	// what to deliver
	rxPerm [6]byte
	data   []byte
	rate   uint32
	sig    int
	freq   int
}

type reorder struct {
	fifo    map[reoKey][]*reoEntry
	byFrame map[*model.MediumFrame]*reoEntry
	held    int
	// Held counts frames delivered later than they arrived.
	Held uint64
}

func newReorder() *reorder {
	return &reorder{fifo: map[reoKey][]*reoEntry{}, byFrame: map[*model.MediumFrame]*reoEntry{}}
}

// qosTID is the TID of a unicast QoS data frame (false: not one).
func qosTID(d []byte) (int, bool) {
	if len(d) < 26 || (d[0]>>2)&3 != 2 || d[0]&0x80 == 0 || d[4]&1 != 0 {
		return 0, false
	}
	hl := 24
	if d[1]&3 == 3 {
		hl = 30
	}
	if len(d) < hl+2 {
		return 0, false
	}
	return int(d[hl] & 0x0f), true
}

// track records a multi-link radio's frame f (radio tx) to radio rx.
func (r *reorder) track(f *model.MediumFrame, rx int) {
	tid, ok := qosTID(f.Data)
	if !ok {
		return
	}
	e := &reoEntry{key: reoKey{f.Radio, rx, tid}}
	r.fifo[e.key] = append(r.fifo[e.key], e)
	r.byFrame[f] = e
}

// untrack forgets f (the medium refused it).
func (r *reorder) untrack(f *model.MediumFrame) {
	e := r.byFrame[f]
	if e == nil {
		return
	}
	delete(r.byFrame, f)
	q := r.fifo[e.key]
	for i, x := range q {
		if x == e {
			r.fifo[e.key] = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(r.fifo[e.key]) == 0 {
		delete(r.fifo, e.key)
	}
}

// deliverFunc hands a frame to the kernel.
type deliverFunc func(rxPerm [6]byte, data []byte, rate uint32, sig, freq int)

// received handles a reception of f: true when the caller delivers it
// (f is not held in order); false when the buffer delivered it, with the
// frames it held behind it, or holds it for later.
func (r *reorder) received(now time.Duration, f *model.MediumFrame, rxPerm [6]byte, rate uint32, sig, freq int, deliver deliverFunc) bool {
	e := r.byFrame[f]
	if e == nil || e.finished || e.arrived {
		return true // untracked, or a repeat: mac80211 drops duplicates itself
	}
	q := r.fifo[e.key]
	if len(q) > 0 && q[0] == e {
		// in order: it goes now, and the held ones right behind it
		e.finished = true
		deliver(rxPerm, f.Data, rate, sig, freq)
		r.flush(e.key, deliver)
		return false
	}
	e.arrived, e.heldAt = true, now
	e.rxPerm, e.data, e.rate, e.sig, e.freq = rxPerm, f.Data, rate, sig, freq
	r.held++
	r.Held++
	return false
}

// status handles f's final status: a frame never received stops blocking
// the ones after it.
func (r *reorder) status(f *model.MediumFrame, deliver deliverFunc) {
	e := r.byFrame[f]
	if e == nil {
		return
	}
	delete(r.byFrame, f)
	if !e.arrived {
		e.finished = true
	}
	r.flush(e.key, deliver)
}

// flush delivers, in order, the frames at the head of key's queue that
// may go.
func (r *reorder) flush(key reoKey, deliver deliverFunc) {
	q := r.fifo[key]
	for len(q) > 0 {
		h := q[0]
		switch {
		case h.arrived:
			h.arrived, h.finished = false, true
			r.held--
			deliver(h.rxPerm, h.data, h.rate, h.sig, h.freq)
			h.data = nil
		case !h.finished:
			r.fifo[key] = q
			return
		}
		q = q[1:]
	}
	delete(r.fifo, key)
}

// expire gives up waiting, as a reorder timeout does: a frame held for
// reorderTimeout releases the queue up to it (the frames before it that
// never arrived are then delivered on arrival, out of order).
func (r *reorder) expire(now time.Duration, deliver deliverFunc) {
	if r.held == 0 {
		return
	}
	for key, q := range r.fifo {
		last := -1
		for i, e := range q {
			if e.arrived && now-e.heldAt >= reorderTimeout {
				last = i
			}
		}
		if last < 0 {
			continue
		}
		for _, e := range q[:last] {
			if !e.arrived {
				e.finished = true
			}
		}
		r.flush(key, deliver)
	}
}
