package engine

import "golang.org/x/sys/unix"

// What a direction does with the frames it receives.

// mode says whether GSO frames must be cut, and whether their segments
// may be joined again on the way out (no rate: see coalesce.go).
func (d *direction) mode() (perPacket, join bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pl.perPacket, !d.pl.shaped(d.cfg)
}

// unpack copies one received frame into packets: its wire segments when
// the pipeline works per packet, else the frame as it came.
func (d *direction) unpack(pkts []*packet, raw []byte, perPacket, join bool) []*packet {
	if len(raw) < vnetHdrLen+ethHdrLen {
		return pkts
	}
	h := parseVnet(raw)
	frame := raw[vnetHdrLen:]
	if perPacket && h.gso() != unix.VIRTIO_NET_HDR_GSO_NONE {
		var origin uint32
		if join {
			if d.origins++; d.origins == 0 {
				d.origins++
			}
			origin = d.origins
		}
		first := len(pkts)
		ok := segment(frame, h, func(n int) []byte {
			p := getPacket(vnetHdrLen + n)
			p.wire = n
			p.origin, p.seg = origin, uint16(len(pkts)-first)
			pkts = append(pkts, p)
			return p.buf
		})
		if ok {
			if origin != 0 {
				sh := parseVnet(pkts[first].buf)
				gi := segInfo{gsoType: h.gso(), mss: h.gsoSize, l4: sh.csumStart, hdrLen: sh.hdrLen}
				for _, p := range pkts[first:] {
					p.gso = gi
				}
			}
			return pkts
		}
	}
	p := getPacket(len(raw))
	copy(p.buf, raw)
	p.segs, p.wire = gsoSegments(frame, h)
	if p.segs == 1 && h.gso() != unix.VIRTIO_NET_HDR_GSO_NONE {
		// a GSO frame with a single segment: send it as a plain frame
		h.gsoType, h.gsoSize = unix.VIRTIO_NET_HDR_GSO_NONE, 0
		h.put(p.buf)
	}
	return append(pkts, p)
}

// schedule runs the pipeline on packets, each at its arrival time (p.in;
// never before the last arrival, nor the instant a discipline already ran
// to, so arrivals stay in order), and puts the survivors on the line. p.seen is when the
// engine read it: the wait in between is counted.
func (d *direction) schedule(pkts []*packet) {
	if len(pkts) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	defer func() { d.advance(d.clock) }()
	for _, p := range pkts {
		d.rxWait.add(p.seen - p.in)
		p.in = max(p.in, p.seen-maxRxAge, d.clock)
		now := p.in
		d.clock = now
		d.advance(now) // dequeues due before this arrival come first
		d.c.inPkts += uint64(p.segs)
		d.c.inBytes += uint64(p.wire)
		copies := 1
		if d.pl.dup > 0 && d.pl.rng.Float64() < d.pl.dup {
			copies = 2
			d.c.dups++
		}
		for c := 0; c < copies; c++ {
			q := p
			if c == 1 {
				q = p.clone()
			}
			due, v := d.pl.run(q, now)
			if v == pass && d.lineBytes+int64(len(q.buf)) > lineCapBytes {
				v = dropQueue
				d.pl.queue.forget(q)
			}
			switch v {
			case pass:
				d.toLine(q, due)
				continue
			case queued:
				continue
			case dropLoss:
				d.c.lossDrops += uint64(q.segs)
			case dropQueue:
				d.c.queueDrops += uint64(q.segs)
			}
			q.release()
		}
	}
}
