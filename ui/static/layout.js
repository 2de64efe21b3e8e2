// emuctl ui: placing and grouping a large lab's drawing. Pure functions of
// a graph (nodes 0..n-1, adjacency lists), no page state: stressLayout
// places up to a few hundred drawn nodes, clusterGraph groups a larger
// lab's nodes into at most so many clusters. Both are deterministic (no
// random numbers): the same lab gives the same picture.
'use strict';

// adjacency builds deduplicated adjacency lists from index pairs.
function adjacency(n, edges) {
  const sets = Array.from({ length: n }, () => new Set());
  for (const [a, b] of edges) if (a !== b) { sets[a].add(b); sets[b].add(a); }
  return sets.map(s => [...s]);
}

// components lists the connected components, each in BFS order.
function components(n, adj) {
  const seen = new Uint8Array(n), out = [];
  for (let s = 0; s < n; s++) {
    if (seen[s]) continue;
    const c = [s];
    seen[s] = 1;
    for (let k = 0; k < c.length; k++) for (const v of adj[c[k]]) if (!seen[v]) { seen[v] = 1; c.push(v); }
    out.push(c);
  }
  return out;
}

// stressLayout places n nodes linked by edges (index pairs) and returns
// their coordinates {x, y} (Float64Arrays). Each connected component: the
// hop distance between every two of its nodes (a BFS from each, L units a
// hop; two hops more between nodes on different machines), a classical
// MDS of those distances as the start, stress majorization toward them
// (neighbours L apart, nodes k hops apart about k·L), then any two nodes
// nearer than gap pushed apart (a uniform grid of gap-sized cells finds
// them: linear per pass). The components are then packed in rows, largest
// first. Costs O(n²) per sweep of one component: a few tens of ms for 200.
function stressLayout(n, edges, opt) {
  const L = opt.L || 100, gap = opt.gap || 60;
  const mach = Array.from({ length: n }, (_, i) => (opt.machine ? opt.machine(i) : ''));
  const adj = adjacency(n, edges);
  const X = new Float64Array(n), Y = new Float64Array(n);
  const comps = components(n, adj);
  for (const c of comps) {
    placeComponent(c, adj, mach, L, X, Y);
    separate(c, X, Y, gap);
  }
  pack(comps, X, Y, L);
  return { x: X, y: Y };
}

function placeComponent(c, adj, mach, L, X, Y) {
  const m = c.length;
  if (m === 1) { X[c[0]] = 0; Y[c[0]] = 0; return; }
  const local = new Map(c.map((v, i) => [v, i]));
  // hop distances (BFS from each node), in layout units
  const D = new Float64Array(m * m), q = new Int32Array(m), dist = new Int32Array(m);
  for (let s = 0; s < m; s++) {
    dist.fill(-1);
    dist[s] = 0; q[0] = s;
    for (let h = 0, t = 1; h < t; h++) {
      const u = q[h];
      for (const g of adj[c[u]]) {
        const v = local.get(g);
        if (dist[v] < 0) { dist[v] = dist[u] + 1; q[t++] = v; }
      }
    }
    for (let j = 0; j < m; j++) D[s * m + j] = (dist[j] + (mach[c[j]] !== mach[c[s]] ? 2 : 0)) * L;
  }
  // classical MDS: the two leading eigenvectors of -½·J·D²·J
  const B = new Float64Array(m * m), row = new Float64Array(m);
  let all = 0;
  for (let i = 0; i < m * m; i++) B[i] = D[i] * D[i];
  for (let i = 0; i < m; i++) { for (let j = 0; j < m; j++) row[i] += B[i * m + j]; all += row[i]; row[i] /= m; }
  all /= m * m;
  for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) B[i * m + j] = -0.5 * (B[i * m + j] - row[i] - row[j] + all);
  const [e1, e2] = topTwo(B, m);
  const x = new Float64Array(m), y = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    // a small deterministic offset: a path's MDS is a line, and two nodes
    // with the same distances to all others start at one point
    x[i] = e1.v[i] * Math.sqrt(Math.max(e1.val, 0)) + 0.01 * L * Math.cos(i * 2.39996);
    y[i] = e2.v[i] * Math.sqrt(Math.max(e2.val, 0)) + 0.01 * L * Math.sin(i * 2.39996);
  }
  // stress majorization, node by node (weights 1/d²)
  const sweeps = Math.max(20, Math.min(150, Math.floor(4e7 / (m * m))));
  for (let it = 0; it < sweeps; it++) {
    let moved = 0;
    for (let i = 0; i < m; i++) {
      let sx = 0, sy = 0, sw = 0;
      for (let j = 0; j < m; j++) {
        if (j === i) continue;
        const d = D[i * m + j], w = 1 / (d * d);
        let dx = x[i] - x[j], dy = y[i] - y[j], e = Math.sqrt(dx * dx + dy * dy);
        if (e < 1e-6) { dx = Math.cos(i + 0.5 * j); dy = Math.sin(i + 0.5 * j); e = 1; }
        sx += w * (x[j] + d * dx / e); sy += w * (y[j] + d * dy / e); sw += w;
      }
      const nx = sx / sw, ny = sy / sw;
      moved = Math.max(moved, Math.abs(nx - x[i]) + Math.abs(ny - y[i]));
      x[i] = nx; y[i] = ny;
    }
    if (moved < 0.002 * L) break;
  }
  // turned so that the wires run mostly along the axes (their angles'
  // mean modulo 90°), and wider than high like the page's box
  let s4 = 0, c4 = 0;
  for (let i = 0; i < m; i++) for (const g of adj[c[i]]) {
    const a = 4 * Math.atan2(y[local.get(g)] - y[i], x[local.get(g)] - x[i]);
    s4 += Math.sin(a); c4 += Math.cos(a);
  }
  const turn = -Math.atan2(s4, c4) / 4;
  const cos = Math.cos(turn), sin = Math.sin(turn);
  let w = 0, h = 0;
  for (let i = 0; i < m; i++) {
    [x[i], y[i]] = [x[i] * cos - y[i] * sin, x[i] * sin + y[i] * cos];
    w = Math.max(w, Math.abs(x[i])); h = Math.max(h, Math.abs(y[i]));
  }
  for (let i = 0; i < m; i++) if (h > w * 1.05) { X[c[i]] = y[i]; Y[c[i]] = -x[i]; } else { X[c[i]] = x[i]; Y[c[i]] = y[i]; }
}

// topTwo is the two eigenvectors of the symmetric m×m matrix B with the
// largest eigenvalues (subspace iteration from a fixed start, both
// vectors in one pass over B, until the eigenvalues settle).
function topTwo(B, m) {
  const u = new Float64Array(m), v = new Float64Array(m), Bu = new Float64Array(m), Bv = new Float64Array(m);
  for (let i = 0; i < m; i++) { u[i] = 1 + Math.sin(1.7 * i); v[i] = 1 + Math.cos(2.3 * i); }
  const unit = (a, not) => {
    if (not) { let p = 0; for (let i = 0; i < m; i++) p += a[i] * not[i]; for (let i = 0; i < m; i++) a[i] -= p * not[i]; }
    let s = 0;
    for (let i = 0; i < m; i++) s += a[i] * a[i];
    s = Math.sqrt(s) || 1;
    for (let i = 0; i < m; i++) a[i] /= s;
  };
  unit(u, null); unit(v, u);
  let lu = 0, lv = 0, last = NaN;
  for (let it = 0; it < 150; it++) {
    lu = 0; lv = 0;
    for (let i = 0; i < m; i++) {
      let su = 0, sv = 0;
      const o = i * m;
      for (let j = 0; j < m; j++) { su += B[o + j] * u[j]; sv += B[o + j] * v[j]; }
      Bu[i] = su; Bv[i] = sv; lu += su * u[i]; lv += sv * v[i];
    }
    u.set(Bu); v.set(Bv);
    unit(u, null); unit(v, u);
    if (Math.abs(lu + lv - last) < 1e-7 * Math.abs(lu + lv)) break;
    last = lu + lv;
  }
  return lu >= lv ? [{ v: u, val: lu }, { v, val: lv }] : [{ v, val: lv }, { v: u, val: lu }];
}

// separate pushes apart, pair by pair, any two of the nodes c nearer than
// gap, until none is (or 200 passes). A uniform grid of gap-sized cells
// holds the nodes, so each pass looks only at neighbouring cells.
function separate(c, X, Y, gap) {
  for (let pass = 0; pass < 200; pass++) {
    const cells = new Map();
    const key = (gx, gy) => gx * 1048576 + gy;
    for (const v of c) {
      const k = key(Math.floor(X[v] / gap), Math.floor(Y[v] / gap));
      const list = cells.get(k);
      if (list) list.push(v); else cells.set(k, [v]);
    }
    let moved = false;
    for (const v of c) {
      const gx = Math.floor(X[v] / gap), gy = Math.floor(Y[v] / gap);
      for (let ox = -1; ox <= 1; ox++) for (let oy = -1; oy <= 1; oy++) {
        for (const u of cells.get(key(gx + ox, gy + oy)) || []) {
          if (u <= v) continue;
          let dx = X[u] - X[v], dy = Y[u] - Y[v], d = Math.sqrt(dx * dx + dy * dy);
          if (d >= gap) continue;
          if (d < 1e-6) { dx = Math.cos(u + v); dy = Math.sin(u + v); d = 1e-6; } else { dx /= d; dy /= d; }
          const push = (gap * 1.01 - d) / 2;
          X[u] += dx * push; Y[u] += dy * push; X[v] -= dx * push; Y[v] -= dy * push;
          moved = true;
        }
      }
    }
    if (!moved) return;
  }
}

// pack puts the components side by side in rows (largest first), each
// row as wide as the largest component or the square root of their area.
function pack(comps, X, Y, L) {
  const boxes = comps.map(c => {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const v of c) { x0 = Math.min(x0, X[v]); y0 = Math.min(y0, Y[v]); x1 = Math.max(x1, X[v]); y1 = Math.max(y1, Y[v]); }
    return { c, x0, y0, w: x1 - x0 + L, h: y1 - y0 + L };
  }).sort((a, b) => b.c.length - a.c.length || a.c[0] - b.c[0]);
  const area = boxes.reduce((s, b) => s + b.w * b.h, 0);
  const width = Math.max(boxes[0] ? boxes[0].w : 0, Math.sqrt(area) * 1.3);
  let cx = 0, cy = 0, rowH = 0;
  for (const b of boxes) {
    if (cx > 0 && cx + b.w > width) { cx = 0; cy += rowH; rowH = 0; }
    for (const v of b.c) { X[v] += cx - b.x0; Y[v] += cy - b.y0; }
    cx += b.w; rowH = Math.max(rowH, b.h);
  }
}

// clusterGraph groups n nodes (adjacency lists adj, machine names mach)
// into at most max clusters where the graph allows it, and returns each
// node's cluster: the index of its seed. Seeds are taken in order of
// degree (highest first, then index) wherever no seed lies within r hops;
// every node then joins its nearest seed (a BFS from all seeds at once,
// ties to the earlier seed); r grows from 1 until the clusters are few
// enough. A node of one link joins its neighbour's cluster, the nodes
// without a link form one cluster, and no cluster crosses machines.
function clusterGraph(n, adj, mach, max) {
  const deg = adj.map(a => a.length);
  // a core node has two links or more (or is the first of a pair, or its
  // one link leaves its machine)
  const core = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const p = adj[i][0];
    core[i] = deg[i] >= 2 || (deg[i] === 1 && ((deg[p] === 1 && i < p) || mach[p] !== mach[i])) ? 1 : 0;
  }
  const order = [...Array(n).keys()].filter(i => core[i]).sort((a, b) => deg[b] - deg[a] || a - b);
  const through = (u, v) => core[v] && mach[u] === mach[v];
  let owner = null, prev = -1;
  for (let r = 1; r <= 64; r++) {
    owner = new Int32Array(n).fill(-1);
    const dist = new Int32Array(n).fill(1 << 30), seeds = [];
    const q = new Int32Array(n);
    for (const s of order) {
      if (dist[s] <= r) continue;
      seeds.push(s);
      dist[s] = 0; q[0] = s;
      for (let h = 0, t = 1; h < t; h++) {
        const u = q[h];
        if (dist[u] >= r) continue;
        for (const v of adj[u]) if (through(u, v) && dist[u] + 1 < dist[v]) { dist[v] = dist[u] + 1; q[t++] = v; }
      }
    }
    let t = 0;
    for (const s of seeds) { owner[s] = s; q[t++] = s; }
    for (let h = 0; h < t; h++) {
      const u = q[h];
      for (const v of adj[u]) if (through(u, v) && owner[v] < 0) { owner[v] = owner[u]; q[t++] = v; }
    }
    const lone = {};
    for (let i = 0; i < n; i++) {
      if (owner[i] >= 0) continue;
      if (deg[i] === 0) owner[i] = lone[mach[i]] === undefined ? (lone[mach[i]] = i) : lone[mach[i]];
      else owner[i] = owner[adj[i][0]] >= 0 ? owner[adj[i][0]] : i;
    }
    const count = new Set(owner).size;
    if (count <= max || count === prev) break;
    prev = count;
  }
  return owner;
}

