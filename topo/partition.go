package topo

import "sort"

// WEdge is an edge of a graph to partition, with its weight (for links:
// their rate, so cutting a slow link costs less than a fast one).
type WEdge struct {
	A, B int
	W    float64
}

// Partition assigns n vertices to k parts of balanced size (each within
// 10 % of n/k, rounded outwards) so that the total weight of edges between
// parts is small. pinned[v] >= 0 fixes v's part (nil: none).
//
// It is the classic two-stage scheme of multilevel partitioners without
// the coarsening: a greedy graph-growing seed (each part grows from its
// pinned vertices, or from an unplaced vertex far from the placed ones,
// taking the frontier vertex most strongly tied to it; Karypis & Kumar's
// GGGP) to exactly balanced sizes, then Kernighan–Lin refinement over
// every pair of parts (passes of tentative best swaps, each vertex moved
// once, kept up to the best prefix, repeated while a pass gains), then
// single moves that lighten the cut within the 10 % imbalance (as
// Fiduccia–Mattheyses moves do), and KL again. Pinned vertices never move. The
// refinement is O(n³) per pass: it runs for n <= partitionRefineMax, above
// that the seed stands.
func Partition(n, k int, edges []WEdge, pinned []int) []int {
	part := make([]int, n)
	for i := range part {
		part[i] = -1
	}
	if k <= 1 {
		for i := range part {
			part[i] = 0
		}
		return part
	}
	adj := make([]map[int]float64, n)
	for i := range adj {
		adj[i] = map[int]float64{}
	}
	for _, e := range edges {
		if e.A != e.B {
			adj[e.A][e.B] += e.W
			adj[e.B][e.A] += e.W
		}
	}
	target := make([]int, k)
	for p := range target {
		target[p] = n / k
		if p < n%k {
			target[p]++
		}
	}
	// Several starts (the first part grown from each of a few
	// lowest-degree vertices), each refined; the lightest cut wins.
	var starts []int
	for deg := 0; len(starts) < partitionStarts && deg <= n; deg++ {
		for v := 0; v < n && len(starts) < partitionStarts; v++ {
			if len(adj[v]) == deg {
				starts = append(starts, v)
			}
		}
	}
	var best []int
	bestCut := 0.0
	for _, s := range starts {
		try := make([]int, n)
		size := make([]int, k)
		for v := range n {
			try[v] = -1
			if pinned != nil && pinned[v] >= 0 {
				try[v] = pinned[v]
				size[pinned[v]]++
			}
		}
		grow(try, size, target, adj, s)
		if n <= partitionRefineMax {
			refineKL(try, k, adj, pinned)
			if moveSingles(try, k, adj, pinned, n) {
				refineKL(try, k, adj, pinned)
			}
		}
		if c := cutOf(try, adj); best == nil || c < bestCut-1e-9 {
			best, bestCut = try, c
		}
		if n > partitionRefineMax {
			break
		}
	}
	return best
}

// moveSingles moves single vertices to the part they are most tied to
// while that lightens the cut and every part stays within 10 % of n/k
// (rounded outwards, METIS's default imbalance for k-way): strict balance
// would split a small lab's cheap side to even out one node. It reports
// whether anything moved.
func moveSingles(part []int, k int, adj []map[int]float64, pinned []int, n int) bool {
	avg := float64(n) / float64(k)
	lo, hi := int(avg*0.9), int(avg*1.1+0.999999)
	size := make([]int, k)
	for _, p := range part {
		size[p]++
	}
	moved := false
	for range n {
		best, bestQ, bestG := -1, 0, 1e-9
		for v := range part {
			if pinned != nil && pinned[v] >= 0 || size[part[v]]-1 < lo {
				continue
			}
			ties := make([]float64, k)
			for u, w := range adj[v] {
				ties[part[u]] += w
			}
			for q := range k {
				if q != part[v] && size[q]+1 <= hi && ties[q]-ties[part[v]] > bestG {
					best, bestQ, bestG = v, q, ties[q]-ties[part[v]]
				}
			}
		}
		if best < 0 {
			break
		}
		size[part[best]]--
		size[bestQ]++
		part[best] = bestQ
		moved = true
	}
	return moved
}

// partitionRefineMax bounds the graphs Kernighan–Lin refines (O(n³) a
// pass) and tries several starts on; partitionStarts is how many.
const (
	partitionRefineMax = 300
	partitionStarts    = 8
)

func cutOf(part []int, adj []map[int]float64) float64 {
	c := 0.0
	for v := range adj {
		for u, w := range adj[v] {
			if u > v && part[u] != part[v] {
				c += w
			}
		}
	}
	return c
}

// grow fills each part up to its target from its placed vertices (or a
// vertex far from everything placed), always taking the unplaced vertex
// with the heaviest ties to the part.
func grow(part, size, target []int, adj []map[int]float64, start int) {
	n := len(part)
	for p := range target {
		var dist []int // hops from the part's first vertex: ties go to the nearest
		for size[p] < target[p] {
			// The frontier vertex whose move lowers the cut most: ties to
			// the part minus ties elsewhere.
			best, bestG, seed := -1, 0.0, -1
			for v := range n {
				if part[v] != -1 {
					continue
				}
				if seed < 0 || len(adj[v]) < len(adj[seed]) {
					seed = v
				}
				in, out := 0.0, 0.0
				for u, ew := range adj[v] {
					if part[u] == p {
						in += ew
					} else {
						out += ew
					}
				}
				if in > 0 && (best < 0 || in-out > bestG+1e-9 || in-out > bestG-1e-9 && dist != nil && dist[v] < dist[best]) {
					best, bestG = v, in-out
				}
			}
			if seed < 0 {
				break
			}
			if best < 0 { // nothing placed here yet, or a component is full
				if p == 0 && size[p] == 0 && part[start] == -1 {
					seed = start
				}
				best = farthest(part, adj, seed)
				dist = hops(adj, best)
			}
			part[best] = p
			size[p]++
		}
	}
	// Parts whose pinned vertices exceed the target leave some unplaced:
	// put them where there is room, else on the smallest part.
	for v := range part {
		if part[v] == -1 {
			p := 0
			for q := range size {
				if size[q]-target[q] < size[p]-target[p] {
					p = q
				}
			}
			part[v] = p
			size[p]++
		}
	}
}

// hops are BFS distances from v (-1: unreachable).
func hops(adj []map[int]float64, v int) []int {
	dist := make([]int, len(adj))
	for i := range dist {
		dist[i] = -1
	}
	dist[v] = 0
	queue := []int{v}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for u := range adj[x] {
			if dist[u] == -1 {
				dist[u] = dist[x] + 1
				queue = append(queue, u)
			}
		}
	}
	return dist
}

// farthest returns an unplaced vertex as far (in hops) from the placed
// vertices as possible, start when nothing is placed: a part seeded at the
// periphery grows into a region instead of splitting one.
func farthest(part []int, adj []map[int]float64, start int) int {
	dist := make([]int, len(part))
	for i := range dist {
		dist[i] = -1
	}
	var queue []int
	for v := range part {
		if part[v] != -1 {
			dist[v] = 0
			queue = append(queue, v)
		}
	}
	if len(queue) == 0 {
		// Nothing placed: the far end of a BFS from start (a peripheral
		// vertex of its component).
		dist[start] = 0
		queue = append(queue, start)
	}
	best := start
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		nb := make([]int, 0, len(adj[v]))
		for u := range adj[v] {
			nb = append(nb, u)
		}
		sort.Ints(nb)
		for _, u := range nb {
			if dist[u] == -1 {
				dist[u] = dist[v] + 1
				queue = append(queue, u)
				if part[u] == -1 && (dist[u] > dist[best] || part[best] != -1) {
					best = u
				}
			}
		}
	}
	if part[best] != -1 {
		return start
	}
	return best
}

// refineKL runs Kernighan–Lin passes over every pair of parts until a
// pass gains nothing.
func refineKL(part []int, k int, adj []map[int]float64, pinned []int) {
	for range 20 { // passes; each strictly lowers the cut, so this is a guard
		improved := false
		for a := range k {
			for b := a + 1; b < k; b++ {
				if klPass(part, a, b, adj, pinned) {
					improved = true
				}
			}
		}
		if !improved {
			return
		}
	}
}

// klPass is one Kernighan–Lin pass between parts a and b: swap the best
// pair of unlocked vertices (even at a loss), lock them, repeat; then undo
// the swaps after the best cumulative gain. It reports whether the cut
// became lighter.
func klPass(part []int, a, b int, adj []map[int]float64, pinned []int) bool {
	// gain of moving v from its part to the other: ties to the other part
	// minus ties to its own.
	dval := func(v int) float64 {
		own, other := part[v], a+b-part[v]
		g := 0.0
		for u, w := range adj[v] {
			switch part[u] {
			case other:
				g += w
			case own:
				g -= w
			}
		}
		return g
	}
	locked := map[int]bool{}
	free := func(v int) bool { return !locked[v] && (pinned == nil || pinned[v] < 0) }
	type swap struct{ u, v int }
	var swaps []swap
	cum, best, bestAt := 0.0, 0.0, 0
	for {
		bu, bv, bg := -1, -1, 0.0
		for u := range part {
			if part[u] != a || !free(u) {
				continue
			}
			du := dval(u)
			for v := range part {
				if part[v] != b || !free(v) {
					continue
				}
				g := du + dval(v) - 2*adj[u][v]
				if bu < 0 || g > bg+1e-9 {
					bu, bv, bg = u, v, g
				}
			}
		}
		if bu < 0 {
			break
		}
		part[bu], part[bv] = b, a
		locked[bu], locked[bv] = true, true
		swaps = append(swaps, swap{bu, bv})
		cum += bg
		if cum > best+1e-9 {
			best, bestAt = cum, len(swaps)
		}
	}
	for i := len(swaps) - 1; i >= bestAt; i-- {
		part[swaps[i].u], part[swaps[i].v] = a, b
	}
	return bestAt > 0
}

// CutWeight is the total weight of the edges between parts.
func CutWeight(part []int, edges []WEdge) float64 {
	w := 0.0
	for _, e := range edges {
		if part[e.A] != part[e.B] {
			w += e.W
		}
	}
	return w
}
