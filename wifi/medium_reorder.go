package wifi

import (
	"time"

	"github.com/emuctl/emuctl/wifi/model"
)

// The receive reorder buffer of a Block Ack agreement. With one (HT and
// later: every A-MPDU is sent under one), the receiver holds MPDUs that
// arrive after a gap and hands them up in sequence order once the gap is
// filled or given up (IEEE 802.11-2016 10.24.4). Gaps are common: an
// A-MPDU whose first subframes a collision or a fade destroyed still
// delivers the later ones, and the lost ones follow in a retry. Without
// the buffer TCP sees that as reordering, sends SACKs and retransmits
// spuriously (measured on the engine medium, 802.11n MCS 7: 764 segments
// out of order in 8 s, 18 spurious retransmissions).
//
// A multi-link device needs it even more: mac80211_hwsim sends an MLD's
// data frames on its links in turn, and on the medium every link has its
// own channel access, so a frame on one link often ends before the frame
// sent just before it on the other. An 802.11be receiver MLD puts them
// back in order — the Block Ack agreement of an MLD is per TID across its
// links, with one sequence-number space and one reorder buffer (IEEE
// 802.11be 35.3.8). Without it TCP measured 0.9-2.2 Mbit/s over two links
// where one link alone carried 4.4 (kernel lab, Debian 6.12, TCG).
//
// mac80211 has the buffer only for a Block Ack agreement, which the
// medium never lets form on hwsim (see MediumServer.schedule: ADDBA), and
// the engine medium is the whole MAC. So the medium itself delivers a
// transmitter's unicast QoS data to each receiver in the order the
// transmitter sent it, per TID: a frame that arrives before an earlier
// one is held until the earlier one has arrived or has failed for good
// (its final status), or, as mac80211's reorder timeout
// (HT_RX_REORDER_BUF_TIMEOUT, 100 ms) does, until it has waited
// reorderTimeout. Frames that arrive in order pass straight through.

const reorderTimeout = 100 * time.Millisecond

type reoKey struct{ tx, rx, tid int }

// reoEntry is one tracked frame; item is what its delivery hands on.
type reoEntry[T any] struct {
	key      reoKey
	arrived  bool // received, waiting for earlier frames
	finished bool // delivered, failed for good or given up on
	heldAt   time.Duration
	item     T
}

// reorder holds the receivers' buffers of one medium; T is what a
// delivery hands to the kernel (the hwsim and engine media differ).
type reorder[T any] struct {
	fifo    map[reoKey][]*reoEntry[T]
	byFrame map[*model.MediumFrame]*reoEntry[T]
	held    int
	// Held counts frames delivered later than they arrived.
	Held uint64
}

func newReorder[T any]() *reorder[T] {
	return &reorder[T]{fifo: map[reoKey][]*reoEntry[T]{}, byFrame: map[*model.MediumFrame]*reoEntry[T]{}}
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

// track records f, a frame of radio f.Radio to radio rx (only unicast
// QoS data is tracked).
func (r *reorder[T]) track(f *model.MediumFrame, rx int) {
	tid, ok := qosTID(f.Data)
	if !ok {
		return
	}
	e := &reoEntry[T]{key: reoKey{f.Radio, rx, tid}}
	r.fifo[e.key] = append(r.fifo[e.key], e)
	r.byFrame[f] = e
}

// untrack forgets f (the medium refused it).
func (r *reorder[T]) untrack(f *model.MediumFrame) {
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

// received handles a reception of f: true when the caller delivers it
// (f is not held in order); false when the buffer delivered it, with the
// frames it held behind it, or holds it for later.
func (r *reorder[T]) received(now time.Duration, f *model.MediumFrame, item T, deliver func(T)) bool {
	e := r.byFrame[f]
	if e == nil || e.finished || e.arrived {
		return true // untracked, or a repeat: mac80211 drops duplicates itself
	}
	q := r.fifo[e.key]
	if len(q) > 0 && q[0] == e {
		// in order: it goes now, and the held ones right behind it
		e.finished = true
		deliver(item)
		r.flush(e.key, deliver)
		return false
	}
	e.arrived, e.heldAt, e.item = true, now, item
	r.held++
	r.Held++
	return false
}

// status handles f's final status: a frame never received stops blocking
// the ones after it.
func (r *reorder[T]) status(f *model.MediumFrame, deliver func(T)) {
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
func (r *reorder[T]) flush(key reoKey, deliver func(T)) {
	q := r.fifo[key]
	for len(q) > 0 {
		h := q[0]
		switch {
		case h.arrived:
			h.arrived, h.finished = false, true
			r.held--
			deliver(h.item)
			var zero T
			h.item = zero
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
func (r *reorder[T]) expire(now time.Duration, deliver func(T)) {
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
