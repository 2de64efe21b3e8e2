// emuctl ui: a small terminal emulator for a node's terminal (bash on a
// pseudo-terminal in the node, TERM=xterm). It keeps a screen of rows ×
// cols cells and the lines scrolled off its top, and understands what
// bash, readline and the usual programs send: text with deferred wrap,
// C0 controls, cursor movement and addressing, erase and insert/delete of
// characters and lines, scroll regions, SGR colours (16, 256, RGB), bold,
// underline, inverse, the alternate screen, saved cursors, application
// cursor keys and the cursor's visibility; it answers cursor position and
// device attribute requests. Keys become what an xterm sends.
'use strict';

class Term {
  constructor(el, send) {
    this.el = el;          // the <pre> it draws in
    this.send = send;      // bytes for the terminal (keys, answers)
    this.rows = 24; this.cols = 80;
    this.scrollback = [];  // lines (cell arrays) scrolled off the main screen
    this.maxScrollback = 1000;
    this.reset();
    this.pending = false;
  }

  reset() {
    this.main = this.blank(this.rows);
    this.alt = null;       // the alternate screen when active
    this.screen = this.main;
    this.x = 0; this.y = 0; this.wrapNext = false;
    this.top = 0; this.bot = this.rows - 1;
    this.style = {};
    this.saved = null;
    this.appCursor = false; this.autowrap = true; this.cursorOn = true;
    this.state = 'ground'; this.params = ''; this.osc = '';
  }

  blankCell() { return { ch: ' ', st: this.style }; }
  blankLine() { const l = []; for (let i = 0; i < this.cols; i++) l.push({ ch: ' ', st: {} }); return l; }
  blank(n) { const s = []; for (let i = 0; i < n; i++) s.push(this.blankLine()); return s; }

  // resize keeps what fits: lines above the cursor that no longer fit go
  // to the scrollback, as in xterm; below it they are dropped
  resize(rows, cols) {
    const over = Math.max(0, this.y - (rows - 1));
    for (let i = 0; i < over; i++) this.pushScrollback(this.main.shift());
    const fit = s => {
      s.length = Math.min(s.length, rows);
      while (s.length < rows) s.push([]);
      for (const l of s) {
        l.length = Math.min(l.length, cols);
        while (l.length < cols) l.push({ ch: ' ', st: {} });
      }
    };
    this.rows = rows; this.cols = cols;
    fit(this.main);
    if (this.alt) fit(this.alt);
    this.y = Math.min(this.y - over, rows - 1);
    this.x = Math.min(this.x, cols - 1);
    this.top = 0; this.bot = rows - 1; this.wrapNext = false;
    this.draw();
  }

  pushScrollback(l) {
    this.scrollback.push(l);
    if (this.scrollback.length > this.maxScrollback) this.scrollback.shift();
  }

  // ---- output --------------------------------------------------------

  write(s) {
    for (const c of s) this.feed(c);
    this.draw();
  }

  feed(c) {
    const code = c.codePointAt(0);
    switch (this.state) {
      case 'ground':
        if (code < 0x20 || code === 0x7f) return this.control(code);
        return this.put(c);
      case 'esc': return this.escape(c);
      case 'csi':
        if (code >= 0x40 && code <= 0x7e) { this.state = 'ground'; return this.csi(c, this.params); }
        if (code === 0x1b) { this.state = 'esc'; return; }
        if (code === 0x18 || code === 0x1a) { this.state = 'ground'; return; }
        this.params += c;
        return;
      case 'osc': // a title and the like: read to BEL or ST, ignored
        if (code === 0x07) this.state = 'ground';
        else if (code === 0x1b) this.state = 'oscEsc';
        return;
      case 'oscEsc': this.state = c === '\\' ? 'ground' : 'osc'; return;
      case 'charset': this.state = 'ground'; return; // ESC ( B and the like
    }
  }

  control(code) {
    switch (code) {
      case 0x1b: this.state = 'esc'; return;
      case 0x08: if (this.x > 0) this.x--; this.wrapNext = false; return;
      case 0x09: this.x = Math.min(this.cols - 1, (Math.floor(this.x / 8) + 1) * 8); this.wrapNext = false; return;
      case 0x0a: case 0x0b: case 0x0c: this.lineFeed(); return;
      case 0x0d: this.x = 0; this.wrapNext = false; return;
      default: return; // BEL, SO, SI, NUL, DEL: nothing to draw
    }
  }

  put(c) {
    if (this.wrapNext && this.autowrap) { this.x = 0; this.lineFeed(); }
    this.wrapNext = false;
    this.screen[this.y][this.x] = { ch: c, st: this.style };
    if (this.x === this.cols - 1) this.wrapNext = true;
    else this.x++;
  }

  lineFeed() {
    this.wrapNext = false;
    if (this.y === this.bot) this.scrollUp(1);
    else if (this.y < this.rows - 1) this.y++;
  }

  scrollUp(n) {
    for (let i = 0; i < n; i++) {
      const l = this.screen.splice(this.top, 1)[0];
      if (this.screen === this.main && this.top === 0) this.pushScrollback(l);
      this.screen.splice(this.bot, 0, this.blankLine());
    }
  }

  scrollDown(n) {
    for (let i = 0; i < n; i++) {
      this.screen.splice(this.bot, 1);
      this.screen.splice(this.top, 0, this.blankLine());
    }
  }

  escape(c) {
    this.state = 'ground';
    switch (c) {
      case '[': this.state = 'csi'; this.params = ''; return;
      case ']': this.state = 'osc'; return;
      case '(': case ')': case '*': case '+': this.state = 'charset'; return;
      case '7': this.saveCursor(); return;
      case '8': this.restoreCursor(); return;
      case 'D': this.lineFeed(); return;
      case 'E': this.x = 0; this.lineFeed(); return;
      case 'M': // reverse index
        if (this.y === this.top) this.scrollDown(1); else if (this.y > 0) this.y--;
        return;
      case 'c': this.reset(); return;
      default: return; // keypad modes and the like
    }
  }

  saveCursor() { this.saved = { x: this.x, y: this.y, style: this.style, wrapNext: this.wrapNext }; }
  restoreCursor() {
    if (!this.saved) { this.x = 0; this.y = 0; return; }
    Object.assign(this, { x: this.saved.x, y: this.saved.y, style: this.saved.style, wrapNext: this.saved.wrapNext });
  }

  csi(f, raw) {
    const priv = raw.startsWith('?');
    const ps = (priv ? raw.slice(1) : raw).split(';').map(p => parseInt(p, 10));
    const n = (i = 0, d = 1) => (Number.isNaN(ps[i]) || ps[i] === undefined || ps[i] === 0) ? d : ps[i];
    const clampX = v => Math.max(0, Math.min(this.cols - 1, v));
    const clampY = v => Math.max(0, Math.min(this.rows - 1, v));
    if (raw.startsWith('>') || raw.startsWith('=')) { // secondary attributes and the like
      if (f === 'c') this.send('\x1b[>0;0;0c');
      return;
    }
    this.wrapNext = false;
    switch (f) {
      case 'A': this.y = Math.max(this.y < this.top ? 0 : this.top, this.y - n()); return;
      case 'B': this.y = Math.min(this.y > this.bot ? this.rows - 1 : this.bot, this.y + n()); return;
      case 'C': case 'a': this.x = clampX(this.x + n()); return;
      case 'D': this.x = clampX(this.x - n()); return;
      case 'E': this.x = 0; this.y = clampY(this.y + n()); return;
      case 'F': this.x = 0; this.y = clampY(this.y - n()); return;
      case 'G': case '`': this.x = clampX(n() - 1); return;
      case 'H': case 'f': this.y = clampY(n(0) - 1); this.x = clampX(n(1) - 1); return;
      case 'd': this.y = clampY(n() - 1); return;
      case 'J': return this.eraseDisplay(Number.isNaN(ps[0]) ? 0 : ps[0]);
      case 'K': return this.eraseLine(Number.isNaN(ps[0]) ? 0 : ps[0]);
      case '@': { const l = this.screen[this.y]; for (let i = 0; i < n(); i++) { l.splice(this.x, 0, this.blankCell()); l.length = this.cols; } return; }
      case 'P': { const l = this.screen[this.y]; l.splice(this.x, Math.min(n(), this.cols - this.x)); while (l.length < this.cols) l.push(this.blankCell()); return; }
      case 'X': { const l = this.screen[this.y]; for (let i = this.x; i < Math.min(this.cols, this.x + n()); i++) l[i] = this.blankCell(); return; }
      case 'L': if (this.y >= this.top && this.y <= this.bot) { for (let i = 0; i < n(); i++) { this.screen.splice(this.bot, 1); this.screen.splice(this.y, 0, this.blankLine()); } } return;
      case 'M': if (this.y >= this.top && this.y <= this.bot) { for (let i = 0; i < n(); i++) { this.screen.splice(this.y, 1); this.screen.splice(this.bot, 0, this.blankLine()); } } return;
      case 'S': this.scrollUp(n()); return;
      case 'T': this.scrollDown(n()); return;
      case 'm': return this.sgr(raw === '' ? [0] : ps.map(p => Number.isNaN(p) ? 0 : p));
      case 'r': {
        const t = n(0) - 1, b = (Number.isNaN(ps[1]) || ps[1] === undefined) ? this.rows - 1 : ps[1] - 1;
        if (t < b && b < this.rows) { this.top = t; this.bot = b; this.x = 0; this.y = 0; }
        return;
      }
      case 's': this.saveCursor(); return;
      case 'u': this.restoreCursor(); return;
      case 'h': case 'l': if (priv) this.mode(ps, f === 'h'); return;
      case 'n': if (ps[0] === 6) this.send('\x1b[' + (this.y + 1) + ';' + (this.x + 1) + 'R'); else if (ps[0] === 5) this.send('\x1b[0n'); return;
      case 'c': this.send('\x1b[?1;2c'); return;
      default: return; // window operations and the like
    }
  }

  eraseDisplay(m) {
    if (m === 0) { this.eraseLine(0); for (let y = this.y + 1; y < this.rows; y++) this.screen[y] = this.blankLine(); }
    else if (m === 1) { this.eraseLine(1); for (let y = 0; y < this.y; y++) this.screen[y] = this.blankLine(); }
    else if (m === 2) { for (let y = 0; y < this.rows; y++) this.screen[y] = this.blankLine(); }
    else if (m === 3) { this.scrollback = []; }
  }

  eraseLine(m) {
    const l = this.screen[this.y];
    const [a, b] = m === 0 ? [this.x, this.cols] : m === 1 ? [0, this.x + 1] : [0, this.cols];
    for (let i = a; i < b; i++) l[i] = this.blankCell();
  }

  mode(ps, on) {
    for (const p of ps) {
      switch (p) {
        case 1: this.appCursor = on; break;
        case 7: this.autowrap = on; break;
        case 25: this.cursorOn = on; break;
        case 47: case 1047: case 1049:
          if (on && !this.alt) {
            if (p === 1049) this.saveCursor();
            this.alt = this.blank(this.rows); this.screen = this.alt;
            if (p === 1049) this.eraseDisplay(2);
          } else if (!on && this.alt) {
            this.alt = null; this.screen = this.main;
            if (p === 1049) this.restoreCursor();
          }
          break;
        default: break; // bracketed paste, mouse reporting and the like: not sent
      }
    }
  }

  sgr(ps) {
    let st = Object.assign({}, this.style);
    for (let i = 0; i < ps.length; i++) {
      const p = ps[i];
      if (p === 0) st = {};
      else if (p === 1) st.bold = true;
      else if (p === 3) st.italic = true;
      else if (p === 4) st.under = true;
      else if (p === 7) st.inverse = true;
      else if (p === 22) delete st.bold;
      else if (p === 23) delete st.italic;
      else if (p === 24) delete st.under;
      else if (p === 27) delete st.inverse;
      else if (p >= 30 && p <= 37) st.fg = p - 30;
      else if (p >= 90 && p <= 97) st.fg = p - 90 + 8;
      else if (p === 39) delete st.fg;
      else if (p >= 40 && p <= 47) st.bg = p - 40;
      else if (p >= 100 && p <= 107) st.bg = p - 100 + 8;
      else if (p === 49) delete st.bg;
      else if ((p === 38 || p === 48) && ps[i + 1] === 5) { st[p === 38 ? 'fg' : 'bg'] = ps[i + 2]; i += 2; }
      else if ((p === 38 || p === 48) && ps[i + 1] === 2) {
        st[p === 38 ? 'fg' : 'bg'] = 'rgb(' + ps[i + 2] + ',' + ps[i + 3] + ',' + ps[i + 4] + ')'; i += 4;
      }
    }
    this.style = st;
  }

  // ---- drawing -------------------------------------------------------

  draw() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.render(); });
  }

  render() {
    const atBottom = this.el.scrollTop + this.el.clientHeight >= this.el.scrollHeight - 4;
    const frag = document.createDocumentFragment();
    const line = (cells, cls, cursorX) => {
      const div = document.createElement('div');
      div.className = cls;
      let run = '', runSt = null, runCur = false;
      const flush = () => {
        if (run === '') return;
        const span = document.createElement('span');
        span.textContent = run;
        const css = Term.css(runSt, runCur);
        if (css.cls) span.className = css.cls;
        // colours through the CSSOM: the page's CSP refuses style attributes
        if (css.fg) span.style.color = css.fg;
        if (css.bg) span.style.background = css.bg;
        div.appendChild(span);
        run = '';
      };
      for (let i = 0; i < cells.length; i++) {
        const c = cells[i], cur = i === cursorX;
        if (runSt !== c.st || cur || runCur) { flush(); runSt = c.st; runCur = cur; }
        run += c.ch;
      }
      flush();
      if (!div.firstChild) div.textContent = ' ';
      frag.appendChild(div);
    };
    if (this.screen === this.main) for (const l of this.scrollback) line(l, 'sb', -1);
    for (let y = 0; y < this.rows; y++) line(this.screen[y], 'scr', (this.cursorOn && y === this.y) ? this.x : -1);
    this.el.replaceChildren(frag);
    this.el.dataset.rows = this.rows; this.el.dataset.cols = this.cols;
    if (atBottom) this.el.scrollTop = this.el.scrollHeight;
  }

  // css is a cell style's classes and colours.
  static css(st, cursor) {
    let fg = st.fg, bg = st.bg;
    if (!!st.inverse !== !!cursor) { // inverse video, or the cursor's cell
      const f = fg === undefined ? 'fg' : fg, b = bg === undefined ? 'bg' : bg;
      fg = b; bg = f;
    }
    const color = c => c === 'fg' ? 'var(--term-fg)' : c === 'bg' ? 'var(--term-bg)' : typeof c === 'string' ? c : Term.palette(st.bold && c < 8 ? c + 8 : c);
    const cls = [st.bold ? 'b' : '', st.under ? 'u' : '', st.italic ? 'i' : '', cursor ? 'cur' : ''].filter(Boolean).join(' ');
    return { cls, fg: fg === undefined ? '' : color(fg), bg: bg === undefined ? '' : color(bg) };
  }

  // palette is xterm's 256 colours.
  static palette(i) {
    const base = ['#000000', '#cd0000', '#00cd00', '#cdcd00', '#0000ee', '#cd00cd', '#00cdcd', '#e5e5e5',
      '#7f7f7f', '#ff0000', '#00ff00', '#ffff00', '#5c5cff', '#ff00ff', '#00ffff', '#ffffff'];
    if (i < 16) return base[i];
    if (i < 232) {
      const v = [0, 95, 135, 175, 215, 255], k = i - 16;
      return 'rgb(' + v[Math.floor(k / 36)] + ',' + v[Math.floor(k / 6) % 6] + ',' + v[k % 6] + ')';
    }
    const g = 8 + 10 * (i - 232);
    return 'rgb(' + g + ',' + g + ',' + g + ')';
  }

  // ---- keys ----------------------------------------------------------

  // key is what an xterm sends for a keydown, or null (not ours).
  key(ev) {
    const app = this.appCursor;
    const arrows = { ArrowUp: 'A', ArrowDown: 'B', ArrowRight: 'C', ArrowLeft: 'D' };
    if (arrows[ev.key]) return (app ? '\x1bO' : '\x1b[') + arrows[ev.key];
    const named = {
      Enter: '\r', Backspace: '\x7f', Tab: '\t', Escape: '\x1b',
      Home: app ? '\x1bOH' : '\x1b[H', End: app ? '\x1bOF' : '\x1b[F',
      Insert: '\x1b[2~', Delete: '\x1b[3~', PageUp: '\x1b[5~', PageDown: '\x1b[6~',
      F1: '\x1bOP', F2: '\x1bOQ', F3: '\x1bOR', F4: '\x1bOS',
    };
    if (ev.key in named && !ev.ctrlKey && !ev.metaKey) return named[ev.key];
    if (ev.key.length !== 1 || ev.metaKey) return null;
    if (ev.ctrlKey && !ev.altKey) {
      const c = ev.key.toUpperCase().charCodeAt(0);
      if (c >= 0x40 && c <= 0x5f) return String.fromCharCode(c & 0x1f);
      if (ev.key === ' ' || ev.key === '2') return '\x00';
      return null;
    }
    return (ev.altKey ? '\x1b' : '') + ev.key;
  }

  // fit is the rows and columns that fill the element.
  fit() {
    const probe = document.createElement('span');
    probe.textContent = 'MMMMMMMMMM';
    probe.style.visibility = 'hidden';
    this.el.appendChild(probe);
    const w = probe.getBoundingClientRect().width / 10, h = probe.getBoundingClientRect().height;
    probe.remove();
    const cs = getComputedStyle(this.el);
    const iw = this.el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 14; // a scroll bar
    const ih = this.el.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
    return { rows: Math.max(5, Math.min(200, Math.floor(ih / h))), cols: Math.max(20, Math.min(400, Math.floor(iw / w))) };
  }
}
