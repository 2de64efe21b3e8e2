package engine

// line holds packets until their transmit time. Without reordering the
// times arrive sorted and a ring is enough; with Reorder it is a min-heap.
type line interface {
	push(p *packet)
	peek() *packet // earliest, or nil
	pop() *packet
	len() int
}

type fifoLine struct {
	ring []*packet
	head int
	n    int
}

func (l *fifoLine) len() int { return l.n }

func (l *fifoLine) push(p *packet) {
	if l.n == len(l.ring) {
		grown := make([]*packet, max(256, 2*len(l.ring)))
		for i := 0; i < l.n; i++ {
			grown[i] = l.ring[(l.head+i)%len(l.ring)]
		}
		l.ring, l.head = grown, 0
	}
	l.ring[(l.head+l.n)%len(l.ring)] = p
	l.n++
}

func (l *fifoLine) peek() *packet {
	if l.n == 0 {
		return nil
	}
	return l.ring[l.head]
}

func (l *fifoLine) pop() *packet {
	if l.n == 0 {
		return nil
	}
	p := l.ring[l.head]
	l.ring[l.head] = nil
	l.head = (l.head + 1) % len(l.ring)
	l.n--
	return p
}

// heapLine orders by due time, then by arrival (seq) for equal times.
type heapLine struct {
	h   []heapEnt
	seq uint64
}

type heapEnt struct {
	p   *packet
	seq uint64
}

func (l *heapLine) len() int { return len(l.h) }

func (l *heapLine) less(i, j int) bool {
	a, b := l.h[i], l.h[j]
	return a.p.due < b.p.due || (a.p.due == b.p.due && a.seq < b.seq)
}

func (l *heapLine) push(p *packet) {
	l.seq++
	l.h = append(l.h, heapEnt{p, l.seq})
	for i := len(l.h) - 1; i > 0; {
		up := (i - 1) / 2
		if !l.less(i, up) {
			break
		}
		l.h[i], l.h[up] = l.h[up], l.h[i]
		i = up
	}
}

func (l *heapLine) peek() *packet {
	if len(l.h) == 0 {
		return nil
	}
	return l.h[0].p
}

func (l *heapLine) pop() *packet {
	if len(l.h) == 0 {
		return nil
	}
	p := l.h[0].p
	last := len(l.h) - 1
	l.h[0] = l.h[last]
	l.h[last] = heapEnt{}
	l.h = l.h[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(l.h) {
			break
		}
		if c+1 < len(l.h) && l.less(c+1, c) {
			c++
		}
		if !l.less(c, i) {
			break
		}
		l.h[i], l.h[c] = l.h[c], l.h[i]
		i = c
	}
	return p
}

// newLine returns the line kind for reorder, moving src's packets into it.
func newLine(reorder bool, src line) line {
	var l line = &fifoLine{}
	if reorder {
		l = &heapLine{}
	}
	for src != nil && src.len() > 0 {
		l.push(src.pop())
	}
	return l
}
