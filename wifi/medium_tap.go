package wifi

import (
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
)

// A capture of the medium: every PPDU on the air, as a monitor on the
// channel would record it. The medium's real-time thread copies what it
// needs into a record and hands it over without ever blocking; a goroutine
// of the tap encodes and writes. Records that find the hand-over full are
// dropped and counted (MediumStats.CaptureDrops).

// airWriter encodes Air events (AirCapture, aircap.go).
type airWriter interface {
	Write(a model.Air, mpdu func(*model.MediumFrame) []byte, addr func(radio int) [6]byte, signal func(tx, rx int) float64) error
	Flush() error
}

type airRecord struct {
	air    model.Air
	frames []model.MediumFrame
	bytes  [][]byte
	signal map[[2]int]float64
}

type airTap struct {
	ch      chan *airRecord
	drops   atomic.Uint64
	done    chan error
	snaplen int
	addrs   [][6]byte
	// mpdu gives the bytes of a frame as they go on the air (called on
	// the medium's thread, under its lock).
	mpdu func(*model.MediumFrame) []byte
}

// ErrCaptureRunning: a medium takes one capture at a time.
var ErrCaptureRunning = errors.New("a capture of this lab's medium is already running")

// StartCapture writes the medium's PPDUs as pcapng (radiotap) to w until
// stop is called or the writer fails; stop returns the writer's error and
// how many PPDUs did not fit the hand-over.
func (c *mediumCore) StartCapture(w io.Writer, snaplen int, mpdu func(*model.MediumFrame) []byte) (stop func() (uint64, error), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tap != nil {
		return nil, ErrCaptureRunning
	}
	if snaplen <= 0 {
		snaplen = 65535
	}
	start := c.start
	if start.IsZero() {
		start = time.Now()
	}
	aw, err := NewAirCapture(w, start, snaplen)
	if err != nil {
		return nil, err
	}
	t := &airTap{ch: make(chan *airRecord, 8192), done: make(chan error, 1), snaplen: snaplen, mpdu: mpdu}
	for i, r := range c.cfg.Radios {
		a := r.MAC
		if a == ([6]byte{}) {
			a = r.Perm
			if len(r.Addrs) > 0 {
				a = r.Addrs[0]
			}
		}
		t.addrs = append(t.addrs, a)
		// every address the radio's frames may carry, so a frame to a
		// radio that has not sent yet still gets its receiver's signal
		for _, x := range append([][6]byte{r.MAC, r.Perm}, r.Addrs...) {
			if x != ([6]byte{}) {
				aw.Learn(i, x)
			}
		}
	}
	go t.run(aw)
	c.tap = t
	c.m.ReportAir(true)
	var once bool
	return func() (uint64, error) {
		c.mu.Lock()
		if c.tap == t && !once {
			c.tap = nil
			c.m.ReportAir(false)
			close(t.ch)
		}
		once = true
		c.mu.Unlock()
		err := <-t.done
		t.done <- err
		return t.drops.Load(), err
	}, nil
}

func (t *airTap) run(aw airWriter) {
	var err error
	for rec := range t.ch {
		if err != nil {
			continue // drain; the writer failed
		}
		idx := map[*model.MediumFrame][]byte{}
		ptrs := make([]*model.MediumFrame, len(rec.frames))
		for i := range rec.frames {
			ptrs[i] = &rec.frames[i]
			idx[ptrs[i]] = rec.bytes[i]
		}
		rec.air.Frames = ptrs
		err = aw.Write(rec.air, func(f *model.MediumFrame) []byte { return idx[f] },
			func(radio int) [6]byte {
				if radio >= 0 && radio < len(t.addrs) {
					return t.addrs[radio]
				}
				return [6]byte{}
			},
			func(tx, rx int) float64 {
				if v, ok := rec.signal[[2]int{tx, rx}]; ok {
					return v
				}
				return -50
			})
		if err == nil && len(t.ch) == 0 {
			err = aw.Flush()
		}
	}
	if err == nil {
		err = aw.Flush()
	}
	t.done <- err
}

// record hands one Air event to the tap (on the medium's thread, under
// mu): the frames are copied, so the medium may reuse them at once.
func (c *mediumCore) record(a model.Air) {
	t := c.tap
	if t == nil {
		return
	}
	rec := &airRecord{air: a, frames: make([]model.MediumFrame, len(a.Frames)), bytes: make([][]byte, len(a.Frames)), signal: map[[2]int]float64{}}
	for i, f := range a.Frames {
		rec.frames[i] = *f
		rec.frames[i].Ref = nil
		b := t.mpdu(f)
		if len(b) > t.snaplen {
			b = b[:t.snaplen]
		}
		rec.bytes[i] = append([]byte(nil), b...)
		rec.frames[i].Data = rec.bytes[i]
		rec.frames[i].Extra = f.Len() - model.FCSBytes - len(b) // Len stays the frame's own
	}
	for rx := range c.cfg.Radios {
		if rx != a.Radio {
			rec.signal[[2]int{a.Radio, rx}] = c.link(a.Radio, rx).RxDBm
			rec.signal[[2]int{rx, a.Radio}] = c.link(rx, a.Radio).RxDBm
		}
	}
	select {
	case t.ch <- rec:
	default:
		t.drops.Add(1)
		c.stats.CaptureDrops++
	}
}
