/* Every explorer's picture, drawn from its view: one renderer for JupyterLab and the website.
 *
 * A picture is first a small tree of elements ({tag, attrs, children}, made by `h`), from the view
 * an explorer computed. `picture(name, view, {width})` writes that tree as HTML text (SVG charts):
 * the book's build draws each explorer's starting picture that way, for readers without
 * JavaScript. `draw(element, name, view, {width})` lays the tree over the picture already in the
 * element, changing only the attributes and words that differ: a move of a slider re-lays out a
 * few bars and numbers, not a whole new figure (that replacement cost more than the model's
 * forward pass). In a kernel the library computes the view and this module is the anywidget that
 * draws it (the default export below); on the website the page computes it with the model running
 * in the page and draws it with the same function.
 *
 * Every chart is an <svg role="img"> whose aria-label (and <title>) says in words the numbers it
 * shows: what a screen reader announces, and what the tests read. The words are also under the
 * picture, folded ("The numbers in words"). Colours of text and lines follow the page's theme
 * through CSS variables (explorers.css), so a chart reads in dark mode too.
 *
 * This module is the drawing kit and the generic charts (bars, heatmaps, planes); each explorer's own
 * picture lives in its chapter's unit (lib/chapters/PART/UNIT/pictures.js: a `pictures(kit)` that
 * returns the pictures by view name), gathered when the site is built (unit-pictures.js, written by
 * lib/explorers/web.py) and drawn with this kit.
 *
 * Its imports are the two modules the build generates: the constants from the library (colours, the
 * heatmaps' ramp: lib/pictures/colours.py) and the units' pictures; a kernel's widget gets both
 * written in front of this file and loads it as one module (lib.explorers.web.kernel_renderer).
 */
import { BLUE_HIGH, BLUE_INKS, BLUE_LOW, BLUE_SHADES, MASKED, PALETTE } from "./constants.js";
import { UNIT_PICTURES } from "./unit-pictures.js";

const INK = "var(--course-ink, #222)";
const SOFT = "var(--course-soft-ink, #555)";
const LINE = "var(--course-line, #444)";
const GRID = "var(--course-grid, #bbb)";
const FONT = "DejaVu Sans, Verdana, sans-serif";

// ----------------------------------------------------------------------------- text and numbers

export function esc(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
}

// ----------------------------------------------------------------------------- the element tree

const SVG_NS = "http://www.w3.org/2000/svg";

/** One element: its tag, its attributes (null, undefined and false leave one out; the rest become
 *  text), and its children, elements or words (nested lists are flattened, empty words dropped). */
export function h(tag, attrs = {}, ...children) {
  const a = {};
  for (const k in attrs) {
    const v = attrs[k];
    if (v !== null && v !== undefined && v !== false) a[k] = v === true ? "" : String(v);
  }
  const kids = [];
  const add = (c) => {
    if (Array.isArray(c)) c.forEach(add);
    else if (c !== null && c !== undefined && c !== false && c !== "") kids.push(typeof c === "object" ? c : String(c));
  };
  add(children);
  return { tag, attrs: a, children: kids };
}

/** Elements as HTML text (an SVG element without children closes itself). */
export function toHTML(nodes, inSvg = false) {
  let out = "";
  for (const n of [].concat(nodes)) {
    if (typeof n === "string") { out += esc(n); continue; }
    const svg = inSvg || n.tag === "svg";
    out += `<${n.tag}`;
    for (const k in n.attrs) out += ` ${k}="${esc(n.attrs[k])}"`;
    out += n.children.length || !svg ? `>${toHTML(n.children, svg)}</${n.tag}>` : "/>";
  }
  return out;
}

function create(v, inSvg) {
  if (typeof v === "string") return document.createTextNode(v);
  const svg = inSvg || v.tag === "svg";
  const node = svg ? document.createElementNS(SVG_NS, v.tag) : document.createElement(v.tag);
  for (const k in v.attrs) node.setAttribute(k, v.attrs[k]);
  node._courseAttrs = v.attrs;
  for (const c of v.children) node.append(create(c, svg));
  return node;
}

/** Lays `v` over the element `node` of the same tag: only what differs is written. The attributes
 *  this renderer wrote last time are remembered on the node; an element from the page's HTML (the
 *  starting picture) is compared attribute by attribute, once. A reader's own state (a folded
 *  description opened) is left alone. */
function patchElement(node, v, svg) {
  const before = node._courseAttrs, after = v.attrs;
  for (const k in after) {
    if (before ? before[k] !== after[k] : node.getAttribute(k) !== after[k]) node.setAttribute(k, after[k]);
  }
  if (before) {
    for (const k in before) if (!(k in after)) node.removeAttribute(k);
  } else {
    for (const { name } of [...node.attributes]) if (!(name in after) && name !== "open") node.removeAttribute(name);
  }
  node._courseAttrs = after;
  patchChildren(node, v.children, svg);
}

function patchChildren(parent, kids, svg) {
  let node = parent.firstChild;
  for (const v of kids) {
    const next = node ? node.nextSibling : null;
    if (typeof v === "string") {
      if (node && node.nodeType === 3) { if (node.data !== v) node.data = v; }
      else if (node) parent.replaceChild(create(v), node);
      else parent.append(create(v));
    } else {
      const inSvg = svg || v.tag === "svg";
      if (node && node.nodeType === 1 && node.localName === v.tag && (node.namespaceURI === SVG_NS) === inSvg) {
        patchElement(node, v, inSvg);
      } else if (node) parent.replaceChild(create(v, svg), node);
      else parent.append(create(v, svg));
    }
    node = next;
  }
  while (node) { const next = node.nextSibling; node.remove(); node = next; }
}

/** x with `d` decimals. */
const fix = (x, d = 3) => Number(x).toFixed(d);
/** A share as a whole percentage. */
const pct = (x) => `${Math.round(100 * x)}%`;
/** Signed, with `d` decimals (+0.12, -0.40). */
const signed = (x, d = 2) => (x >= 0 ? "+" : "") + Number(x).toFixed(d);
/** A temperature as its slider shows it: three significant digits (0.100, 1.00, 10.0); a typed one
 *  beyond the slider's range as whole digits up to a million (1000), else with an exponent (1.00e-6). */
const shownT = (t) => {
  const x = Number(t);
  if (x >= 1e-3 && x < 1000) return x.toPrecision(3);
  return x >= 1000 && x < 1e6 ? x.toFixed(0) : x.toExponential(2);
};
/** A prompt as the words it was read as. */
const words = (tokens) => tokens.join(" ");
/** An integer written as digits (a BigInt-safe string) with thousands separators. */
const commas = (digits) => {
  const s = String(digits);
  const neg = s.startsWith("-");
  return (neg ? "-" : "") + (neg ? s.slice(1) : s).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
};
/** The best `n` (token, probability) pairs as text. */
const top = (pairs, n = 5, d = 3) => pairs.slice(0, n).map(([t, p]) => `${t} ${fix(p, d)}`).join(", ");

const f1 = (v) => v.toFixed(1);
/** The width a picture has on the page (the build draws for 640 px). */
const room = (o) => o.width || 640;

/** The smallest text a picture draws, in px at its own size (issue 39: 11 px as shown, at 1280 and 390 px). */
const MIN_TEXT = 11;

function text(x, y, s, o = {}) {
  return h("text", { x: f1(x), y: f1(y), "text-anchor": o.anchor, "font-size": o.size && Math.max(o.size, MIN_TEXT), "font-weight": o.bold && "bold",
    style: o.fill && `fill:${o.fill}`, transform: o.rotate !== undefined && `rotate(${o.rotate} ${f1(x)} ${f1(y)})` }, s);
}

/** A chart: an image described by `alt`, or (o.role "group") a described group whose parts are buttons. */
function svg(width, height, alt, body, o = {}) {
  const w = Math.round(width), ht = Math.round(height);
  return h("svg", { xmlns: SVG_NS, class: "course-chart", role: o.role || "img", "aria-label": alt, width: w, height: ht,
    viewBox: `0 0 ${w} ${ht}`, "font-family": FONT, "font-size": 12, "dominant-baseline": "middle", style: `fill:${INK}` },
  h("title", {}, alt), body);
}

function line(x1, y1, x2, y2, stroke = LINE) {
  return h("line", { x1: f1(x1), y1: f1(y1), x2: f1(x2), y2: f1(y2), style: `stroke:${stroke}` });
}

function rect(x, y, width, height, fill, extra = {}) {
  return h("rect", { x, y, width, height, fill, ...extra });
}

/** A picture and, folded under it, its numbers in words. */
function figure(body, words, extra = null) {
  return [extra, body, h("details", { class: "course-words" }, h("summary", {}, "The numbers in words"), h("p", {}, words))];
}

function row(cells, basis = 320) {
  return h("div", { class: "course-row" }, cells.map((c) => h("div", { class: "course-cell", style: `flex:1 1 ${basis}px` }, c)));
}

// ----------------------------------------------------------------------------- charts

/** A title cut into lines that fit `width` px (about 0.6 em a character), at spaces: a long prompt
 *  wraps instead of running off the picture. */
function titleLines(title, width, size = 13) {
  const most = Math.max(12, Math.floor(width / (0.6 * size)));
  const lines = [];
  let line = "";
  for (const word of String(title).split(" ")) {
    if (line && (line + " " + word).length > most) { lines.push(line); line = word; } else line = line ? `${line} ${word}` : word;
  }
  if (line || !lines.length) lines.push(line);
  return lines;
}

/** Horizontal bars, first row on top: a results page. `ghost` draws pale bars behind (the page
 *  before truncation), `labels` replace the printed numbers, `legend` is [[colour, label], ...]. */
function barChart(rows, alt, o = {}) {
  const width = Math.max(320, Math.min(o.width || 600, 640));
  const titled = o.title ? titleLines(o.title, width - 8) : [];
  const labelW = 100, plotW = width - labelW - 60, rowH = 22, top0 = o.title ? 14 + 16 * titled.length : 10;
  const legendRows = o.legend ? legendLayout(o.legend, labelW, width).rows : 0;
  const height = top0 + rowH * rows.length + 44 + 18 * legendRows;
  const x = (v) => labelW + plotW * Math.min(Math.max(v, 0), 1);
  const body = [];
  titled.forEach((t, i) => body.push(text(4, 14 + 16 * i, t, { size: 13 })));
  rows.forEach(([token, value], i) => {
    const y = top0 + i * rowH;
    if (o.ghost) body.push(rect(labelW, y + 2, f1(x(o.ghost[i]) - labelW), rowH - 4, PALETTE.muted, { "fill-opacity": "0.35" }));
    const colour = token === o.highlight ? PALETTE.accent : PALETTE.main;
    body.push(rect(labelW, y + 5, f1(x(value) - labelW), rowH - 10, colour));
    body.push(text(labelW - 6, y + rowH / 2, token, { anchor: "end", bold: token === o.highlight }));
    const end = Math.max(x(value), o.ghost ? x(o.ghost[i]) : 0);
    body.push(text(end + 4, y + rowH / 2, o.labels ? o.labels[i] : fix(value), { size: 11 }));
  });
  const axisY = top0 + rowH * rows.length + 2;
  body.push(line(labelW, axisY, labelW + plotW, axisY));
  for (let k = 0; k <= 5; k++) {
    body.push(line(x(k / 5), axisY, x(k / 5), axisY + 4));
    body.push(text(x(k / 5), axisY + 14, String(k / 5), { anchor: "middle", size: 11 }));
  }
  body.push(text(labelW + plotW / 2, axisY + 32, "probability", { anchor: "middle" }));
  if (o.legend) {
    for (const [colour, label, lx, row] of legendLayout(o.legend, labelW, width).items) {
      body.push(rect(lx, axisY + 43 + 18 * row, 12, 10, colour));
      body.push(text(lx + 16, axisY + 48 + 18 * row, label, { size: 11 }));
    }
  }
  return svg(width, height, alt, body);
}

/** A legend's entries placed in lines, a new line when the next entry would pass `width`. */
function legendLayout(legend, left, width) {
  // From the plot's left edge when the whole legend fits there, else from the picture's.
  const total = legend.reduce((t, [, label]) => t + 30 + 6.5 * label.length, 0);
  if (left + total > width) left = 4;
  let lx = left, row = 0;
  const items = [];
  for (const [colour, label] of legend) {
    const w = 30 + 6.5 * label.length;
    if (lx > left && lx + w > width) { lx = 4; row++; }
    items.push([colour, label, lx, row]);
    lx += w;
  }
  return { items, rows: row + 1 };
}

/** A light-to-dark blue ramp (close to matplotlib's "Blues") in 51 shades, each [r, g, b]. */
const BLUES = Array.from({ length: BLUE_SHADES }, (_, k) =>
  BLUE_LOW.map((a, i) => Math.round(a + (BLUE_HIGH[i] - a) * (k / (BLUE_SHADES - 1)))));
const shade = (p) => Math.round(Math.min(Math.max(p, 0), 1) * (BLUE_SHADES - 1));

function blue(p) {
  return "#" + BLUES[shade(p)].map((c) => c.toString(16).padStart(2, "0")).join("");
}

/** The ink that reads on blue(p): white or black by contrast (lib.pictures.colours.ink_on). */
const inkOn = (p) => BLUE_INKS[shade(p)];


/** A matrix as a bitmap, one pixel a cell (the causal mask's cells grey), as a data: address:
 *  a heatmap of 48 x 48 cells is one small image instead of thousands of shapes to draw. */
function heatImage(matrix, masked) {
  const n = matrix.length, m = n ? matrix[0].length : 0, stride = Math.ceil((m * 3) / 4) * 4;
  const bytes = new Uint8Array(54 + stride * n), view = new DataView(bytes.buffer);
  bytes.set([0x42, 0x4d]);                              // "BM", then the sizes of a 24-bit bitmap
  view.setUint32(2, bytes.length, true); view.setUint32(10, 54, true); view.setUint32(14, 40, true);
  view.setInt32(18, m, true); view.setInt32(22, n, true); view.setUint16(26, 1, true); view.setUint16(28, 24, true);
  view.setUint32(34, stride * n, true);
  for (let i = 0; i < n; i++) {
    let at = 54 + (n - 1 - i) * stride;                  // bottom row first, each pixel blue-green-red
    const row = matrix[i];
    for (let j = 0; j < m; j++, at += 3) {
      const [r, g, b] = masked && j > i ? MASKED : BLUES[shade(row[j])];
      bytes[at] = b; bytes[at + 1] = g; bytes[at + 2] = r;
    }
  }
  let text = "";
  for (let k = 0; k < bytes.length; k += 8192) text += String.fromCharCode.apply(null, bytes.subarray(k, k + 8192));
  return `data:image/bmp;base64,${btoa(text)}`;
}

/** A heatmap's cell size for the room it has, and which of its tokens are named beside it: a heatmap is
 *  drawn at the size it is shown (not drawn large and scaled down until its words are specks), and names
 *  every row and column where a cell is tall enough for a word, else every second, third... (`every`):
 *  fewer names where cells are small, never none. */
function heatmapFit(tokens, room, largest) {
  const labelW = 8 + 7 * Math.max(1, ...tokens.map((t) => t.length));
  const cell = Math.max(2, Math.min(largest, Math.floor((room - labelW) / tokens.length)));
  // A row's name needs 14 px of height; a column's, written at 45 degrees, 19 px between neighbours.
  return { cell, labelW, named: true, every: [Math.ceil(14 / cell), Math.ceil(19 / cell)] };
}

/** Whether token `i` of `n` is named, every `k`-th (the last always, with its neighbour left out). */
function shownName(i, n, k) {
  if (k <= 1) return true;
  if (i === n - 1) return true;
  return i % k === 0 && n - 1 - i >= k;
}

/** One heatmap at (x0, y0): rows are queries, columns keys; the causal mask's cells grey (none with
 *  `o.masked` false: an encoder's head reads every position).
 *  The tokens' names sit in two groups (rows, columns), so a longer prompt adds names at the end
 *  of each instead of shifting every later name into another's place. Returns [elements, width, height]. */
function heatmapBody(x0, y0, matrix, tokens, fit, o = {}) {
  const { cell, labelW } = fit, n = tokens.length, [everyRow, everyCol] = fit.every || [1, 1];
  const top0 = o.title ? 18 : 0, ht = top0 + n * cell;
  const body = o.title ? [text(x0 + labelW, y0 + 10, o.title, { bold: true })] : [];
  body.push(h("image", { x: x0 + labelW, y: y0 + top0, width: n * cell, height: n * cell,
    preserveAspectRatio: "none", style: "image-rendering:pixelated", href: heatImage(matrix, o.masked !== false) }));
  body.push(h("g", {}, tokens.map((r, i) => shownName(i, n, everyRow) &&
    text(x0 + labelW - 4, y0 + top0 + i * cell + cell / 2, r, { anchor: "end", size: 11 }))));
  // The numbers themselves where a cell is big enough to hold them.
  if (o.values && n <= 16 && cell >= 32) {
    body.push(h("g", {}, tokens.map((_, i) => tokens.slice(0, i + 1).map((__, j) =>
      text(x0 + labelW + j * cell + cell / 2, y0 + top0 + i * cell + cell / 2, fix(matrix[i][j], 2),
        { anchor: "middle", size: 11, fill: inkOn(matrix[i][j]) })))));
  }
  if (o.mark !== undefined) {
    body.push(rect(x0 + labelW, y0 + top0 + o.mark * cell, n * cell, cell, "none", { style: `stroke:${PALETTE.accent};stroke-width:2` }));
  }
  // The columns' names hang from the grid's bottom edge, far enough below it that the first one clears the
  // last row's name beside it when cells are tiny (a 45-degree word 13 px thick, from a 4 px cell).
  const drop = Math.max(6, 12 - cell);
  body.push(h("g", { transform: `translate(0,${ht})` }, tokens.map((c, j) => shownName(j, n, everyCol) &&
    text(x0 + labelW + j * cell + cell / 2, y0 + drop, c, { anchor: "end", size: 11, rotate: -45 }))));
  const colH = drop + 2 + 5.5 * Math.max(1, ...tokens.map((c) => c.length));
  return [body, labelW + n * cell, ht + colH];
}

/** A text's box as drawn, estimated from its length: DejaVu Sans's widest common letters are 0.7 em, its
 *  average under 0.62 em; a box `size` x 1.25 tall (dominant-baseline middle puts the text's middle at y). */
function textBox(x, y, s, size, anchor) {
  const w = 0.64 * size * String(s).length + 2, ht = 1.25 * size;
  const x0 = anchor === "end" ? x - w : anchor === "middle" ? x - w / 2 : x;
  return [x0, y - ht / 2, x0 + w, y + ht / 2];
}

const clash = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];

/** Labels for points, each put in the first free spot around its point (right and up, right and down,
 *  left..., above, below) that clears the labels placed before it, the boxes in `taken` ([x0, y0, x1, y1]:
 *  a title, the axis labels, the points' dots) and the picture's edges [0, 0, width, height]; a label with no
 *  free spot is left out (its point keeps its name in its <title> and the picture's words). Points closer
 *  than `near` px share one label, their names joined ("embedding = attention 0"): one point drawn over
 *  another. `items`: [[x, y, name], ...] in picture pixels. Returns the text elements. */
function placeLabels(items, taken, width, height, o = {}) {
  const size = Math.max(o.size || MIN_TEXT, MIN_TEXT), gap = o.gap || 6, near = o.near || 6;
  const groups = [];
  for (const [x, y, name] of items) {
    const g = groups.find((q) => Math.hypot(q.x - x, q.y - y) < near);
    if (g) { if (!g.names.includes(name)) g.names.push(name); } else groups.push({ x, y, names: [name] });
  }
  const spots = (x, y) => [[x + gap, y - gap - 2, "start"], [x + gap, y + gap + 2, "start"], [x - gap, y - gap - 2, "end"],
    [x - gap, y + gap + 2, "end"], [x, y - size - 2, "middle"], [x, y + size + 2, "middle"], [x + gap + 2, y, "start"], [x - gap - 2, y, "end"]];
  const placed = [...taken], out = [];
  for (const { x, y, names } of groups) {
    const s = names.join(" = ");
    for (const [lx, ly, anchor] of spots(x, y)) {
      const b = textBox(lx, ly, s, size, anchor);
      if (b[0] < 0 || b[1] < 0 || b[2] > width || b[3] > height || placed.some((t) => clash(t, b))) continue;
      placed.push(b);
      out.push(text(lx, ly, s, { anchor, size, fill: o.fill }));
      break;
    }
  }
  return out;
}

/** A scale from data (x, y) to the chart, 8% margins, optionally keeping the origin in view. Both axes
 *  get the same scale (a unit is as long across as up): a projection drawn with unequal scales would
 *  stretch distances and angles; the tighter axis is centred in its room. */
function planeScale(points, left, top0, pw, ph, withOrigin = false) {
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  let lo = [Math.min(...xs), Math.min(...ys)], hi = [Math.max(...xs), Math.max(...ys)];
  if (withOrigin) { lo = lo.map((v) => Math.min(v, 0)); hi = hi.map((v) => Math.max(v, 0)); }
  const pad = lo.map((v, i) => Math.max((hi[i] - v) * 0.08, 1e-9));
  lo = lo.map((v, i) => v - pad[i]); hi = hi.map((v, i) => v + pad[i]);
  const perPx = Math.max((hi[0] - lo[0]) / pw, (hi[1] - lo[1]) / ph);
  [pw, ph].forEach((room, i) => {
    const mid = (lo[i] + hi[i]) / 2;
    lo[i] = mid - (perPx * room) / 2; hi[i] = mid + (perPx * room) / 2;
  });
  return { sx: (v) => left + (pw * (v - lo[0])) / (hi[0] - lo[0]), sy: (v) => top0 + (ph * (hi[1] - v)) / (hi[1] - lo[1]), lo, hi };
}

/** Heatmaps side by side, each drawn for its share of the room: [[title, matrix, alt, faded], ...]. */
function heatmapRow(maps, tokens, o, largest = 22) {
  const perLine = Math.max(1, Math.min(maps.length, Math.floor((room(o) + 8) / 128)));
  const fit = heatmapFit(tokens, (room(o) - 8 * (perLine - 1)) / perLine - 8, largest);
  return row(maps.map(([title, matrix, alt]) => {
    const [body, w, ht] = heatmapBody(0, 0, matrix, tokens, fit, { title });
    return svg(Math.max(w, 80) + 8, ht + 8, alt, [h("g", { transform: "translate(4,4)" }, body)]);
  }), 120);
}

// ----------------------------------------------------------------------------- the pictures, by view

/** What a chapter's pictures draw with: the elements, the numbers' spelling, the generic charts. */
const KIT = { h, svg, text, rect, line, f1, fix, pct, signed, shownT, words, commas, top, room, figure, row, titleLines,
  barChart, blue, inkOn, heatmapBody, heatmapFit, heatmapRow, planeScale, placeLabels, textBox, shownName, INK, SOFT, LINE, GRID };

/** Every view's picture maker, by view name: each chapter's (its pictures(kit)), one maker a name. */
const PICTURES = {};
for (const pictures of UNIT_PICTURES) {
  for (const [name, make] of Object.entries(pictures(KIT))) {
    if (name in PICTURES) throw new Error(`two chapters draw a picture named ${name}`);
    PICTURES[name] = make;
  }
}

/** The elements of a view's picture. `options.width`: the room it has, in pixels. */
function elements(name, view, options) {
  const make = PICTURES[name];
  if (!make) throw new Error(`no picture named ${name}`);
  return [make(view, options)].flat(Infinity).filter(Boolean);
}

/** The picture of a view, as HTML text (the book's build draws the starting pictures with it). */
export function picture(name, view, options = {}) {
  return toHTML(elements(name, view, options));
}

/** The picture of a view drawn into `el`, over the picture already there: only what changed is written. */
export function draw(el, name, view, options = {}) {
  patchChildren(el, elements(name, view, options), false);
  if (!el.courseGridKeys) {                 // once per figure, on the page and in a kernel alike
    el.addEventListener("keydown", moveInGrid);
    el.courseGridKeys = true;
  }
}

// The keys that move through a picture's grid (role="grid", cells role="gridcell" with data-row and data-col, one
// of them tabindex 0): the arrows to the nearest cell that way, Home and End to the row's ends, Ctrl+Home and
// Ctrl+End to the grid's. The focus moves with the one tabindex 0 (a roving tabindex), so Tab leaves the grid in
// one step; Enter or Space presses the focused cell (its data-choose, handled by page.js and the kernel's widget).
const GRID_MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

export function moveInGrid(event) {
  const cell = event.target.closest && event.target.closest('[role="gridcell"]');
  const grid = cell && cell.closest('[role="grid"]');
  if (!grid) return;
  const at = (x) => [+x.getAttribute("data-row"), +x.getAttribute("data-col")];
  const cells = [...grid.querySelectorAll('[role="gridcell"]')].map((x) => [x, ...at(x)]);
  const [r, c] = at(cell);
  let pool;
  if (event.key in GRID_MOVES) {
    const [dr, dc] = GRID_MOVES[event.key];
    pool = cells.filter(([, i, p]) => (dr ? p === c && Math.sign(i - r) === dr : i === r && Math.sign(p - c) === dc))
      .sort((x, y) => Math.abs(x[1] - r) + Math.abs(x[2] - c) - Math.abs(y[1] - r) - Math.abs(y[2] - c));
  } else if (event.key === "Home" || event.key === "End") {
    pool = cells.filter(([, i]) => event.ctrlKey || i === r);
    if (event.key === "End") pool.reverse();
  } else return;
  event.preventDefault();                  // the arrows move the focus, not the page
  if (!pool.length || pool[0][0] === cell) return;
  for (const [x] of cells) x.setAttribute("tabindex", x === pool[0][0] ? "0" : "-1");
  pool[0][0].focus();
}

export const VIEWS = Object.keys(PICTURES);

/** The anywidget: a kernel sets `view` and `data`, this draws. */
export default {
  render({ model, el }) {
    el.classList.add("course-figure");
    const redraw = () => {
      const data = model.get("data");
      if (data && Object.keys(data).length) draw(el, model.get("view"), data, { width: el.clientWidth || 640 });
    };
    model.on("change:data", redraw);
    model.on("change:view", redraw);
    // A part marked data-choose="control=value" (the machine's map) asks the kernel to set that menu,
    // as page.js sets it on the website (lib.explorers.kernel.choose).
    const choose = (event) => {
      const target = event.target.closest && event.target.closest("[data-choose]");
      if (!target || (event.type === "keydown" && event.key !== "Enter" && event.key !== " ")) return;
      if (event.type === "keydown") event.preventDefault();      // Space presses the part, not scrolls the page
      model.send({ choose: target.getAttribute("data-choose") });
    };
    el.addEventListener("click", choose);
    el.addEventListener("keydown", choose);     // a part the keyboard reached (tabindex) is pressed with Enter or Space
    redraw();
  },
};
