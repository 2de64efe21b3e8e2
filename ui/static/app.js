// emuctl ui: the page of one running lab. Everything it shows comes from
// the API methods the server lets it call (POST api/call) and the API's
// event stream (GET api/events, server-sent events). Every name the lab
// holds is put in the page as text (textContent), never as markup.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
const HISTORY = 600; // samples kept per link (2.5 min at 4 per second)

const state = {
  info: null,
  nodes: [],      // API "nodes"
  links: [],      // API "links"
  pos: {},        // node name -> {x, y}
  flip: {},       // link index -> its texts read from b to a
  live: {},       // link index -> last counters
  hist: {},       // link index -> [{t, ab, ba}]
  sel: null,      // {node: name} or {link: index}
  wifi: null,     // API "wifi.show"
  wframe: null,   // the Wi-Fi map's metres -> pixels
  drag: null,     // the station being dragged
  machines: null, // API "machines": a lab over several machines
  group: {},      // a large lab: leaf host name -> the switch its group hangs on
  groups: {},     // switch -> {count, hosts}: the groups drawn
  expanded: {},   // switch -> true: its group opened by a click
  clustered: null, // a lab too large even so: node name -> its cluster's seed ({} when not)
  clusters: {},   // seed -> {members}: the clusters drawn as one node each
  opened: {},     // seed -> true: its cluster opened by a click
  aggs: [],       // wires drawn for several links: [{id, links: [[index, a→b along the wire]]}]
  layoutMs: 0,    // what the last layout took
  layouts: 0,     // how many layouts the page made
  view: null,     // the drawing's viewBox after zoom or pan (null: fit)
  updates: 0,
};

// A lab larger than GROUP_OVER nodes draws the hosts that hang on one
// switch (or router) by their only link as one group node, when there are
// GROUP_MIN of them; a click on a group opens it. A lab that would still
// draw more than CLUSTER_OVER nodes draws clusters of its nodes
// (layout.js's clusterGraph, within each machine) as one node each, and
// the links between two of them as one wire. Up to FORCE_MAX drawn nodes
// are placed by a force simulation, more (or clusters) by stress
// majorization (layout.js).
const GROUP_OVER = 60, GROUP_MIN = 3, FORCE_MAX = 60, CLUSTER_OVER = 200;

// closed is whether a node is drawn inside its cluster's node.
function closed(name) { const c = state.clustered && state.clustered[name]; return !!c && !state.opened[c]; }

// groupHosts fills state.group and state.groups for the lab as it stands.
function groupHosts() {
  state.group = {}; state.groups = {};
  if (state.nodes.length <= GROUP_OVER) return;
  const kind = {}, deg = {}, peer = {};
  for (const n of state.nodes) kind[n.name] = kindOf(n);
  for (const l of state.links) {
    const a = nodeOf(l.a), b = nodeOf(l.b);
    deg[a] = (deg[a] || 0) + 1; deg[b] = (deg[b] || 0) + 1;
    peer[a] = b; peer[b] = a;
  }
  const leaves = {};
  for (const n of state.nodes) {
    const p = peer[n.name];
    if (kind[n.name] === 'host' && deg[n.name] === 1 && p && /switch|router/.test(kind[p] || '') && !state.expanded[p] && !closed(n.name)) {
      (leaves[p] = leaves[p] || []).push(n.name);
    }
  }
  for (const [sw, hosts] of Object.entries(leaves)) {
    if (hosts.length < GROUP_MIN) continue;
    state.groups[sw] = { count: hosts.length, hosts };
    for (const h of hosts) state.group[h] = sw;
  }
}

// clusterLab decides, once per shape of the lab, whether it is too large
// to draw even with its leaf hosts grouped, and if so which cluster each
// node is drawn in (clusters of one node are drawn as the node).
function clusterLab() {
  state.clustered = {};
  const opened = state.expanded;
  state.expanded = {};
  groupHosts();
  state.expanded = opened;
  const drawn = state.nodes.length - Object.keys(state.group).length + Object.keys(state.groups).length;
  if (drawn <= CLUSTER_OVER) return;
  const names = state.nodes.map(n => n.name), at = {};
  names.forEach((name, i) => { at[name] = i; });
  const edges = state.links.map(l => [at[nodeOf(l.a)], at[nodeOf(l.b)]]).filter(([a, b]) => a !== undefined && b !== undefined);
  const owner = clusterGraph(names.length, adjacency(names.length, edges), names.map(machineOf), CLUSTER_OVER);
  const size = {};
  for (const o of owner) size[o] = (size[o] || 0) + 1;
  owner.forEach((o, i) => { if (size[o] > 1) state.clustered[names[i]] = names[o]; });
}

// shown is the name a node is drawn under: its cluster's, its group's,
// or its own.
function shown(name) {
  if (closed(name)) return 'cluster:' + state.clustered[name];
  return state.group[name] ? 'group:' + state.group[name] : name;
}

// machineOf is the machine a node runs on ('' in a lab on one machine);
// a group's or a cluster's is its first member's.
function machineOf(name) {
  if (name.startsWith('cluster:')) name = name.slice(8);
  else if (name.startsWith('group:')) name = (state.groups[name.slice(6)] || { hosts: [''] }).hosts[0];
  return (state.machines && state.machines.nodes[name]) || '';
}

function $(id) { return document.getElementById(id); }

function el(tag, attrs, text) {
  const e = tag.startsWith('svg:') ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

async function call(method, params) {
  const r = await fetch('api/call', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ method, params: params || {} }),
  });
  const j = await r.json();
  if (j.error) throw new Error(j.error.message);
  return j.result;
}

// ---- formatting -----------------------------------------------------

function fmtRate(bps) {
  if (bps === undefined || bps === null) return '–';
  if (bps >= 1e9) return (bps / 1e9).toFixed(2) + ' Gbit/s';
  if (bps >= 1e6) return (bps / 1e6).toFixed(2) + ' Mbit/s';
  if (bps >= 1e3) return (bps / 1e3).toFixed(1) + ' kbit/s';
  return bps.toFixed(0) + ' bit/s';
}

function fmtDur(ns) {
  if (ns >= 1e9) return (ns / 1e9) + 's';
  if (ns >= 1e6) return (ns / 1e6) + 'ms';
  return (ns / 1e3) + 'us';
}

// fmtDir is one direction's configured parameters, in link set's words.
function fmtDir(d) {
  if (!d) return '';
  const out = [];
  if (d.Trace) out.push('trace');
  if (d.Rate) out.push('rate=' + fmtRate(d.Rate).replace(' ', ''));
  if (d.Delay) out.push('delay=' + fmtDur(d.Delay));
  if (d.Jitter) out.push('jitter=' + fmtDur(d.Jitter));
  if (d.Loss) out.push('loss=' + d.Loss + '%');
  if (d.GE) out.push('loss=gemodel');
  if (d.Duplicate) out.push('duplicate=' + d.Duplicate + '%');
  if (d.Corrupt) out.push('corrupt=' + d.Corrupt + '%');
  if (d.QueuePackets) out.push('queue=' + d.QueuePackets);
  if (d.QueueBytes) out.push('queue=' + d.QueueBytes + 'B');
  if (d.AQM) out.push('aqm=' + (d.AQM.Discipline || d.AQM.Kind || 'on'));
  return out.length ? out.join(' ') : 'unshaped';
}

function fmtParams(l) {
  const ab = fmtDir(l.a_to_b), ba = fmtDir(l.b_to_a);
  return ab === ba ? ab : 'a→b ' + ab + ' · b→a ' + ba;
}

function nodeOf(end) { return end.split(':')[0]; }
function linkName(l) { return nodeOf(l.a) + '–' + nodeOf(l.b); }

// colour of a direction's load: grey idle, green to red as it nears the
// configured rate (or 1 Gbit/s for an unshaped link)
function loadColour(bps, rate) {
  if (!bps || bps < 1000) return '#9e9e9e';
  const u = Math.min(1, bps / (rate || 1e9));
  return 'hsl(' + Math.round(120 * (1 - u)) + ',75%,40%)';
}

// ---- layout ---------------------------------------------------------

// layout places what is drawn: each node, or the group or cluster it is
// drawn in. Computed when the lab's shape changes or a group is opened,
// never on a counters tick.
function layout() {
  const t0 = performance.now();
  if (!state.clustered) clusterLab();
  groupHosts();
  state.clusters = {};
  for (const n of state.nodes) {
    if (!closed(n.name)) continue;
    const c = state.clusters[state.clustered[n.name]] || (state.clusters[state.clustered[n.name]] = { members: [] });
    c.members.push(n.name);
  }
  // a lab over several machines starts with each machine's nodes together
  const names = [...new Set(state.nodes.map(n => shown(n.name)))]
    .sort((a, b) => machineOf(a).localeCompare(machineOf(b)));
  const at = {}, seen = new Set(), edges = [];
  names.forEach((name, i) => { at[name] = i; });
  for (const l of state.links) {
    const a = at[shown(nodeOf(l.a))], b = at[shown(nodeOf(l.b))];
    if (a === undefined || b === undefined || a === b || seen.has(a + ',' + b)) continue;
    seen.add(a + ',' + b); seen.add(b + ',' + a);
    edges.push([a, b]);
  }
  if (names.length <= FORCE_MAX && !Object.keys(state.clustered).length) {
    state.pos = forceLayout(names, edges);
  } else {
    // a cluster's label is longer than a node's: more room between them
    const wide = Object.keys(state.clusters).length > 0;
    const p = stressLayout(names.length, edges, { L: wide ? 150 : 100, gap: wide ? 90 : 60, machine: i => machineOf(names[i]) });
    state.pos = {};
    names.forEach((name, i) => { state.pos[name] = { x: p.x[i], y: p.y[i] }; });
  }
  state.layoutMs = performance.now() - t0;
  state.layouts++;
}

// forceLayout places a few nodes (index pairs for links) with a small
// force simulation (springs along links, repulsion between nodes), from a
// deterministic circle.
function forceLayout(names, edges) {
  const n = names.length;
  const P = names.map((name, i) => {
    const a = 2 * Math.PI * i / Math.max(n, 1);
    return { x: Math.cos(a) * 200, y: Math.sin(a) * 200 };
  });
  const ideal = 140;
  for (let it = 0; it < 300; it++) {
    const F = names.map(() => ({ x: 0, y: 0 }));
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) {
      const a = P[i], b = P[j];
      let dx = a.x - b.x, dy = a.y - b.y;
      const d2 = Math.max(dx * dx + dy * dy, 1), f = ideal * ideal / d2;
      F[i].x += dx * f / 2; F[i].y += dy * f / 2;
      F[j].x -= dx * f / 2; F[j].y -= dy * f / 2;
    }
    for (const [a, b] of edges) {
      const dx = P[b].x - P[a].x, dy = P[b].y - P[a].y;
      const d = Math.max(Math.hypot(dx, dy), 1), f = (d - ideal) / d / 2;
      F[a].x += dx * f; F[a].y += dy * f; F[b].x -= dx * f; F[b].y -= dy * f;
    }
    // each machine's nodes drawn to their centre, so its frame holds them
    const C = {};
    names.forEach((k, i) => {
      const m = machineOf(k);
      if (!m) return;
      const c = C[m] || (C[m] = { x: 0, y: 0, n: 0 });
      c.x += P[i].x; c.y += P[i].y; c.n++;
    });
    names.forEach((k, i) => {
      const c = C[machineOf(k)];
      if (c) { F[i].x += (c.x / c.n - P[i].x) * 0.3; F[i].y += (c.y / c.n - P[i].y) * 0.3; }
    });
    const step = 0.5 * (1 - it / 300);
    for (let i = 0; i < n; i++) {
      P[i].x += Math.max(-30, Math.min(30, F[i].x * step));
      P[i].y += Math.max(-30, Math.min(30, F[i].y * step));
    }
  }
  // the drawing is scaled to its box: spread the layout to about 900 ×
  // 520 units so the symbols and texts keep their size on the screen
  const xs = P.map(p => p.x), ys = P.map(p => p.y);
  const w = Math.max(...xs) - Math.min(...xs), h = Math.max(...ys) - Math.min(...ys);
  const k = Math.min(900 / Math.max(w, 1), 520 / Math.max(h, 1), 1.6);
  const out = {};
  names.forEach((name, i) => { out[name] = { x: P[i].x * k, y: P[i].y * k }; });
  return out;
}

// ---- drawing --------------------------------------------------------

function kindOf(n) {
  if (n.ap) return 'ap';
  if (n.station) return 'station';
  if (n.kind === 'switch') return n.switch_type === 'ovs' ? 'ovs switch' : 'switch';
  return n.kind;
}

function nodeShape(kind) {
  switch (kind) {
    case 'switch': return el('svg:rect', { x: -18, y: -12, width: 36, height: 24, rx: 3, fill: '#90caf9', stroke: '#1565c0' });
    case 'ovs switch': return el('svg:rect', { x: -18, y: -12, width: 36, height: 24, rx: 3, fill: '#b39ddb', stroke: '#4527a0' });
    case 'router': return el('svg:polygon', { points: '0,-18 18,0 0,18 -18,0', fill: '#ffcc80', stroke: '#e65100' });
    case 'ap': return el('svg:polygon', { points: '0,-18 16,12 -16,12', fill: '#a5d6a7', stroke: '#2e7d32' });
    case 'station': return el('svg:circle', { r: 11, fill: '#c5e1a5', stroke: '#33691e' });
    default: return el('svg:circle', { r: 14, fill: '#eeeeee', stroke: '#424242' });
  }
}

function draw() {
  const svg = $('topo');
  svg.replaceChildren();
  const P = state.pos;
  const xs = Object.values(P).map(p => p.x), ys = Object.values(P).map(p => p.y);
  if (xs.length && !state.view) {
    const pad = 70;
    const x0 = Math.min(...xs) - pad, y0 = Math.min(...ys) - pad;
    state.fit = [x0, y0, Math.max(...xs) - x0 + pad, Math.max(...ys) - y0 + pad];
  }
  if (state.view || state.fit) svg.setAttribute('viewBox', (state.view || state.fit).join(' '));
  const gm = el('svg:g'), gl = el('svg:g'), gn = el('svg:g');
  svg.append(gm, gl, gn);
  svg.dataset.layoutMs = state.layoutMs.toFixed(1);
  svg.dataset.layouts = state.layouts;
  drawMachines(gm);
  drawAggs(gl);
  // a large drawing keeps a wire's texts to its tooltip and the table
  const big = Object.keys(P).length > FORCE_MAX || Object.keys(state.clustered).length > 0;
  for (const l of state.links) {
    const a = P[nodeOf(l.a)], b = P[nodeOf(l.b)];
    if (!a || !b) continue;
    const g = el('svg:g', { class: 'link', id: 'link-' + l.index, 'data-link': l.index });
    g.append(el('svg:line', { class: 'wire', x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: '#9e9e9e', 'stroke-width': 3 }));
    g.append(el('svg:line', { class: 'hit', x1: a.x, y1: a.y, x2: b.x, y2: b.y }));
    // the parameters on one side of the wire, each direction's rate on
    // the other, near the end it leaves from
    const len = Math.max(Math.hypot(b.x - a.x, b.y - a.y), 1);
    let nx = -(b.y - a.y) / len, ny = (b.x - a.x) / len;
    if (ny > 0) { nx = -nx; ny = -ny; } // parameters above
    const at = (f, off) => ({ x: a.x + (b.x - a.x) * f + nx * off, y: a.y + (b.y - a.y) * f + ny * off + 3 });
    // texts run along the wire, never upside down
    let deg = Math.atan2(b.y - a.y, b.x - a.x) * 180 / Math.PI;
    state.flip[l.index] = deg > 90 || deg <= -90; // the text reads b to a
    if (deg > 90) deg -= 180; else if (deg <= -90) deg += 180;
    const text = (p, attrs, t) => el('svg:text', Object.assign({ x: p.x, y: p.y, transform: 'rotate(' + deg.toFixed(1) + ' ' + p.x + ' ' + p.y + ')' }, attrs), t);
    const pm = at(0.5, 8), ra = at(0.3, -12), rb = at(0.7, -12);
    // a short wire keeps its texts to its tooltip and the table
    g.append(el('svg:title', {}, 'link ' + l.index + ': ' + l.a + ' ↔ ' + l.b + ' · ' + fmtParams(l)));
    if (!big && len >= 6 * fmtParams(l).length) g.append(text(pm, { class: 'params' }, fmtParams(l)));
    if (!big && len >= 130) {
      g.append(text(ra, { class: 'rate', id: 'svg-ab-' + l.index }, ''));
      g.append(text(rb, { class: 'rate', id: 'svg-ba-' + l.index }, ''));
      // each direction's queue as a gauge on the wire, by the end it
      // leaves from: filled to its occupancy over its limit
      const lim = l.queue_limits || [];
      [['ab', 0, 0.14], ['ba', 1, 0.86]].forEach(([dir, k, f]) => {
        if (!lim[k] || !lim[k].packets) return;
        const p = at(f, 9);
        const q = el('svg:g', { class: 'queue', id: 'q-' + dir + '-' + l.index, transform: 'rotate(' + deg.toFixed(1) + ' ' + p.x + ' ' + p.y + ')' });
        q.append(el('svg:rect', { class: 'qbg', x: p.x - 15, y: p.y - 7, width: 30, height: 6 }));
        q.append(el('svg:rect', { class: 'qfill', id: 'qf-' + dir + '-' + l.index, x: p.x - 15, y: p.y - 7, width: 0, height: 6, 'data-limit': lim[k].packets }));
        q.append(el('svg:title', { id: 'qt-' + dir + '-' + l.index }, (k ? 'b→a' : 'a→b') + ' queue, limit ' + lim[k].packets + ' packets'));
        g.append(q);
      });
    }
    g.addEventListener('click', () => select({ link: l.index }));
    gl.append(g);
  }
  for (const n of state.nodes) {
    const p = P[n.name];
    if (!p) continue; // in a group
    const kind = kindOf(n);
    const g = el('svg:g', { class: 'node', transform: 'translate(' + p.x + ',' + p.y + ')' });
    g.dataset.node = n.name;
    g.append(nodeShape(kind));
    const t = el('svg:text', { y: 32 }, n.name);
    const k = el('svg:title', {}, kind + ' ' + n.name);
    g.append(t, k);
    g.addEventListener('click', () => select({ node: n.name }));
    gn.append(g);
  }
  for (const [sw, grp] of Object.entries(state.groups)) {
    const p = P['group:' + sw];
    if (!p) continue;
    const g = el('svg:g', { class: 'node group', transform: 'translate(' + p.x + ',' + p.y + ')' });
    g.dataset.group = sw;
    g.append(el('svg:circle', { r: 16, fill: '#eeeeee', stroke: '#424242', 'stroke-dasharray': '3 2' }));
    g.append(el('svg:text', { y: 4 }, String(grp.count)), el('svg:text', { y: 34 }, grp.count + ' hosts on ' + sw));
    g.append(el('svg:title', {}, grp.hosts.join(', ') + ' (click to draw them one by one)'));
    g.addEventListener('click', () => { state.expanded[sw] = true; layout(); draw(); });
    gn.append(g);
  }
  for (const [seed, c] of Object.entries(state.clusters)) {
    const p = P['cluster:' + seed];
    if (!p) continue;
    const names = c.members.slice().sort(byName);
    const g = el('svg:g', { class: 'node group cluster', transform: 'translate(' + p.x + ',' + p.y + ')' });
    g.dataset.cluster = seed;
    g.append(el('svg:rect', { x: -22, y: -15, width: 44, height: 30, rx: 9, fill: '#e3f2fd', stroke: '#1565c0', 'stroke-dasharray': '3 2' }));
    g.append(el('svg:text', { y: 4 }, String(names.length)), el('svg:text', { y: 34 }, names.length + ' nodes: ' + names[0] + '…' + names[names.length - 1]));
    g.append(el('svg:title', {}, names.join(', ') + ' (click to draw them one by one)'));
    g.addEventListener('click', () => { state.opened[seed] = true; layout(); draw(); });
    gn.append(g);
  }
  drawTable();
  paintLive();
  markSelection();
}

// byName orders names as people count: r2 before r10.
function byName(a, b) { return a.localeCompare(b, 'en', { numeric: true }); }

// drawAggs draws one wire for all the links between two things drawn,
// when one of them is a group or a cluster: its tooltip counts them, its
// colour and rates (paintAggs) are theirs summed.
function drawAggs(gl) {
  const P = state.pos, by = {};
  state.aggs = [];
  for (const l of state.links) {
    const na = nodeOf(l.a), nb = nodeOf(l.b), a = shown(na), b = shown(nb);
    if (a === b || (a === na && b === nb)) continue; // inside a cluster, or drawn as itself
    const key = a < b ? a + '\t' + b : b + '\t' + a;
    let w = by[key];
    if (!w) {
      w = by[key] = { id: state.aggs.length, a, b, links: [] };
      state.aggs.push(w);
    }
    w.links.push([l.index, a === w.a, Math.max((l.a_to_b && l.a_to_b.Rate) || 0, (l.b_to_a && l.b_to_a.Rate) || 0) || 1e9]);
  }
  for (const w of state.aggs) {
    const a = P[w.a], b = P[w.b];
    if (!a || !b) continue;
    const g = el('svg:g', { class: 'agg', id: 'agg-' + w.id });
    g.append(el('svg:line', { class: 'wire group-wire', x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: '#bdbdbd', 'stroke-width': 3 }));
    g.append(el('svg:line', { class: 'hit', x1: a.x, y1: a.y, x2: b.x, y2: b.y }));
    g.append(el('svg:title', { id: 'aggt-' + w.id }, aggText(w, null, null)));
    gl.append(g);
  }
}

function aggText(w, ab, ba) {
  const name = s => s.replace(/^(group|cluster):/, '');
  let t = w.links.length + (w.links.length === 1 ? ' link' : ' links') + ' between ' + name(w.a) + (w.a.startsWith('cluster:') ? '’s cluster' : w.a.startsWith('group:') ? '’s hosts' : '') +
    ' and ' + name(w.b) + (w.b.startsWith('cluster:') ? '’s cluster' : w.b.startsWith('group:') ? '’s hosts' : '');
  if (ab !== null) t += ': → ' + fmtRate(ab) + ' · ← ' + fmtRate(ba) + ' (their sum)';
  return t;
}

// paintAggs sums each multi-link wire's links' counters: its colour and
// its tooltip. One pass over the links: linear in the lab's size.
function paintAggs() {
  for (const w of state.aggs) {
    let ab = 0, ba = 0, rate = 0, any = false;
    for (const [i, fwd, r] of w.links) {
      const c = state.live[i];
      if (!c) continue;
      any = true;
      ab += (fwd ? c.a_to_b_bps : c.b_to_a_bps) || 0;
      ba += (fwd ? c.b_to_a_bps : c.a_to_b_bps) || 0;
      rate += r;
    }
    const g = $('agg-' + w.id);
    if (!g || !any) continue;
    g.firstChild.style.stroke = loadColour(Math.max(ab, ba), rate);
    $('aggt-' + w.id).textContent = aggText(w, ab, ba);
  }
}

// drawMachines frames each machine's nodes, with the machine's name and
// how it is reached (a lab over several machines).
function drawMachines(g) {
  const ms = (state.machines && state.machines.machines) || [];
  for (const m of ms) {
    const ps = state.nodes.filter(n => machineOf(n.name) === m.name).map(n => state.pos[shown(n.name)]).filter(Boolean);
    if (!ps.length) continue;
    const pad = 45;
    const x0 = Math.min(...ps.map(p => p.x)) - pad, y0 = Math.min(...ps.map(p => p.y)) - pad;
    const x1 = Math.max(...ps.map(p => p.x)) + pad, y1 = Math.max(...ps.map(p => p.y)) + pad;
    const f = el('svg:g', { class: 'machine', 'data-machine': m.name });
    f.append(el('svg:rect', { x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 8 }));
    f.append(el('svg:text', { x: x0 + 8, y: y0 + 16 }, 'machine ' + m.name + ' (' + m.ssh + ')'));
    g.append(f);
  }
}

// zoomSetup: the wheel zooms the drawing around the pointer, a drag on
// its background pans it, a double click on the background fits it again.
function zoomSetup() {
  const svg = $('topo');
  svg.addEventListener('wheel', ev => {
    ev.preventDefault();
    const v = (state.view || state.fit || [0, 0, 1000, 600]).slice();
    const r = svg.getBoundingClientRect();
    const fx = (ev.clientX - r.left) / r.width, fy = (ev.clientY - r.top) / r.height;
    const k = ev.deltaY > 0 ? 1.25 : 1 / 1.25;
    const w = v[2] * k, h = v[3] * k;
    state.view = [v[0] + (v[2] - w) * fx, v[1] + (v[3] - h) * fy, w, h];
    svg.setAttribute('viewBox', state.view.join(' '));
  }, { passive: false });
  let pan = null;
  svg.addEventListener('pointerdown', ev => {
    if (ev.target !== svg) return;
    pan = { x: ev.clientX, y: ev.clientY, v: (state.view || state.fit || [0, 0, 1000, 600]).slice() };
    svg.setPointerCapture(ev.pointerId);
  });
  svg.addEventListener('pointermove', ev => {
    if (!pan) return;
    const r = svg.getBoundingClientRect();
    state.view = [pan.v[0] - (ev.clientX - pan.x) * pan.v[2] / r.width, pan.v[1] - (ev.clientY - pan.y) * pan.v[3] / r.height, pan.v[2], pan.v[3]];
    svg.setAttribute('viewBox', state.view.join(' '));
  });
  svg.addEventListener('pointerup', () => { pan = null; });
  svg.addEventListener('dblclick', ev => {
    if (ev.target !== svg) return;
    state.view = null;
    if (state.fit) svg.setAttribute('viewBox', state.fit.join(' '));
  });
}

function drawTable() {
  const tb = $('links').tBodies[0];
  tb.replaceChildren();
  for (const l of state.links) {
    const tr = el('tr', { id: 'row-' + l.index });
    tr.append(el('td', {}, String(l.index) + ' ' + linkName(l)), el('td', {}, l.a + ' ↔ ' + l.b),
      el('td', {}, fmtParams(l)), el('td', { class: 'num', id: 'ab-' + l.index }, '–'),
      el('td', { class: 'num', id: 'ba-' + l.index }, '–'), el('td', { class: 'num', id: 'queue-' + l.index }, '–'),
      el('td', { class: 'num', id: 'drops-' + l.index }, '–'),
      el('td', { id: 'state-' + l.index }, l.state_a || ''));
    tr.addEventListener('click', () => select({ link: l.index }));
    tb.append(tr);
  }
}

function drops(c) {
  let d = (c.a_to_b.drops || 0) + (c.b_to_a.drops || 0);
  if (c.engine) for (const s of [c.engine.AToB, c.engine.BToA]) d += (s.LossDrops || 0) + (s.QueueDrops || 0) + (s.AQMDrops || 0);
  if (c.kernel) for (const s of c.kernel) d += (s.drops || 0) + (s.loss_drops || 0);
  return d;
}

// queued is a link's queue now in one direction (0: a->b, 1: b->a), in
// packets: a userspace link's engine, or a kernel-shaped link's qdiscs;
// null when neither says.
function queued(c, k) {
  if (c.engine) return (k ? c.engine.BToA : c.engine.AToB).QueueLen;
  if (c.kernel) return c.kernel[k].packets;
  return null;
}

// queueText is a link's queues now, in packets per direction.
function queueText(c) {
  return queued(c, 0) === null ? '–' : queued(c, 0) + ' / ' + queued(c, 1);
}

// paintQueues fills a link's queue gauges: occupancy over the limit,
// red from 90 % full.
function paintQueues(l, c) {
  ['ab', 'ba'].forEach((dir, k) => {
    const f = $('qf-' + dir + '-' + l.index);
    const n = queued(c, k);
    if (!f || n === null) return;
    const limit = +f.dataset.limit;
    const frac = Math.min(1, n / limit);
    f.setAttribute('width', (30 * frac).toFixed(2));
    f.dataset.packets = n;
    f.classList.toggle('full', frac >= 0.9);
    const t = $('qt-' + dir + '-' + l.index);
    if (t) t.textContent = (k ? 'b→a' : 'a→b') + ' queue: ' + n + ' of ' + limit + ' packets';
  });
}

// paintLive writes the last counters into the drawing and the table.
function paintLive() {
  for (const l of state.links) {
    const c = state.live[l.index];
    if (!c) continue;
    const set = (id, text) => { const e = $(id); if (e) e.textContent = text; };
    set('ab-' + l.index, fmtRate(c.a_to_b_bps));
    set('ba-' + l.index, fmtRate(c.b_to_a_bps));
    const [fwd, back] = state.flip[l.index] ? ['← ', '→ '] : ['→ ', '← '];
    set('svg-ab-' + l.index, fwd + fmtRate(c.a_to_b_bps));
    set('svg-ba-' + l.index, back + fmtRate(c.b_to_a_bps));
    set('drops-' + l.index, String(drops(c)));
    set('queue-' + l.index, queueText(c));
    paintQueues(l, c);
    set('state-' + l.index, c.state_a);
    const g = $('link-' + l.index);
    if (g) {
      const bps = Math.max(c.a_to_b_bps || 0, c.b_to_a_bps || 0);
      const rate = Math.max((l.a_to_b && l.a_to_b.Rate) || 0, (l.b_to_a && l.b_to_a.Rate) || 0);
      g.querySelector('line.wire').style.stroke = loadColour(bps, rate);
      g.classList.toggle('down', c.state_a === 'down' || c.state_a === 'missing');
      g.classList.toggle('remote', c.state_a === 'remote');
      const ab = $('svg-ab-' + l.index), ba = $('svg-ba-' + l.index);
      if (ab) ab.style.fill = loadColour(c.a_to_b_bps, l.a_to_b && l.a_to_b.Rate);
      if (ba) ba.style.fill = loadColour(c.b_to_a_bps, l.b_to_a && l.b_to_a.Rate);
    }
  }
  paintAggs();
  $('updates').textContent = String(state.updates);
}

// ---- details --------------------------------------------------------

function select(s) {
  state.sel = s;
  markSelection();
  showDetails();
}

function markSelection() {
  document.querySelectorAll('.sel').forEach(e => e.classList.remove('sel'));
  const s = state.sel;
  if (!s) return;
  if (s.node !== undefined) {
    document.querySelectorAll('.node').forEach(g => { if (g.dataset.node === s.node) g.classList.add('sel'); });
  } else {
    for (const id of ['link-' + s.link, 'row-' + s.link]) { const e = $(id); if (e) e.classList.add('sel'); }
  }
}

function table(rows, head) {
  const t = el('table');
  if (head) { const tr = el('tr'); head.forEach(h => tr.append(el('th', {}, h))); t.append(tr); }
  for (const r of rows) { const tr = el('tr'); r.forEach(c => tr.append(el('td', {}, c))); t.append(tr); }
  return t;
}

function showDetails() {
  const d = $('details');
  d.replaceChildren();
  const s = state.sel;
  if (!s) return;
  if (s.node !== undefined) {
    const n = state.nodes.find(x => x.name === s.node);
    if (!n) { d.append(el('p', { class: 'hint' }, 'node ' + s.node + ' is gone')); return; }
    d.append(el('h3', {}, kindOf(n) + ' ' + n.name));
    d.append(el('h4', {}, 'Interfaces'));
    d.append(table((n.interfaces || []).map(i => [i.name, (i.addrs || []).join(' '), i.mac || '', i.peer ? '↔ ' + i.peer : (i.wireless ? 'wireless' : '')]),
      ['name', 'addresses', 'MAC', 'peer']));
    d.append(el('h4', {}, 'Routes'));
    d.append((n.routes || []).length ? table(n.routes.map(r => [r.dst, r.via || '', r.dev || '', r.auto ? 'auto' : ''])
      , ['destination', 'via', 'dev', '']) : el('p', { class: 'hint' }, 'none'));
    if (state.info && state.info.allow_changes) {
      const b = el('button', { type: 'button', id: 'btn-shell' }, 'open a terminal in ' + n.name);
      b.addEventListener('click', () => openTerm(n.name));
      d.append(b);
    }
    if (n.tcp) { d.append(el('h4', {}, 'TCP')); d.append(el('pre', {}, JSON.stringify(n.tcp, null, 1))); }
    if (n.mptcp) { d.append(el('h4', {}, 'MPTCP')); d.append(el('pre', {}, JSON.stringify(n.mptcp, null, 1))); }
    return;
  }
  const l = state.links.find(x => x.index === s.link);
  if (!l) { d.append(el('p', { class: 'hint' }, 'link ' + s.link + ' is gone')); return; }
  d.append(el('h3', {}, 'link ' + l.index + ': ' + l.a + ' ↔ ' + l.b));
  d.append(table([['kind', l.kind + ' (' + l.backend + ')'], ['a→b', fmtDir(l.a_to_b)], ['b→a', fmtDir(l.b_to_a)],
    ['state', (l.state_a || '') + ' / ' + (l.state_b || '')]]));
  if (l.warning) d.append(el('p', { class: 'err' }, l.warning));
  d.append(el('h4', {}, 'Throughput since the page opened'));
  const leg = el('p');
  leg.append(el('span', { class: 'legend-ab' }, '— a→b '), el('span', { class: 'legend-ba' }, '— b→a'));
  d.append(leg, el('svg:svg', { id: 'plot', viewBox: '0 0 300 100', preserveAspectRatio: 'none' }));
  if (state.info && state.info.allow_changes) d.append(changeForm(l));
  plot();
}

// plot draws the selected link's history: both directions, 0 to the peak.
function plot() {
  const svg = $('plot');
  if (!svg || !state.sel || state.sel.link === undefined) return;
  const h = state.hist[state.sel.link] || [];
  svg.replaceChildren();
  if (h.length < 2) return;
  const t0 = h[0].t, t1 = h[h.length - 1].t;
  const peak = Math.max(1, ...h.map(p => Math.max(p.ab, p.ba)));
  const pts = key => h.map(p => ((p.t - t0) / Math.max(t1 - t0, 1) * 300).toFixed(1) + ',' + (98 - p[key] / peak * 90).toFixed(1)).join(' ');
  svg.append(el('svg:polyline', { points: pts('ab'), fill: 'none', stroke: '#1565c0', 'stroke-width': 1.5, 'vector-effect': 'non-scaling-stroke' }));
  svg.append(el('svg:polyline', { points: pts('ba'), fill: 'none', stroke: '#ef6c00', 'stroke-width': 1.5, 'vector-effect': 'non-scaling-stroke' }));
  svg.append(el('svg:text', { x: 2, y: 9, 'font-size': 8 }, 'peak ' + fmtRate(peak) + ' · ' + ((t1 - t0) / 1000).toFixed(0) + ' s'));
}

// changeForm sets, pulls or plugs a link through the API (link.set,
// link.down, link.up) and shows the answer.
function changeForm(l) {
  const f = el('form', { id: 'change' });
  f.append(el('h4', {}, 'Change'));
  const keys = el('input', { type: 'text', id: 'keys', placeholder: 'rate=20mbit delay=5ms loss=1%' });
  const dir = el('select', { id: 'dir' });
  for (const [v, t] of [['', 'both'], ['a->b', 'a→b'], ['b->a', 'b→a']]) dir.append(el('option', { value: v }, t));
  const set = el('button', { type: 'submit', id: 'btn-set' }, 'link set');
  const down = el('button', { type: 'button', id: 'btn-down' }, 'down');
  const up = el('button', { type: 'button', id: 'btn-up' }, 'up');
  // the answer outlives the form, which a reload draws again
  const last = state.change && state.change.link === l.index ? state.change : { cls: '', text: '' };
  const out = el('p', { id: 'change-result', class: last.cls }, last.text);
  const say = (cls, text) => {
    state.change = { link: l.index, cls, text };
    const o = $('change-result');
    if (o) { o.className = cls; o.textContent = text; }
  };
  const run = async (method, params) => {
    say('', method + '…');
    try {
      await call(method, Object.assign({ link: String(l.index) }, params));
      say('ok', method + ': done');
      await reload();
    } catch (e) { say('err', method + ': ' + e.message); }
  };
  f.addEventListener('submit', ev => {
    ev.preventDefault();
    const kv = {};
    for (const w of keys.value.trim().split(/[\s,]+/).filter(Boolean)) {
      const i = w.indexOf('=');
      if (i < 1) { say('err', '"' + w + '": write key=value'); return; }
      kv[w.slice(0, i)] = w.slice(i + 1);
    }
    const p = { set: kv };
    if (dir.value) p.dir = dir.value;
    run('link.set', p);
  });
  down.addEventListener('click', () => run('link.down'));
  up.addEventListener('click', () => run('link.up'));
  f.append(keys, dir, set, el('br'), down, up, out);
  return f;
}


// ---- Wi-Fi ------------------------------------------------------------

// The medium's map: every AP and station where the medium has it, to
// scale (metres), association lines, each station's rate and SNR to its
// AP; with changes allowed a dragged station moves in the medium through
// the API's wifi.move (what `emuctl wifi move` runs).

const WMAP = { w: 800, h: 450 };

function hasWiFi() { return state.nodes.some(n => n.ap || n.station); }

async function refreshWiFi() {
  if (!hasWiFi() || state.drag || state.down) return;
  try { state.wifi = await call('wifi.show'); } catch (e) { $('wifi-hint').textContent = e.message; return; }
  if (!state.drag) drawWiFi();
}

function niceStep(span) {
  const raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

// the frame maps metres to the map's pixels (y up)
function wifiFrame(pos) {
  const xs = pos.map(p => p[0]), ys = pos.map(p => p[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const span = Math.max(x1 - x0, y1 - y0, 20);
  const pad = span * 0.25;
  const sc = Math.min(WMAP.w / (x1 - x0 + 2 * pad || 1), WMAP.h / (y1 - y0 + 2 * pad || 1), WMAP.w / (span + 2 * pad));
  return { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, sc };
}
function toPx(f, x, y) { return [WMAP.w / 2 + (x - f.cx) * f.sc, WMAP.h / 2 - (y - f.cy) * f.sc]; }
function toM(f, X, Y) { return [f.cx + (X - WMAP.w / 2) / f.sc, f.cy - (Y - WMAP.h / 2) / f.sc]; }

function wifiRows() {
  const w = state.wifi || {};
  const pos = (w.medium && w.medium.positions) || {};
  const nodes = (w.nodes || []).filter(n => pos[n.node]);
  const aps = nodes.filter(n => n.role === 'ap');
  return nodes.map(n => {
    const ap = n.role === 'station' ? aps.find(a => a.bssid && a.bssid === n.bssid) : null;
    const m = n.medium || {};
    const l = ap && (m.links || []).find(k => k.to === ap.node);
    return { n, ap, pos: pos[n.node], m, snr: l ? l.snr_db : null };
  });
}

function drawWiFi() {
  const sec = $('wifi');
  sec.hidden = !hasWiFi();
  if (sec.hidden) return;
  const rows = wifiRows();
  const svg = $('wifimap');
  svg.setAttribute('viewBox', '0 0 ' + WMAP.w + ' ' + WMAP.h);
  svg.replaceChildren();
  if (!rows.length) { $('wifi-hint').textContent = 'the medium reports no positions'; return; }
  // each AP's range: where its frames reach the lowest rate's SNR threshold
  const ranges = (state.wifi.medium && state.wifi.medium.ranges_m) || {};
  const pts = rows.map(r => r.pos);
  if ($('wifi-fit-range').checked) {
    for (const r of rows) {
      const d = ranges[r.n.node];
      if (d) pts.push([r.pos[0] - d, r.pos[1] - d], [r.pos[0] + d, r.pos[1] + d]);
    }
  }
  const f = state.wframe = wifiFrame(pts);
  // grid and scale
  const step = niceStep(Math.max(WMAP.w, WMAP.h) / f.sc);
  const [mx0, my1] = toM(f, 0, 0), [mx1, my0] = toM(f, WMAP.w, WMAP.h);
  for (let x = Math.ceil(mx0 / step) * step; x <= mx1; x += step) {
    const [X] = toPx(f, x, 0);
    svg.append(el('svg:line', { class: 'grid', x1: X, y1: 0, x2: X, y2: WMAP.h }), el('svg:text', { class: 'gridlabel', x: X + 2, y: WMAP.h - 3 }, +x.toFixed(3) + ' m'));
  }
  for (let y = Math.ceil(my0 / step) * step; y <= my1; y += step) {
    const [, Y] = toPx(f, 0, y);
    svg.append(el('svg:line', { class: 'grid', x1: 0, y1: Y, x2: WMAP.w, y2: Y }), el('svg:text', { class: 'gridlabel', x: 2, y: Y - 2 }, +y.toFixed(3) + ' m'));
  }
  for (const r of rows) {
    if (!r.ap) continue;
    const a = toPx(f, r.pos[0], r.pos[1]), b = toPx(f, ...state.wifi.medium.positions[r.ap.node].slice(0, 2));
    svg.append(el('svg:line', { class: 'assoc', x1: a[0], y1: a[1], x2: b[0], y2: b[1] }));
  }
  for (const r of rows) {
    const d = ranges[r.n.node];
    if (r.n.role !== 'ap' || !d) continue;
    const [X, Y] = toPx(f, r.pos[0], r.pos[1]);
    svg.append(el('svg:circle', { class: 'range', id: 'wrange-' + r.n.node, cx: X, cy: Y, r: d * f.sc }));
    svg.append(el('svg:text', { class: 'gridlabel', x: X + 6, y: Y - 22 }, 'range ' + d.toFixed(1) + ' m'));
  }
  const movable = state.info && state.info.allow_changes;
  for (const r of rows) {
    const [X, Y] = toPx(f, r.pos[0], r.pos[1]);
    const g = el('svg:g', { class: 'wnode ' + r.n.role, transform: 'translate(' + X + ',' + Y + ')' });
    g.dataset.node = r.n.node;
    g.append(nodeShape(r.n.role === 'ap' ? 'ap' : 'station'), el('svg:text', { y: 28 }, r.n.node));
    if (r.n.role === 'station') {
      g.append(el('svg:text', { y: 41, id: 'winfo-' + r.n.node }, (r.m.last_data_rate || '–') + (r.snr !== null ? ' · ' + r.snr.toFixed(1) + ' dB' : '')));
      if (movable) { g.classList.add('movable'); g.addEventListener('pointerdown', ev => startDrag(ev, g, r.n.node, r.pos)); }
    }
    svg.append(g);
  }
  const tb = $('wifi-table').tBodies[0];
  tb.replaceChildren();
  for (const r of rows.filter(r => r.n.role === 'station')) {
    const tr = el('tr', { id: 'wrow-' + r.n.node });
    tr.append(el('td', {}, r.n.node), el('td', {}, r.ap ? r.ap.node : (r.n.state || 'not associated')),
      el('td', { class: 'num', id: 'wpos-' + r.n.node }, r.pos.map(v => +v.toFixed(2)).join(', ')),
      el('td', {}, r.m.last_data_rate || '–'),
      el('td', { class: 'num', id: 'wsnr-' + r.n.node }, r.snr !== null ? r.snr.toFixed(1) + ' dB' : '–'),
      el('td', { class: 'num' }, ((r.m.airtime_share || 0) * 100).toFixed(1) + ' %'),
      el('td', { class: 'num' }, String(r.m.retries || 0)), el('td', { class: 'num' }, (r.m.per || 0).toFixed(3)));
    tb.append(tr);
  }
  $('wifi-hint').textContent = movable ? '(drag a station to move it)' : '';
}

// startDrag follows the pointer with the station, then moves it in the
// medium where it is let go (its height kept).
function startDrag(ev, g, node, pos) {
  ev.preventDefault();
  const svg = $('wifimap'), f = state.wframe;
  state.drag = node;
  g.classList.add('dragging');
  g.setPointerCapture(ev.pointerId);
  const at = e => {
    const p = svg.createSVGPoint();
    p.x = e.clientX; p.y = e.clientY;
    return p.matrixTransform(svg.getScreenCTM().inverse());
  };
  let last = null;
  const move = e => { const p = at(e); last = p; g.setAttribute('transform', 'translate(' + p.x + ',' + p.y + ')'); };
  const up = async e => {
    g.removeEventListener('pointermove', move);
    g.removeEventListener('pointerup', up);
    if (last) {
      const [x, y] = toM(f, last.x, last.y);
      const to = [+x.toFixed(2), +y.toFixed(2), pos[2] || 0];
      const out = $('wifi-result');
      try {
        await call('wifi.move', { node, pos: to });
        out.className = 'ok'; out.textContent = 'wifi.move ' + node + ' to ' + to.join(',') + ': done';
      } catch (err) { out.className = 'err'; out.textContent = 'wifi.move ' + node + ': ' + err.message; }
    }
    state.drag = null;
    refreshWiFi();
  };
  g.addEventListener('pointermove', move);
  g.addEventListener('pointerup', up);
}


// ---- terminal -------------------------------------------------------

// A node's terminal over a WebSocket (/api/tty: the API's tty — bash on a
// pseudo-terminal in the node), drawn by term.js: keys go as an xterm
// sends them, output comes as it is printed, the size follows the panel.
// Hung up with the close button or when the page goes.

let term = null; // {ws, t}

function termNote(text) {
  const out = $('term-out');
  out.append(el('div', { class: 'msg' }, text));
  out.scrollTop = out.scrollHeight;
}

function openTerm(node) {
  closeTerm();
  $('term').hidden = false;
  document.body.classList.add('with-term'); // the page scrolls clear of the panel
  $('term-node').textContent = node;
  $('term-info').textContent = 'connecting';
  const out = $('term-out');
  out.replaceChildren();
  const cur = { ws: null, t: null };
  cur.t = new Term(out, data => { if (cur.ws && cur.ws.readyState === WebSocket.OPEN) cur.ws.send(JSON.stringify({ type: 'input', data })); });
  const size = cur.t.fit();
  cur.t.resize(size.rows, size.cols);
  const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/api/tty?node=' +
    encodeURIComponent(node) + '&rows=' + size.rows + '&cols=' + size.cols);
  cur.ws = ws;
  term = cur;
  ws.onmessage = m => {
    const msg = JSON.parse(m.data);
    if (msg.type === 'output') cur.t.write(msg.data);
    else if (msg.type === 'open') $('term-info').textContent = msg.text + ', ' + msg.rows + '×' + msg.cols;
    else if (msg.type === 'ended') { $('term-info').textContent = 'ended (exit status ' + msg.code + ')'; }
    else if (msg.type === 'error') termNote(msg.text);
  };
  ws.onclose = () => { if (term === cur) $('term-info').textContent += ' [closed]'; };
  out.focus();
}

function closeTerm() {
  if (term) { const t = term; term = null; t.ws.close(); }
  $('term').hidden = true;
  document.body.classList.remove('with-term');
}

function termResize() {
  if (!term) return;
  const size = term.t.fit();
  if (size.rows === term.t.rows && size.cols === term.t.cols) return;
  term.t.resize(size.rows, size.cols);
  if (term.ws.readyState === WebSocket.OPEN) term.ws.send(JSON.stringify({ type: 'resize', rows: size.rows, cols: size.cols }));
}

function termSetup() {
  const out = $('term-out');
  out.addEventListener('keydown', ev => {
    if (!term) return;
    const k = term.t.key(ev);
    if (k === null) return;
    ev.preventDefault();
    term.t.send(k);
  });
  out.addEventListener('paste', ev => {
    if (!term) return;
    ev.preventDefault();
    term.t.send((ev.clipboardData.getData('text') || '').replace(/\r?\n/g, '\r'));
  });
  out.addEventListener('click', () => out.focus());
  $('term-close').addEventListener('click', closeTerm);
  let pending = null;
  window.addEventListener('resize', () => { clearTimeout(pending); pending = setTimeout(termResize, 150); });
  window.addEventListener('pagehide', closeTerm);
}

function wifiSetup() {
  $('wifi-fit-range').addEventListener('change', drawWiFi);
}


// ---- events ---------------------------------------------------------

function logEvent(ev) {
  const li = el('li', { class: ev.type });
  const t = (ev.t || '').slice(11, 23);
  let what = ev.type;
  if (ev.node) what += ' ' + ev.node;
  if (ev.link !== undefined) what += ' link ' + ev.link;
  if (ev.a) what += ' ' + ev.a + (ev.b ? ' ↔ ' + ev.b : '');
  if (ev.state) what += ' ' + ev.state;
  if (ev.message) what += ': ' + ev.message; // a warning's text (a machine's counters worker failed, ...)
  if (ev.type === 'link-changed' && ev.params) what += ': ' + fmtDir(ev.params.a_to_b) + (fmtDir(ev.params.a_to_b) === fmtDir(ev.params.b_to_a) ? '' : ' / ' + fmtDir(ev.params.b_to_a));
  li.textContent = t + ' ' + what;
  const ul = $('events');
  ul.prepend(li);
  while (ul.children.length > 200) ul.lastChild.remove();
}

function onEvent(ev) {
  if (ev.type === 'counters') {
    const now = Date.now();
    for (const c of ev.links || []) {
      state.live[c.index] = c;
      const h = state.hist[c.index] || (state.hist[c.index] = []);
      h.push({ t: now, ab: c.a_to_b_bps || 0, ba: c.b_to_a_bps || 0 });
      if (h.length > HISTORY) h.shift();
    }
    state.updates++;
    paintLive();
    plot();
    return;
  }
  logEvent(ev);
  if (ev.type === 'lab-down') {
    state.down = true;
    $('status').textContent = 'lab down';
    $('status').className = 'status down';
    stream.close();
    return;
  }
  // the lab's shape or parameters changed: read it again
  reload();
}

let stream;

function connect() {
  if (stream) stream.close();
  stream = new EventSource('api/events');
  stream.onopen = () => { $('status').textContent = 'live'; $('status').className = 'status live'; };
  stream.onerror = () => {
    if ($('status').textContent !== 'lab down') { $('status').textContent = 'reconnecting'; $('status').className = 'status'; }
  };
  stream.onmessage = m => { try { onEvent(JSON.parse(m.data)); } catch (e) { console.error(e); } };
}

async function reload() {
  const [nodes, links, machines] = await Promise.all([call('nodes'), call('links'), call('machines')]);
  state.machines = machines.machines.length ? machines : null;
  const shape = JSON.stringify(nodes.map(n => n.name)) + JSON.stringify(links.map(l => l.a + l.b));
  const old = JSON.stringify(state.nodes.map(n => n.name)) + JSON.stringify(state.links.map(l => l.a + l.b));
  state.nodes = nodes; state.links = links;
  if (shape !== old) { state.clustered = null; layout(); }
  draw();
  showDetails();
  refreshWiFi();
}

// ---- a suite running (emuctl test --ui) -------------------------------
// Each run builds the suite's lab afresh under one name and takes it down
// at its end: the page follows it from run to run, and shows the suite's
// progress, the checks judged so far and, at the end, its report.

const suite = { ver: null, following: false, reported: false, st: null };

async function pollSuite() {
  let r;
  try { r = await fetch('api/suite'); } catch (e) { return; }
  if (!r.ok) return;
  const ver = r.headers.get('X-Version');
  if (ver !== suite.ver) {
    suite.ver = ver;
    suite.st = await r.json();
    drawSuite(suite.st);
  }
  drawSuiteClock(suite.st);
  const st = suite.st;
  // a run's lab is up (or being built): follow it once it answers
  if (st.phase === 'running' && (state.down || !stream || stream.readyState === EventSource.CLOSED) && !suite.following) {
    suite.following = true;
    try {
      await reload();
      state.down = false;
      connect();
      logEvent({ type: 'run', a: st.current || '' });
    } catch (e) { /* not up yet: the next poll tries again */ }
    suite.following = false;
  }
  if (st.phase === 'finished' && st.report && !suite.reported) {
    suite.reported = true;
    showReport();
  }
}

function secs(s) {
  s = Math.max(0, Math.round(s));
  const m = Math.floor(s / 60);
  return m + ':' + String(s % 60).padStart(2, '0');
}

function drawSuiteClock(st) {
  if (!st || !st.started) return;
  const now = Date.now();
  const elapsed = (now - Date.parse(st.started)) / 1000;
  let text = st.phase === 'finished' ? 'finished' :
    'run ' + Math.min(st.done + 1, st.runs) + ' of ' + st.runs + ': ' + (st.current || '') + ' (' + st.phase + ')';
  text += ' · ' + secs(elapsed) + ' elapsed';
  if (st.phase !== 'finished') text += ', about ' + secs(st.left_s - (now - Date.parse(st.updated)) / 1000) + ' left';
  $('suite-progress').textContent = text;
  if (state.down) { // each run's lab goes down at its end: that is no alarm here
    $('status').textContent = st.phase === 'finished' ? 'suite finished' : 'between runs';
    $('status').className = 'status';
  }
}

function drawSuite(st) {
  if (!st.suite) { $('suite-progress').textContent = st.phase || ''; return; }
  $('suite-head').textContent = 'suite ' + st.suite + ' (' + st.profile + '): ' + st.title;
  $('suite-bar').max = st.runs || 1;
  $('suite-bar').value = st.done;
  const v = $('suite-verdict');
  v.textContent = '';
  if (st.verdict) {
    v.append('verdict: ', el('strong', { class: st.verdict === 'pass' ? 'ok' : 'err', id: 'verdict' }, st.verdict.toUpperCase()),
      ' (' + st.done + ' runs; results in ' + st.dir + ')');
  }
  const cb = $('suite-checks').tBodies[0];
  cb.textContent = '';
  for (const c of st.checks || []) {
    const tr = el('tr', { 'data-check': c.id });
    tr.append(el('td', {}, c.id), el('td', {}, c.class),
      el('td', { class: 'check-' + c.status }, c.status),
      el('td', { class: 'hint' }, c.decided ? 'final' : 'so far'),
      el('td', {}, c.measured || ''), el('td', {}, c.title));
    cb.append(tr);
  }
  const rb = $('suite-runs').tBodies[0];
  rb.textContent = '';
  const runs = st.finished || [];
  $('suite-nruns').textContent = runs.length;
  runs.forEach((r, i) => {
    const name = r.scenario + ' #' + r.rep + (r.attempt > 1 ? ' (retry ' + (r.attempt - 1) + ')' : '');
    const tr = el('tr', { class: 'run-' + r.status });
    tr.append(el('td', { class: 'num' }, String(i + 1)), el('td', {}, name), el('td', {}, r.status),
      el('td', {}, r.line), el('td', { class: 'num' }, r.seconds.toFixed(1)));
    rb.prepend(tr);
  });
}

// showReport frames the suite's report: the server renders its Markdown
// (as emuctl report --ui does) into a page without script.
function showReport() {
  $('suite-report-frame').src = 'suite-report';
  $('suite-report').hidden = false;
}

async function main() {
  const r = await fetch('api/info');
  state.info = await r.json();
  $('lab').textContent = state.info.lab;
  $('mode').textContent = state.info.allow_changes ? 'changes allowed' : 'read-only';
  termSetup();
  wifiSetup();
  zoomSetup();
  if (state.info.suite) {
    // the lab exists only while a run is made: pollSuite follows it
    $('suite').hidden = false;
    state.down = true;
    $('status').textContent = 'waiting for a run';
    pollSuite();
    setInterval(pollSuite, 500);
  } else {
    try { await reload(); } catch (e) { logEvent({ type: 'error', a: e.message }); }
    connect();
  }
  setInterval(refreshWiFi, 500); // the medium has no events: read twice a second
}

main();
