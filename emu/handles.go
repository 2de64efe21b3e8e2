package emu

import (
	"container/list"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// maxOpenNodes bounds how many node namespaces Deploy holds open at once
// (two descriptors each: the namespace and a netlink socket inside it), so
// a lab of any size needs the same few thousand descriptors. Labs up to this
// size keep every handle from creation to the end of Deploy; larger ones
// reopen a node's handles (by its /run/netns path) in the phase that needs
// them.
var maxOpenNodes = 1024

// handlePool tracks the open handles of a deploy's nodes. A node's ns and h
// fields are valid only between acquire and release; idle open nodes are
// closed least recently used first when the pool is full.
type handlePool struct {
	mu   sync.Mutex
	cond *sync.Cond
	max  int
	open int
	idle *list.List // *node with refs == 0 and open handles, oldest first
}

func newHandlePool(max int) *handlePool {
	p := &handlePool{max: max, idle: list.New()}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// register hands the pool a node whose handles were just opened (by
// createNamedNetns); the node starts idle.
func (p *handlePool) register(n *node, ns netns.NsHandle, h *netlink.Handle) {
	p.mu.Lock()
	n.pool, n.ns, n.h = p, ns, h
	p.open++
	n.elem = p.idle.PushBack(n)
	victims := p.evictLocked()
	p.mu.Unlock()
	closeHandles(victims)
}

// evictLocked takes idle nodes off the pool while it is over its bound and
// returns their handles for closing outside the lock.
func (p *handlePool) evictLocked() []openHandles {
	var out []openHandles
	for p.open > p.max && p.idle.Len() > 0 {
		m := p.idle.Remove(p.idle.Front()).(*node)
		m.elem = nil
		out = append(out, openHandles{m.ns, m.h})
		m.ns, m.h = -1, nil
		p.open--
	}
	return out
}

type openHandles struct {
	ns netns.NsHandle
	h  *netlink.Handle
}

func closeHandles(hs []openHandles) {
	for _, x := range hs {
		if x.h != nil {
			x.h.Close()
		}
		if x.ns >= 0 {
			x.ns.Close()
		}
	}
}

// acquire makes n's ns and h valid until the matching release, reopening
// them from /run/netns when the pool had closed them. It may be called again
// for a node already held (by another link of the same switch, say).
func (n *node) acquire() error {
	p := n.pool
	if p == nil {
		return nil // a node made outside a pool keeps its handles
	}
	p.mu.Lock()
	for n.opening {
		p.cond.Wait()
	}
	if n.h != nil {
		if n.refs == 0 && n.elem != nil {
			p.idle.Remove(n.elem)
			n.elem = nil
		}
		n.refs++
		p.mu.Unlock()
		return nil
	}
	n.opening = true
	n.refs++
	p.open++
	victims := p.evictLocked()
	p.mu.Unlock()
	closeHandles(victims)

	ns, h, err := openNamed(n.nsName)

	p.mu.Lock()
	n.opening = false
	if err != nil {
		n.refs--
		p.open--
	} else {
		n.ns, n.h = ns, h
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	if err != nil {
		return fmt.Errorf("node %s: %w", n.spec.Name, err)
	}
	return nil
}

// release ends one acquire; the node's handles stay open (idle) until the
// pool needs room.
func (n *node) release() {
	p := n.pool
	if p == nil {
		return
	}
	p.mu.Lock()
	n.refs--
	var victims []openHandles
	if n.refs == 0 && n.h != nil {
		n.elem = p.idle.PushBack(n)
		victims = p.evictLocked()
	}
	p.mu.Unlock()
	closeHandles(victims)
}

// closeAll closes every handle still open; the nodes must all be released.
func (p *handlePool) closeAll(nodes []*node) {
	p.mu.Lock()
	var hs []openHandles
	for _, n := range nodes {
		if n.h != nil || n.ns >= 0 {
			hs = append(hs, openHandles{n.ns, n.h})
			n.ns, n.h = -1, nil
		}
		n.elem = nil
	}
	p.idle.Init()
	p.open = 0
	p.mu.Unlock()
	closeHandles(hs)
}

// with runs fn while holding every node given (nil entries are skipped).
func with(fn func() error, nodes ...*node) error {
	for i, n := range nodes {
		if n == nil {
			continue
		}
		if err := n.acquire(); err != nil {
			for _, m := range nodes[:i] {
				if m != nil {
					m.release()
				}
			}
			return err
		}
	}
	defer func() {
		for _, n := range nodes {
			if n != nil {
				n.release()
			}
		}
	}()
	return fn()
}

// openNamed opens a named namespace and a netlink handle inside it.
// The name "" is the machine's own namespace (nodes of kind root).
func openNamed(name string) (netns.NsHandle, *netlink.Handle, error) {
	path := filepath.Join(NetnsDir, name)
	if name == "" {
		path = hostNetnsPath()
	}
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return -1, nil, err
	}
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		ns.Close()
		return -1, nil, err
	}
	return ns, h, nil
}
