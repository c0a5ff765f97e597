/* report.js: the interactive parts of `posenc report`, plain JavaScript with
 * no libraries and no network: a zoomable heat map with a hover readout, a 3-D
 * surface that turns with the mouse, and a chart that compares chosen positions.
 * The tables come from the JSON block #posenc-data written by the tool. */
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('posenc-data').textContent);
  var tables = data.tables;

  /* The same colormap stops as the tool's PNGs (cli/render_png.c). */
  var STOPS = {
    rdbu: ['67001f', 'b2182b', 'd6604d', 'f4a582', 'fddbc7', 'f7f7f7', 'd1e5f0', '92c5de', '4393c3', '2166ac', '053061'],
    viridis: ['440154', '472d7b', '3b528b', '2c728e', '21908c', '27ad81', '5dc863', 'aadc32', 'fde725']
  };
  var NONFINITE = [128, 128, 128];
  function hex(h) { return [parseInt(h.slice(0, 2), 16), parseInt(h.slice(2, 4), 16), parseInt(h.slice(4, 6), 16)]; }
  var RGB = { rdbu: STOPS.rdbu.map(hex), viridis: STOPS.viridis.map(hex) };
  function color(map, t) {
    var s = RGB[map] || RGB.rdbu, n = s.length;
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    var x = t * (n - 1), i = Math.min(Math.floor(x), n - 2), f = x - i;
    return [0, 1, 2].map(function (c) { return Math.round(s[i][c] + f * (s[i + 1][c] - s[i][c])); });
  }
  function css(rgb) { return 'rgb(' + rgb[0] + ',' + rgb[1] + ',' + rgb[2] + ')'; }
  function value(t, r, c) { var v = t.v[r * t.cols + c]; return v === null ? NaN : v; }
  function fmt(v) { return Number.isFinite(v) ? Number(v.toPrecision(7)).toString() : 'NaN/inf'; }
  function el(tag, attrs, parent) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { if (k === 'text') e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(e);
    return e;
  }
  function niceStep(span, target) {
    var raw = span / target, mag = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
  }
  function ticks(lo, hi, target) {
    if (!(hi > lo)) return [lo];
    var step = niceStep(hi - lo, target), out = [];
    for (var t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9 && out.length < 50; t += step) out.push(+t.toPrecision(12));
    return out;
  }
  function setupCanvas(canvas, w, h) {
    var dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
    canvas.style.width = w + 'px'; canvas.style.height = h + 'px';
    var ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return ctx;
  }

  /* ---------------- zoomable heat map with hover readout ---------------- */
  function Heatmap(host) {
    var self = this;
    this.host = host;
    var controls = el('div', { class: 'controls' }, host);
    var pick = el('select', { 'aria-label': 'table' }, controls);
    tables.forEach(function (t, i) { el('option', { value: i, text: t.name }, pick); });
    pick.value = host.getAttribute('data-table') || 0;
    var zin = el('button', { type: 'button', text: 'zoom in' }, controls);
    var zout = el('button', { type: 'button', text: 'zoom out' }, controls);
    var reset = el('button', { type: 'button', text: 'reset' }, controls);
    el('span', { class: 'note', text: 'wheel = zoom at the cursor, drag = pan, double-click = reset' }, controls);
    this.canvas = el('canvas', { class: 'heatmap-canvas' }, host);
    this.readout = el('div', { class: 'readout', text: 'hover over a cell to read its position, channel and value' }, host);
    this.W = Math.min(900, Math.max(480, host.clientWidth - 24 || 760)); this.H = 460;
    this.left = 56; this.top = 8; this.right = 78; this.bottom = 40;
    this.ctx = setupCanvas(this.canvas, this.W, this.H);
    this.select = function (i) {
      self.t = tables[i];
      var t = self.t, off = document.createElement('canvas');
      off.width = t.cols; off.height = t.rows;
      var octx = off.getContext('2d'), img = octx.createImageData(t.cols, t.rows);
      for (var r = 0; r < t.rows; r++) for (var c = 0; c < t.cols; c++) {
        var v = value(t, r, c), rgb = Number.isFinite(v) ? color(t.cmap, (v - t.lo) / (t.hi - t.lo)) : NONFINITE, k = (r * t.cols + c) * 4;
        img.data[k] = rgb[0]; img.data[k + 1] = rgb[1]; img.data[k + 2] = rgb[2]; img.data[k + 3] = 255;
      }
      octx.putImageData(img, 0, 0);
      self.off = off;
      self.view = { x0: 0, y0: 0, zoom: 1 };
      self.hot = null;
      self.draw();
    };
    pick.addEventListener('change', function () { self.select(+pick.value); });
    zin.addEventListener('click', function () { self.zoomAt(self.left + self.pw() / 2, self.top + self.ph() / 2, 2); });
    zout.addEventListener('click', function () { self.zoomAt(self.left + self.pw() / 2, self.top + self.ph() / 2, 0.5); });
    reset.addEventListener('click', function () { self.view = { x0: 0, y0: 0, zoom: 1 }; self.draw(); });
    var c = this.canvas, drag = null;
    c.addEventListener('wheel', function (e) {
      e.preventDefault();
      var p = self.local(e);
      self.zoomAt(p.x, p.y, e.deltaY < 0 ? 1.25 : 0.8);
    }, { passive: false });
    c.addEventListener('mousedown', function (e) { drag = { p: self.local(e), x0: self.view.x0, y0: self.view.y0 }; });
    window.addEventListener('mouseup', function () { drag = null; });
    c.addEventListener('mousemove', function (e) {
      var p = self.local(e);
      if (drag) {
        self.view.x0 = drag.x0 - (p.x - drag.p.x) / self.sx();
        self.view.y0 = drag.y0 - (p.y - drag.p.y) / self.sy();
        self.clamp(); self.draw();
      }
      self.hover(p);
    });
    c.addEventListener('dblclick', function () { self.view = { x0: 0, y0: 0, zoom: 1 }; self.draw(); });
    this.select(+pick.value);
  }
  Heatmap.prototype.pw = function () { return this.W - this.left - this.right; };
  Heatmap.prototype.ph = function () { return this.H - this.top - this.bottom; };
  Heatmap.prototype.sx = function () { return this.pw() / this.t.cols * this.view.zoom; };
  Heatmap.prototype.sy = function () { return this.ph() / this.t.rows * this.view.zoom; };
  Heatmap.prototype.local = function (e) {
    var b = this.canvas.getBoundingClientRect();
    return { x: e.clientX - b.left, y: e.clientY - b.top };
  };
  Heatmap.prototype.clamp = function () {
    var v = this.view, t = this.t;
    v.zoom = Math.min(Math.max(v.zoom, 1), 64);
    v.x0 = Math.min(Math.max(v.x0, 0), t.cols - t.cols / v.zoom);
    v.y0 = Math.min(Math.max(v.y0, 0), t.rows - t.rows / v.zoom);
  };
  Heatmap.prototype.zoomAt = function (px, py, factor) {
    var v = this.view, cx = v.x0 + (px - this.left) / this.sx(), cy = v.y0 + (py - this.top) / this.sy();
    v.zoom *= factor;
    this.clamp();
    v.x0 = cx - (px - this.left) / this.sx(); v.y0 = cy - (py - this.top) / this.sy();
    this.clamp(); this.draw();
  };
  /* Centre of table cell (row, col) in client coordinates (used by tests). */
  Heatmap.prototype.cellCenter = function (row, col) {
    var b = this.canvas.getBoundingClientRect();
    return { x: b.left + this.left + (col + 0.5 - this.view.x0) * this.sx(), y: b.top + this.top + (row + 0.5 - this.view.y0) * this.sy() };
  };
  Heatmap.prototype.hover = function (p) {
    var t = this.t, c = Math.floor(this.view.x0 + (p.x - this.left) / this.sx()), r = Math.floor(this.view.y0 + (p.y - this.top) / this.sy());
    if (p.x < this.left || p.y < this.top || p.x > this.left + this.pw() || p.y > this.top + this.ph() ||
        c < 0 || r < 0 || c >= t.cols || r >= t.rows) return;
    this.hot = { r: r, c: c };
    this.draw();
    var pos = t.first + r * t.rowBlock, ch = c * t.colBlock, text;
    if (t.rowBlock > 1 || t.colBlock > 1)
      text = 'positions ' + pos + '–' + (pos + t.rowBlock - 1) + ', channels ' + ch + '–' + (ch + t.colBlock - 1) + ', mean value ' + fmt(value(t, r, c));
    else text = 'position ' + pos + ', channel ' + ch + ', value ' + fmt(value(t, r, c));
    this.readout.textContent = text;
    this.readout.setAttribute('data-row', r); this.readout.setAttribute('data-col', c);
  };
  Heatmap.prototype.draw = function () {
    var ctx = this.ctx, t = this.t, v = this.view, L = this.left, T = this.top, pw = this.pw(), ph = this.ph();
    ctx.clearRect(0, 0, this.W, this.H);
    ctx.save();
    ctx.beginPath(); ctx.rect(L, T, pw, ph); ctx.clip();
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(this.off, L - v.x0 * this.sx(), T - v.y0 * this.sy(), t.cols * this.sx(), t.rows * this.sy());
    ctx.restore();
    if (this.hot && this.hot.r < t.rows && this.hot.c < t.cols) { /* outline the cell under the mouse */
      ctx.save(); ctx.beginPath(); ctx.rect(L, T, pw, ph); ctx.clip();
      ctx.strokeStyle = '#000'; ctx.lineWidth = 1.5;
      ctx.strokeRect(L + (this.hot.c - v.x0) * this.sx(), T + (this.hot.r - v.y0) * this.sy(), this.sx(), this.sy());
      ctx.restore();
    }
    ctx.strokeStyle = '#333'; ctx.lineWidth = 1; ctx.strokeRect(L + 0.5, T + 0.5, pw, ph);
    /* colorbar: top = hi, bottom = lo, with the two ends and the middle labelled */
    var bx = L + pw + 12;
    for (var i = 0; i < ph; i++) { ctx.fillStyle = css(color(t.cmap, 1 - i / (ph - 1))); ctx.fillRect(bx, T + i, 14, 1); }
    ctx.strokeStyle = '#333'; ctx.strokeRect(bx + 0.5, T + 0.5, 14, ph);
    ctx.fillStyle = '#222'; ctx.font = '11px sans-serif'; ctx.textAlign = 'left';
    [[t.hi, T + 4], [(t.lo + t.hi) / 2, T + ph / 2 + 4], [t.lo, T + ph]].forEach(function (e) {
      ctx.fillText(fmt(+e[0].toPrecision(4)), bx + 18, e[1]);
    });
    ctx.fillStyle = '#222'; ctx.font = '11px sans-serif';
    var x1 = v.x0 + t.cols / v.zoom, y1 = v.y0 + t.rows / v.zoom, self = this;
    ctx.textAlign = 'center';
    ticks(v.x0 * t.colBlock, x1 * t.colBlock, 8).forEach(function (ch) {
      var x = L + (ch / t.colBlock - v.x0) * self.sx();
      ctx.fillRect(x, T + ph, 1, 4); ctx.fillText(String(ch), x, T + ph + 15);
    });
    ctx.textAlign = 'right';
    ticks(v.y0 * t.rowBlock, y1 * t.rowBlock, 6).forEach(function (p) {
      var y = T + (p / t.rowBlock - v.y0) * self.sy();
      ctx.fillRect(L - 4, y, 4, 1); ctx.fillText(String(p + t.first), L - 6, y + 4);
    });
    ctx.textAlign = 'center'; ctx.font = '12px sans-serif';
    ctx.fillText('channel', L + pw / 2, this.H - 6);
    ctx.save(); ctx.translate(14, T + ph / 2); ctx.rotate(-Math.PI / 2); ctx.fillText('position', 0, 0); ctx.restore();
    this.canvas.setAttribute('data-draws', (+this.canvas.getAttribute('data-draws') || 0) + 1);
  };

  /* ---------------- 3-D surface that turns with the mouse ---------------- */
  function Surface(host) {
    var self = this;
    var controls = el('div', { class: 'controls' }, host);
    var pick = el('select', { 'aria-label': 'table' }, controls);
    tables.forEach(function (t, i) { el('option', { value: i, text: t.name }, pick); });
    pick.value = host.getAttribute('data-table') || 0;
    el('span', { class: 'note', text: 'drag to turn the surface; height and colour are the value' }, controls);
    this.canvas = el('canvas', { class: 'surface-canvas' }, host);
    this.W = 760; this.H = 480;
    this.ctx = setupCanvas(this.canvas, this.W, this.H);
    this.yaw = -0.6; this.pitch = 0.5;
    this.select = function (i) { self.mesh = Surface.mesh(tables[i], 48); self.draw(); };
    pick.addEventListener('change', function () { self.select(+pick.value); });
    var drag = null, c = this.canvas;
    c.addEventListener('mousedown', function (e) { drag = { x: e.clientX, y: e.clientY, yaw: self.yaw, pitch: self.pitch }; e.preventDefault(); });
    window.addEventListener('mouseup', function () { drag = null; });
    window.addEventListener('mousemove', function (e) {
      if (!drag) return;
      self.yaw = drag.yaw + (e.clientX - drag.x) * 0.01;
      self.pitch = Math.min(1.45, Math.max(0.05, drag.pitch + (e.clientY - drag.y) * 0.01));
      self.draw();
    });
    this.select(+pick.value);
  }
  /* Average the table down to at most n x n cells: a denser mesh is a blur of edges. */
  Surface.mesh = function (t, n) {
    var rb = Math.ceil(t.rows / n), cb = Math.ceil(t.cols / n), R = Math.ceil(t.rows / rb), C = Math.ceil(t.cols / cb), z = [];
    var lo = Infinity, hi = -Infinity;
    for (var r = 0; r < R; r++) for (var c = 0; c < C; c++) {
      var s = 0, k = 0;
      for (var i = r * rb; i < Math.min(t.rows, (r + 1) * rb); i++) for (var j = c * cb; j < Math.min(t.cols, (c + 1) * cb); j++) { s += value(t, i, j); k++; }
      var m = s / k; z.push(m);
      if (Number.isFinite(m)) { lo = Math.min(lo, m); hi = Math.max(hi, m); }
    }
    if (!(hi > lo)) { hi = lo + 1; }
    return { t: t, R: R, C: C, z: z, lo: lo, hi: hi };
  };
  Surface.prototype.draw = function () {
    var m = this.mesh, ctx = this.ctx, W = this.W, H = this.H, R = m.R, C = m.C;
    var cy = Math.cos(this.yaw), sy = Math.sin(this.yaw), cp = Math.cos(this.pitch), sp = Math.sin(this.pitch), scale = 185;
    var P = new Array(R * C);
    function project(x, y, z) {
      var xr = x * cy - y * sy, yr = x * sy + y * cy;
      return [W / 2 + scale * xr, H / 2 + 10 - scale * (yr * sp + z * cp), yr * cp - z * sp];
    }
    for (var r = 0; r < R; r++) for (var c = 0; c < C; c++) {
      var v = m.z[r * C + c], z = Number.isFinite(v) ? ((v - m.lo) / (m.hi - m.lo) - 0.5) * 0.8 : 0;
      P[r * C + c] = project(c / Math.max(C - 1, 1) * 2 - 1, r / Math.max(R - 1, 1) * 2 - 1, z);
    }
    var quads = [];
    for (r = 0; r + 1 < R; r++) for (c = 0; c + 1 < C; c++) {
      var k = r * C + c;
      quads.push([P[k][2] + P[k + 1][2] + P[k + C][2] + P[k + C + 1][2], k]);
    }
    quads.sort(function (a, b) { return b[0] - a[0]; });
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, H);
    ctx.lineWidth = 0.5; ctx.strokeStyle = 'rgba(30,30,30,0.25)';
    quads.forEach(function (q) {
      var k = q[1], ids = [k, k + 1, k + C + 1, k + C], mean = 0;
      ids.forEach(function (i) { mean += m.z[i] / 4; });
      ctx.fillStyle = css(Number.isFinite(mean) ? color(m.t.cmap, (mean - m.lo) / (m.hi - m.lo)) : NONFINITE);
      ctx.beginPath(); ctx.moveTo(P[ids[0]][0], P[ids[0]][1]);
      for (var e = 1; e < 4; e++) ctx.lineTo(P[ids[e]][0], P[ids[e]][1]);
      ctx.closePath(); ctx.fill(); ctx.stroke();
    });
    /* axis names at the edges of the base */
    ctx.fillStyle = '#222'; ctx.font = '13px sans-serif'; ctx.textAlign = 'center';
    var a = project(0, -1.15, -0.45), b = project(-1.15, 0, -0.45);
    ctx.fillText('channel →', a[0], a[1]); ctx.fillText('position →', b[0], b[1]);
    ctx.textAlign = 'left';
    ctx.fillText(m.t.name + ': value ' + fmt(m.lo) + ' (low) to ' + fmt(m.hi) + ' (high)', 12, H - 12);
    this.canvas.setAttribute('data-draws', (+this.canvas.getAttribute('data-draws') || 0) + 1);
  };

  /* ---------------- compare chosen positions across channels ---------------- */
  var SVGNS = 'http://www.w3.org/2000/svg', PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
  function svgEl(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    Object.keys(attrs).forEach(function (k) { if (k === 'text') e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]); });
    parent.appendChild(e);
    return e;
  }
  function Compare(host) {
    var self = this;
    var controls = el('div', { class: 'controls' }, host);
    var pick = el('select', { 'aria-label': 'table' }, controls);
    tables.forEach(function (t, i) { el('option', { value: i, text: t.name }, pick); });
    el('label', { text: 'positions:' }, controls);
    var input = el('input', { type: 'text', value: host.getAttribute('data-positions') || '0, 10', size: 18, 'aria-label': 'positions' }, controls);
    var quick = el('span', {}, controls);
    [1, 5, 20, 60, 100].forEach(function (p) {
      var b = el('button', { type: 'button', text: '+' + p }, quick);
      b.addEventListener('click', function () { input.value = input.value + (input.value.trim() ? ', ' : '') + p; self.draw(); });
    });
    var clear = el('button', { type: 'button', text: 'clear' }, controls);
    this.message = el('div', { class: 'note' }, host);
    this.svg = svgEl('svg', { class: 'compare-chart', width: 820, height: 380, viewBox: '0 0 820 380' }, host);
    this.pick = pick; this.input = input;
    pick.addEventListener('change', function () { self.draw(); });
    input.addEventListener('input', function () { self.draw(); });
    clear.addEventListener('click', function () { input.value = ''; self.draw(); });
    this.draw();
  }
  Compare.prototype.draw = function () {
    var t = tables[+this.pick.value], svg = this.svg, bad = [];
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var rows = [];
    this.input.value.split(/[\s,]+/).filter(Boolean).forEach(function (s) {
      var p = Number(s), r = Math.floor((p - t.first) / t.rowBlock);
      if (!Number.isInteger(p) || r < 0 || r >= t.rows) bad.push(s); else if (rows.indexOf(r) < 0 && rows.length < 8) rows.push(r);
    });
    this.message.textContent = (bad.length ? 'not in this table (positions ' + t.first + '–' + (t.first + t.rows * t.rowBlock - 1) + '): ' + bad.join(', ') + '. ' : '') +
      (t.colBlock > 1 || t.rowBlock > 1 ? 'This table is shown as block averages.' : '');
    var L = 60, R = 640, T = 14, B = 340, lo = Infinity, hi = -Infinity;
    rows.forEach(function (r) { for (var c = 0; c < t.cols; c++) { var v = value(t, r, c); if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } } });
    if (!rows.length || !(hi >= lo)) { lo = -1; hi = 1; }
    if (hi === lo) { lo -= 0.5; hi += 0.5; }
    var pad = (hi - lo) * 0.05; lo -= pad; hi += pad;
    var X = function (c) { return L + c / Math.max(t.cols - 1, 1) * (R - L); }, Y = function (v) { return B - (v - lo) / (hi - lo) * (B - T); };
    svgEl('rect', { x: L, y: T, width: R - L, height: B - T, fill: 'none', stroke: '#333' }, svg);
    ticks(0, (t.cols - 1) * t.colBlock, 8).forEach(function (ch) {
      var x = X(ch / t.colBlock);
      svgEl('line', { x1: x, y1: B, x2: x, y2: B + 4, stroke: '#333' }, svg);
      svgEl('text', { x: x, y: B + 16, 'text-anchor': 'middle', 'font-size': 11, text: ch }, svg);
    });
    ticks(lo, hi, 6).forEach(function (v) {
      var y = Y(v);
      svgEl('line', { x1: L, y1: y, x2: R, y2: y, stroke: '#eee' }, svg);
      svgEl('text', { x: L - 6, y: y + 4, 'text-anchor': 'end', 'font-size': 11, text: +v.toPrecision(6) }, svg);
    });
    svgEl('text', { x: (L + R) / 2, y: B + 34, 'text-anchor': 'middle', 'font-size': 13, text: 'channel' }, svg);
    svgEl('text', { x: 14, y: (T + B) / 2, 'text-anchor': 'middle', 'font-size': 13, transform: 'rotate(-90 14 ' + (T + B) / 2 + ')', text: 'value' }, svg);
    rows.forEach(function (r, i) {
      var d = '', pen = false;
      for (var c = 0; c < t.cols; c++) {
        var v = value(t, r, c);
        if (!Number.isFinite(v)) { pen = false; continue; }
        d += (pen ? 'L' : 'M') + X(c).toFixed(1) + ' ' + Y(v).toFixed(1) + ' '; pen = true;
      }
      var colr = PALETTE[i % PALETTE.length];
      svgEl('path', { d: d, fill: 'none', stroke: colr, 'stroke-width': 1.8, class: 'series', 'data-position': t.first + r * t.rowBlock }, svg);
      svgEl('line', { x1: R + 16, y1: T + 12 + i * 20, x2: R + 40, y2: T + 12 + i * 20, stroke: colr, 'stroke-width': 3 }, svg);
      svgEl('text', { x: R + 46, y: T + 16 + i * 20, 'font-size': 12, text: 'position ' + (t.first + r * t.rowBlock) }, svg);
    });
  };

  var api = { heatmaps: [], surfaces: [], compares: [] };
  document.querySelectorAll('.heatmap-tool').forEach(function (h) { api.heatmaps.push(new Heatmap(h)); });
  document.querySelectorAll('.surface-tool').forEach(function (h) { api.surfaces.push(new Surface(h)); });
  document.querySelectorAll('.compare-tool').forEach(function (h) { api.compares.push(new Compare(h)); });
  window.posencReport = api;
})();
