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
 * Its only import is the constants module the build generates from the library (colours, the
 * heatmaps' ramp: lib/pictures/colours.py); a kernel's widget gets those constants written in
 * front of this file and loads it as one module (lib.explorers.web.kernel_renderer).
 */
import { BLUE_HIGH, BLUE_INKS, BLUE_LOW, BLUE_SHADES, GROUP_COLOURS, MASKED, PALETTE } from "./constants.js";
import { machinePictures } from "./machine-render.js";

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
/** Two decimals and thousands separators, as en-US writes them. The formatter is made once, on
 *  first use (making one takes a browser longer than drawing a picture). */
let TWO_PLACES = null;
const twoPlaces = (x) => (TWO_PLACES ||= new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })).format(x);
/** The best `n` (token, probability) pairs as text. */
const top = (pairs, n = 5, d = 3) => pairs.slice(0, n).map(([t, p]) => `${t} ${fix(p, d)}`).join(", ");

const f1 = (v) => v.toFixed(1);
/** The width a picture has on the page (the build draws for 640 px). */
const room = (o) => o.width || 640;

function text(x, y, s, o = {}) {
  return h("text", { x: f1(x), y: f1(y), "text-anchor": o.anchor, "font-size": o.size, "font-weight": o.bold && "bold",
    style: o.fill && `fill:${o.fill}`, transform: o.rotate !== undefined && `rotate(${o.rotate} ${f1(x)} ${f1(y)})` }, s);
}

function svg(width, height, alt, body) {
  const w = Math.round(width), ht = Math.round(height);
  return h("svg", { xmlns: SVG_NS, class: "course-chart", role: "img", "aria-label": alt, width: w, height: ht,
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

/** A heatmap's cell size for the room it has, and whether its tokens can be named beside it: a
 *  heatmap is drawn at the size it is shown (not drawn large and scaled down until its words are
 *  specks), and names its rows and columns only where a cell is tall enough for a word. */
function heatmapFit(tokens, room, largest) {
  const labelW = 8 + 7 * Math.max(1, ...tokens.map((t) => t.length));
  const named = Math.min(largest, Math.floor((room - labelW) / tokens.length));
  if (named >= 10) return { cell: named, labelW, named: true };
  return { cell: Math.max(2, Math.min(largest, Math.floor(room / tokens.length))), labelW: 0, named: false };
}

/** One heatmap at (x0, y0): rows are queries, columns keys; the causal mask's cells grey (none with
 *  `o.masked` false: an encoder's head reads every position).
 *  The tokens' names sit in two groups (rows, columns), so a longer prompt adds names at the end
 *  of each instead of shifting every later name into another's place. Returns [elements, width, height]. */
function heatmapBody(x0, y0, matrix, tokens, fit, o = {}) {
  const { cell, labelW, named } = fit, n = tokens.length;
  const top0 = o.title ? 18 : 0, ht = top0 + n * cell;
  const body = o.title ? [text(x0 + labelW, y0 + 10, o.title, { bold: true })] : [];
  body.push(h("image", { x: x0 + labelW, y: y0 + top0, width: n * cell, height: n * cell,
    preserveAspectRatio: "none", style: "image-rendering:pixelated", href: heatImage(matrix, o.masked !== false) }));
  if (!named) return [body, n * cell, ht];
  body.push(h("g", {}, tokens.map((r, i) => text(x0 + labelW - 4, y0 + top0 + i * cell + cell / 2, r, { anchor: "end", size: 11 }))));
  // The numbers themselves where a cell is big enough to hold them.
  if (o.values && n <= 16 && cell >= 28) {
    body.push(h("g", {}, tokens.map((_, i) => tokens.slice(0, i + 1).map((__, j) =>
      text(x0 + labelW + j * cell + cell / 2, y0 + top0 + i * cell + cell / 2, fix(matrix[i][j], 2),
        { anchor: "middle", size: 9, fill: inkOn(matrix[i][j]) })))));
  }
  if (o.mark !== undefined) {
    body.push(rect(x0 + labelW, y0 + top0 + o.mark * cell, n * cell, cell, "none", { style: `stroke:${PALETTE.accent};stroke-width:2` }));
  }
  body.push(h("g", { transform: `translate(0,${ht})` }, tokens.map((c, j) =>
    text(x0 + labelW + j * cell + cell / 2, y0 + 6, c, { anchor: "end", size: 10, rotate: -45 }))));
  const colH = 8 + 5 * Math.max(1, ...tokens.map((c) => c.length));
  return [body, labelW + n * cell, ht + colH];
}

function heatmap(matrix, labels, alt, title, room) {
  const [body, w, ht] = heatmapBody(4, 4, matrix, labels, heatmapFit(labels, room - 12, 34), { title, values: true });
  return svg(w + 12, ht + 12, alt, body);
}

/** A scale from data (x, y) to the chart, 8% margins, optionally keeping the origin in view. */
function planeScale(points, left, top0, pw, ph, withOrigin = false) {
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  let lo = [Math.min(...xs), Math.min(...ys)], hi = [Math.max(...xs), Math.max(...ys)];
  if (withOrigin) { lo = lo.map((v) => Math.min(v, 0)); hi = hi.map((v) => Math.max(v, 0)); }
  const pad = lo.map((v, i) => Math.max((hi[i] - v) * 0.08, 1e-9));
  lo = lo.map((v, i) => v - pad[i]); hi = hi.map((v, i) => v + pad[i]);
  return { sx: (v) => left + (pw * (v - lo[0])) / (hi[0] - lo[0]), sy: (v) => top0 + (ph * (hi[1] - v)) / (hi[1] - lo[1]), lo, hi };
}

function groupColours(groups) {
  const out = new Map();
  for (const g of groups) if (!out.has(g)) out.set(g, GROUP_COLOURS[out.size % GROUP_COLOURS.length]);
  return out;
}

/** Labelled points coloured by group; without `axes` (t-SNE) no axis means anything, so none is drawn. */
function scatter(points, labels, groups, alt, o = {}) {
  const width = o.width || 380, height = o.height || 360;
  const colours = groupColours(groups);
  const top0 = o.title ? 26 : 8, bottom = 30 + 16 * Math.ceil(colours.size / 4), left = 34, right = 14;
  const pw = width - left - right, ph = height - top0 - bottom;
  const { sx, sy, lo, hi } = planeScale(points, left, top0, pw, ph);
  const body = [];
  if (o.title) body.push(text(left, 13, o.title, { size: 13 }));
  if (o.axes) {
    if (lo[0] < 0 && 0 < hi[0]) body.push(line(sx(0), top0, sx(0), top0 + ph, GRID));
    if (lo[1] < 0 && 0 < hi[1]) body.push(line(left, sy(0), left + pw, sy(0), GRID));
    body.push(text(left + pw / 2, top0 + ph + 14, o.xlabel || "", { anchor: "middle", size: 11 }));
    body.push(text(12, top0 + ph / 2, o.ylabel || "", { anchor: "middle", size: 11, rotate: -90 }));
  } else {
    body.push(rect(left, top0, pw, ph, "none", { style: `stroke:${GRID}` }));
    body.push(text(left + pw / 2, top0 + ph + 14, "no axes: only who sits next to whom counts", { anchor: "middle", size: 11, fill: SOFT }));
  }
  points.forEach(([x, y], i) => {
    body.push(h("circle", { cx: f1(sx(x)), cy: f1(sy(y)), r: "3.5", fill: colours.get(groups[i]) },
      h("title", {}, `${labels[i]} (${groups[i]})`)));
    if (o.labelled !== false) body.push(text(sx(x) + 5, sy(y) - 5, labels[i], { size: 10 }));
  });
  [...colours].forEach(([group, c], i) => {
    const lx = left + (i % 4) * (pw / 4), ly = top0 + ph + 32 + 16 * Math.floor(i / 4);
    body.push(rect(f1(lx), ly - 5, 10, 10, c));
    body.push(text(lx + 14, ly, group, { size: 10 }));
  });
  return svg(width, height, alt, body);
}

/** Each of the first points' nearest neighbour on the page, in words. */
function nearestOnPage(points, labels, n = 8) {
  const out = [];
  for (let i = 0; i < Math.min(points.length, n); i++) {
    let best = -1, bestD = Infinity;
    points.forEach((q, j) => {
      if (j === i) return;
      const d = (q[0] - points[i][0]) ** 2 + (q[1] - points[i][1]) ** 2;
      if (d < bestD) { bestD = d; best = j; }
    });
    out.push(`${labels[i]} next to ${labels[best]}`);
  }
  return out.join("; ");
}

/** Paths through a plane, a point per stage: [[label, coords, colour], ...]; the first path's stages named. */
function pathChart(paths, stages, alt, o = {}) {
  const width = Math.max(340, Math.min(o.width || 640, 640)), height = 400;
  const all = paths.flatMap((p) => p[1]);
  const titled = o.title ? titleLines(o.title, width - 8) : [];
  const top0 = o.title ? 10 + 16 * titled.length : 8, bottom = 48, left = 40, right = 20;
  const pw = width - left - right, ph = height - top0 - bottom;
  const { sx, sy } = planeScale(all, left, top0, pw, ph, true);
  const body = titled.map((t, i) => text(4, 13 + 16 * i, t, { size: 13 }));
  body.push(line(sx(0), top0, sx(0), top0 + ph, GRID), line(left, sy(0), left + pw, sy(0), GRID));
  body.push(text(left + pw / 2, top0 + ph + 14, o.xlabel || "", { anchor: "middle", size: 11 }));
  body.push(text(12, top0 + ph / 2, o.ylabel || "", { anchor: "middle", size: 11, rotate: -90 }));
  paths.forEach(([label, coords, colour], k) => {
    const dash = k ? "5 4" : null;
    const d = coords.map(([x, y], i) => `${i ? "L" : "M"}${f1(sx(x))},${f1(sy(y))}`).join(" ");
    body.push(h("path", { d, fill: "none", stroke: colour, "stroke-width": 2, "stroke-dasharray": dash }));
    coords.forEach(([x, y], i) => {
      body.push(h("circle", { cx: f1(sx(x)), cy: f1(sy(y)), r: 4, fill: colour },
        h("title", {}, `${label}: ${stages[i]} (${fix(x, 2)}, ${fix(y, 2)})`)));
      if (k === 0) body.push(text(sx(x) + 6, sy(y) - 8, stages[i], { size: 10, fill: SOFT }));
    });
    const lx = left + k * Math.min(220, pw / 2);
    body.push(h("line", { x1: lx, y1: height - 12, x2: lx + 24, y2: height - 12, stroke: colour, "stroke-width": 2,
      "stroke-dasharray": dash }));
    body.push(text(lx + 30, height - 12, label, { size: 11 }));
  });
  return svg(width, height, alt, body);
}

// ----------------------------------------------------------------------------- the pictures, by view

const PICTURES = {
  temperature(v, o) {
    const alt = `Bar chart of the most probable next tokens after ${words(v.tokens)} at temperature ` +
      `${shownT(v.temperature)}: ${top(v.page)}.`;
    return figure(barChart(v.page, alt, { title: `${words(v.tokens)} → (temperature ${shownT(v.temperature)})`, width: o.width }), alt);
  },

  sampling(v, o) {
    const kept = v.rows.filter((r) => r.final > 0).map((r) => [r.token, r.final]);
    const how = v.greedy ? "Greedy decoding" : `The roll with seed ${v.seed}`;
    const pick = `${how} picks ${v.chosen} (p = ${fix(v.chosen_prob)})`;
    // Truncation cuts only when top-k or top-p (below 1) is set; a probability that is 0 after the
    // temperature alone underflowed (too small for a number to hold), it was not cut.
    const truncating = v.top_k !== null || (v.top_p !== null && v.top_p < 1);
    const n = `${v.survivors} ${v.survivors === 1 ? "token" : "tokens"}`;
    const kept_words = truncating ? `${n} ${v.survivors === 1 ? "survives" : "survive"} truncation`
      : `${n} ${v.survivors === 1 ? "has" : "have"} a probability above 0`;
    const alt = `${pick}. Bar chart of the next-token page after ${words(v.tokens)} at temperature ${shownT(v.temperature)}` +
      `${v.top_k !== null ? `, top-k ${v.top_k}` : ""}${v.top_p !== null ? `, top-p ${v.top_p}${truncating ? "" : " (off)"}` : ""}. ` +
      `${kept_words}. Distribution rolled on: ${top(kept)}.`;
    const chart = barChart(v.rows.map((r) => [r.token, r.final]), alt, {
      title: `${words(v.tokens)}: ${kept_words}`, width: o.width,
      ghost: v.rows.map((r) => r.heated),
      labels: v.rows.map((r) => (r.final > 0 ? fix(r.final) : r.heated > 0 ? "cut" : "0 (underflow)")),
      legend: [[PALETTE.muted, "after temperature"], [PALETTE.main, "rolled on (after truncation)"]],
      highlight: v.chosen,
    });
    const pickLine = h("p", { class: "course-pick", role: "status" }, `${how} picks `, h("b", {}, v.chosen),
      ` (p = ${fix(v.chosen_prob)})`);
    return figure(chart, alt, pickLine);
  },

  lens(v, o) {
    const n = v.stages.length, k = v.top[0].length, W = o.width || 760, left = 30, cellH = 40, top0 = 30;
    // The climb of the followed token beside the grid when both fit, under it when not (a phone).
    let cellW = Math.max(62, Math.min(86, Math.floor((W - 300) / n)));
    const beside = left + n * cellW + 270 <= W;
    if (!beside) cellW = Math.max(40, Math.min(86, Math.floor((W - left - 8) / n)));
    const gridW = left + n * cellW, small = cellW < 62;
    const at = `position ${v.position} (${v.tokens[v.position]})`;
    const body = titleLines(`reading ${at} of ${words(v.tokens)}`, W - 8).map((t, i) => text(4, 12 + 16 * i, t, { size: 12 }));
    const shift = 16 * (body.length - 1);
    const y0 = top0 + shift;
    v.top.forEach((col, j) => {
      col.forEach(([tok, p], i) => {
        const x = left + j * cellW, y = y0 + i * cellH;
        const ink = inkOn(p), bold = tok === v.track;
        body.push(rect(x, y, cellW - 2, cellH - 2, blue(p)));
        body.push(text(x + cellW / 2, y + 13, tok, { anchor: "middle", fill: ink, bold, size: small ? 10 : undefined }));
        body.push(text(x + cellW / 2, y + 28, fix(p), { anchor: "middle", size: small ? 9 : 11, fill: ink, bold }));
      });
      // A narrow column's stage name on two lines ("L0" over "attn").
      const [first, ...rest] = small ? v.stages[j].split(" ") : [v.stages[j]];
      body.push(text(left + j * cellW + cellW / 2, y0 + k * cellH + 10, first, { anchor: "middle", size: small ? 9 : 10 }));
      if (rest.length) body.push(text(left + j * cellW + cellW / 2, y0 + k * cellH + 21, rest.join(" "), { anchor: "middle", size: 9 }));
    });
    for (let i = 0; i < k; i++) body.push(text(left - 6, y0 + i * cellH + cellH / 2, `#${i + 1}`, { anchor: "end", size: 11 }));
    // The followed token's climb: on the right, or under the grid.
    const px = beside ? gridW + 50 : left + 10, pw = beside ? 200 : Math.max(120, Math.min(300, W - left - 40));
    const ph = beside ? k * cellH - 10 : 110, py = beside ? y0 + 6 : y0 + k * cellH + 46;
    body.push(line(px, py + ph, px + pw, py + ph), line(px, py, px, py + ph));
    for (const t of [0, 0.5, 1]) body.push(text(px - 4, py + ph * (1 - t), String(t), { anchor: "end", size: 10 }));
    const pts = v.track_probs.map((p, j) => [px + (pw * j) / Math.max(n - 1, 1), py + ph * (1 - p)]);
    body.push(h("polyline", { fill: "none", stroke: PALETTE.accent, "stroke-width": 2,
      points: pts.map(([a, b]) => `${f1(a)},${f1(b)}`).join(" ") }));
    pts.forEach(([a, b], j) => {
      body.push(h("circle", { cx: f1(a), cy: f1(b), r: "3.5", fill: PALETTE.accent }));
      body.push(text(a, b - 9, `${fix(v.track_probs[j], 2)} #${v.track_ranks[j]}`, { anchor: "middle", size: 9 }));
    });
    body.push(text(px + pw / 2, py + ph + 16, `P(${v.track}) after each stage`, { anchor: "middle", size: 11 }));
    const alt = `Logit lens on ${words(v.tokens)} at ${at}. Top token ` +
      v.stages.map((s, j) => `after ${s}: ${v.top[j][0][0]} ${fix(v.top[j][0][1])}`).join("; ") +
      `. Probability of ${v.track} stage by stage: ${v.track_probs.map((p) => fix(p)).join(", ")}.`;
    const width = beside ? px + pw + 20 : Math.max(gridW + 8, px + pw + 20);
    const height = beside ? y0 + k * cellH + 40 : py + ph + 26;
    return figure(svg(width, height, alt, body), alt);
  },

  pattern(v, o) {
    const last = v.tokens.map((t, j) => `${t} ${fix(v.pattern[v.tokens.length - 1][j], 2)}`).join(", ");
    const alt = `Attention pattern of layer ${v.layer}, head ${v.head} on ${words(v.tokens)}. The last position attends to: ${last}.`;
    return figure(heatmap(v.pattern, v.tokens, alt, `layer ${v.layer}, head ${v.head}`, room(o)), alt);
  },

  ablation(v, o) {
    const names = v.off.join(", ") || "none", kind = v.kind || "zero";
    const alt = `Switched off (${kind} ablation): ${names}. After ${words(v.tokens)} the model now gives ${v.track} ` +
      `${fix(v.track_prob)} (intact: ${fix(v.track_prob_intact)}). Best next tokens: ${top(v.page)}.`;
    const page = barChart(v.page, alt, { highlight: v.track, width: o.width,
      title: `off (${kind}): ${names}  |  P(${v.track}) ${fix(v.track_prob)} (intact ${fix(v.track_prob_intact)})` });
    const layers = new Map();
    for (const name of v.heads) layers.set(name.slice(0, name.indexOf("H")), []);
    // A layer's heads side by side, as many to a line as the row's cells allow (explorers.css:
    // cells of at least 120 px, 8 px apart); each heatmap drawn for the room of its cell.
    const perLine = Math.max(1, Math.min(v.heads.length / layers.size, Math.floor((room(o) + 8) / 128)));
    const fit = heatmapFit(v.tokens, (room(o) - 8 * (perLine - 1)) / perLine - 8, 22);
    v.heads.forEach((name, i) => {
      const layer = name.slice(0, name.indexOf("H"));
      const off = v.off.includes(name);
      const headAlt = `Attention pattern of head ${name} on ${words(v.tokens)}${off ? ", switched off." : "."}`;
      const [body, w, ht] = heatmapBody(0, 0, v.patterns[i], v.tokens, fit, { title: name + (off ? " (off)" : "") });
      layers.get(layer).push(svg(Math.max(w, 80) + 8, ht + 8, headAlt, [h("g", { transform: "translate(4,4)", opacity: off && "0.35" }, body)]));
    });
    return figure([page, [...layers.values()].map((cells) => row(cells, 120))], alt);
  },

  patching(v, o) {
    const T = v.clean.length, n = v.rows.length;
    // The page draws the grid as its rows are computed: a row not done yet is null, drawn blank.
    const done = v.rows.map((_, i) => i).filter((i) => v.grid[i] && !v.grid[i].includes(null));
    const best = done.map((i) => [v.rows[i], v.grid[i].reduce((m, x, p) => (x > v.grid[i][m] ? p : m), 0)])
      .sort((x, y) => v.grid[v.rows.indexOf(y[0])][y[1]] - v.grid[v.rows.indexOf(x[0])][x[1]]).slice(0, 3)
      .map(([name, p]) => `${name} at ${p} (${v.clean[p]}) ${fix(v.grid[v.rows.indexOf(name)][p], 2)}`).join(", ");
    const alt = `Activation patching: clean ${words(v.clean)}, corrupted ${words(v.corrupted)}. logit(${v.target}) - ` +
      `logit(${v.against}) is ${fix(v.clean_diff, 2)} clean and ${fix(v.corrupted_diff, 2)} corrupted. ` +
      (done.length < n ? `Computing the grid: ${done.length} of ${n} rows done. ` : "") +
      `The patches that bring most of it back${done.length < n ? " so far" : ""}: ${best || "none yet"}. ${v.cell} at ` +
      `position ${v.position} brings back ${fix(v.recovered, 2)}; the patched run's best next tokens: ${top(v.page)}.`;
    const labelW = 56, cell = Math.max(8, Math.min(44, Math.floor((room(o) - labelW - 12) / T))), named = cell >= 26;
    const body = [];
    // The title in as many lines as the grid's width needs (a phone), the grid under it.
    const titled = titleLines(`fraction of logit(${v.target}) - logit(${v.against}) each patch brings back`,
      labelW + T * cell + 4, 12);
    const g0 = 4 + 16 * titled.length;
    v.grid.forEach((row, i) => {
      body.push(text(labelW - 6, g0 + i * cell + cell / 2, v.rows[i], { anchor: "end", size: 11 }));
      if (!row) {
        body.push(rect(labelW, g0 + i * cell, T * cell - 1, cell - 1, "none", { style: `stroke:${GRID};stroke-dasharray:3 3` }));
        return;
      }
      row.forEach((x, p) => {
        if (x === null) return;
        const picked = v.rows[i] === v.cell && p === v.position;
        body.push(rect(labelW + p * cell, g0 + i * cell, cell - 1, cell - 1, x < 0 ? "#f4c7cc" : blue(x),
          picked ? { stroke: PALETTE.accent, "stroke-width": 2 } : {}));
        if (named) body.push(text(labelW + p * cell + cell / 2, g0 + i * cell + cell / 2, fix(x, 2),
          { anchor: "middle", size: 9, fill: inkOn(x) }));
      });
    });
    titled.forEach((t, k) => body.push(text(4, 12 + 16 * k, t, { size: 12 })));
    if (cell >= 10) {
      body.push(h("g", { transform: `translate(0,${g0 + 2 + n * cell})` }, v.clean.map((t, p) =>
        text(labelW + p * cell + cell / 2, 6, `${t}/${v.corrupted[p]}`, { anchor: "end", size: 10, rotate: -45 }))));
    }
    const grid = svg(labelW + T * cell + 12, g0 + 10 + n * cell + 90, alt, body);
    const page = barChart(v.page, alt, { highlight: v.target, width: o.width,
      title: `${v.cell} at position ${v.position} patched: recovered ${fix(v.recovered, 2)}` });
    return figure([grid, page], alt);
  },

  real_attention(v, o) {
    const T = v.tokens.length, q = v.query, L = v.rows.length, H = v.rows[0].length, W = Math.min(room(o), 640);
    const who = `“${v.tokens[q]}” (position ${q})`;
    // Each head's strongest word for the query: not [CLS], [SEP], punctuation or the query itself.
    const strongest = (row) => row.reduce((b, p, j) => (v.special[j] || j === q || (b >= 0 && row[b] >= p) ? b : j), -1);
    const parked = (row) => row.reduce((t, p, j) => t + (v.special[j] ? p : 0), 0);
    const row = v.rows[v.layer][v.head], best = strongest(row);
    const bestWord = best >= 0 ? `${v.tokens[best]} ${fix(row[best], 2)}` : "no word";
    const perLayer = v.rows.map((hs, l) => `layer ${l}: ${hs.map((r) => { const b = strongest(r); return b >= 0 ? v.tokens[b] : "-"; }).join(", ")}`);
    const alt = `MiniLM layer ${v.layer}, head ${v.head} on ${words(v.tokens)}: ${who} gives ${pct(parked(row))} of its ` +
      `attention to [CLS], [SEP] and punctuation; among the words it looks hardest at ${bestWord}. Each head's strongest ` +
      `word for ${v.tokens[q]}, ${perLayer.join("; ")}.`;
    // 1. Every head at a glance: its strongest word for the query, shaded by the weight on it.
    const labelW = 26, cw = Math.max(14, Math.min(52, Math.floor((W - labelW - 8) / H))), ch = 22, top0 = 46;
    const chars = Math.floor((cw - 2) / 5.6);
    const grid = [text(2, 10, `each head's strongest word for ${who}`, { size: 12 }),
      text(2, 24, "(not [CLS], [SEP], punctuation or itself); shade: its weight", { size: 10, fill: SOFT })];
    for (let h0 = 0; h0 < H; h0++) grid.push(text(labelW + h0 * cw + cw / 2, top0 - 7, cw >= 24 ? `H${h0}` : String(h0), { anchor: "middle", size: 9 }));
    v.rows.forEach((hs, l) => {
      grid.push(text(labelW - 4, top0 + l * ch + ch / 2, `L${l}`, { anchor: "end", size: 10 }));
      hs.forEach((r, h0) => {
        const b = strongest(r), p = b >= 0 ? r[b] : 0, x = labelW + h0 * cw, y = top0 + l * ch;
        const picked = l === v.layer && h0 === v.head;
        grid.push(h("rect", { x, y, width: cw - 1, height: ch - 1, fill: blue(p),
          style: picked ? `stroke:${PALETTE.accent};stroke-width:2` : null },
        h("title", {}, `L${l}H${h0}: ${b >= 0 ? `${v.tokens[b]} ${fix(p, 2)}` : "no word"}; [CLS], [SEP] and punctuation ${fix(parked(r), 2)}`)));
        if (b >= 0 && chars >= 2) grid.push(text(x + cw / 2, y + ch / 2, v.tokens[b].slice(0, chars), { anchor: "middle", size: 9, fill: inkOn(p) }));
      });
    });
    const overview = svg(labelW + H * cw + 8, top0 + L * ch + 6, alt, grid);
    // 2. The chosen head: the query's attention on every key.
    const rowH = 17, keyW = 20 + 7 * Math.max(...v.tokens.map((t) => t.length)), plotW = Math.max(80, W - keyW - 50);
    const bars = [text(2, 10, `layer ${v.layer}, head ${v.head}: where ${who} looks`, { size: 12 })];
    v.tokens.forEach((t, j) => {
      const y = 20 + j * rowH, colour = j === best ? PALETTE.accent : v.special[j] ? PALETTE.muted : PALETTE.main;
      bars.push(text(keyW - 6, y + rowH / 2, `${j} ${t}`, { anchor: "end", size: 11, bold: j === q }));
      bars.push(rect(keyW, y + 3, f1(plotW * row[j]), rowH - 6, colour));
      bars.push(text(keyW + plotW * row[j] + 4, y + rowH / 2, fix(row[j], 2), { size: 10 }));
    });
    bars.push(text(keyW, 28 + T * rowH, "grey: [CLS], [SEP], punctuation; red: the strongest word", { size: 10, fill: SOFT }));
    const barSvg = svg(keyW + plotW + 40, 38 + T * rowH, alt, bars);
    // 3. The chosen head's whole pattern, the query's row outlined.
    const fit = heatmapFit(v.tokens, W - 12, 22);
    const title = `L${v.layer}H${v.head}: every query (rows), every key`;
    const [body, w, ht] = heatmapBody(4, 4, v.pattern, v.tokens, fit, { title, masked: false, mark: q });
    const heat = svg(Math.min(Math.max(w, 7.5 * title.length), W - 4) + 12, ht + 12, alt, body);
    return figure([overview, barSvg, heat], alt);
  },

  kv_cache(v) {
    const total = BigInt(Math.round(v.total)).toString();
    const gb = twoPlaces(v.total / 1e9), gib = twoPlaces(v.total / 2 ** 30);
    const words = `2 x ${commas(v.layers)} layers x ${commas(v.context)} tokens x ${commas(v.heads)} heads x ` +
      `${commas(v.d_head)} x ${v.bytes} bytes = ${commas(total)} bytes = ${gb} GB (${gib} GiB)`;
    return h("p", { class: "course-kv-result", role: "status" }, h("strong", {}, words));
  },

  tsne(v, o) {
    const panels = v.layouts.map((layout, i) => {
      const run = `${commas(v.iterations[i])} iterations${v.converged[i] ? " (converged)" : " (stopped before converging)"}`;
      const alt = `t-SNE layout (perplexity ${v.perplexity}, seed ${v.seeds[i]}) of ${v.points_label}, coloured by group, ` +
        `after ${run}, KL ${fix(v.kl[i])}. Nearest on the page: ${nearestOnPage(layout, v.labels)}. ` +
        `${pct(v.kept[i])} of each point's 5 nearest neighbours kept.`;
      const title = `seed ${v.seeds[i]}: ${v.converged[i] ? "converged" : "stopped"} at ${commas(v.iterations[i])}, ` +
        `KL ${fix(v.kl[i])}, ${pct(v.kept[i])} kept`;
      return [scatter(layout, v.labels, v.groups, alt, { title, labelled: v.labelled }), alt];
    });
    return figure(row(panels.map((p) => p[0])), panels.map((p) => p[1]).join(" "));
  },

  plane(v, o) {
    const [t1, t2] = v.axes;
    const alt = `Concept plane with axis 1 = ${t1} and axis 2 = ${t2} made orthogonal to it, of ${v.points_label}, ` +
      `coloured by group. Nearest on the page: ${nearestOnPage(v.coords, v.labels)}. The plane holds ${pct(v.spread)} of the spread.`;
    const width = Math.max(340, Math.min(o.width || 640, 640));
    return figure(scatter(v.coords, v.labels, v.groups, alt, { axes: true, width, height: Math.round(width * 0.75),
      title: `plane holds ${pct(v.spread)} of the spread; axes' cosine before Gram-Schmidt ${signed(v.raw_overlap)}`,
      xlabel: t1, ylabel: `${t2} (orthogonalised)` }), alt);
  },

  path(v, o) {
    const off = v.off.join(", ") || "nothing";
    const end0 = v.intact[v.intact.length - 1], end = (v.ablated || v.intact)[v.intact.length - 1];
    const alt = `The last position of ${words(v.tokens)} on the plane (${v.toward}, ${v.against} orthogonalised), after ` +
      `each stage. Intact it ends at (${fix(end0[0], 2)}, ${fix(end0[1], 2)}) with P(${v.toward}) ${fix(v.prob_intact, 4)}; ` +
      `with ${off} switched off it ends at (${fix(end[0], 2)}, ${fix(end[1], 2)}) with P(${v.toward}) ${fix(v.prob, 4)}.`;
    const paths = [["intact", v.intact, PALETTE.muted]];
    if (v.ablated) paths.push([`off: ${off}`, v.ablated, PALETTE.accent]);
    return figure(pathChart(paths, v.stages, alt, { width: o.width,
      title: `off: ${off}  |  P(${v.toward}) ${fix(v.prob, 4)} (intact ${fix(v.prob_intact, 4)})`,
      xlabel: `along ${v.toward}`, ylabel: `along ${v.against}, orthogonalised` }), alt);
  },
};

// ----------------------------------------------------------------------------- the hand-worked chapters' pictures

/** Heatmaps side by side, each drawn for its share of the room: [[title, matrix, alt, faded], ...]. */
function heatmapRow(maps, tokens, o, largest = 22) {
  const perLine = Math.max(1, Math.min(maps.length, Math.floor((room(o) + 8) / 128)));
  const fit = heatmapFit(tokens, (room(o) - 8 * (perLine - 1)) / perLine - 8, largest);
  return row(maps.map(([title, matrix, alt]) => {
    const [body, w, ht] = heatmapBody(0, 0, matrix, tokens, fit, { title });
    return svg(Math.max(w, 80) + 8, ht + 8, alt, [h("g", { transform: "translate(4,4)" }, body)]);
  }), 120);
}

const HAND_PICTURES = {
  window(v, o) {
    const n = v.tokens.length, first = Math.max(0, n - v.width), name = `L${v.layer}H${v.head}`;
    const reads = v.pattern[n - 1][v.head_best];
    const alt = `On ${words(v.tokens)}: at the last position (${v.tokens[n - 1]}) a box filter of width ${v.width} ` +
      `reads positions ${first} to ${n - 1} (${words(v.tokens.slice(first))}), ${fix(1 / v.width)} each, whatever the ` +
      `words are; head ${name} puts most weight on position ${v.head_best} (${v.tokens[v.head_best]}, ` +
      `${fix(reads)}), and ${fix(v.outside)} of its weight falls before the filter's window.`;
    return figure(heatmapRow([[`filter, width ${v.width}`, v.window, `Box filter of width ${v.width}. ${alt}`],
      [`head ${name}`, v.pattern, `Attention pattern of head ${name}. ${alt}`]], v.tokens, o, 34), alt);
  },

  bigram(v, o) {
    const seen = v.pairs > 0;
    const rows = v.rows.map((r) => `${r.token} ${fix(r.model)} (table ${fix(r.table)})`).join(", ");
    const alt = `After ${v.last} (position ${v.position} of ${words(v.tokens)}), ` + (seen
      ? `the counted table's followers and the zero-layer model's probabilities: ${rows}. Largest gap over the ` +
        `whole row: ${fix(v.gap)}.`
      : `the counted rounds never show ${v.last} followed by anything; the zero-layer model's best next tokens: ${rows}.`);
    const title = `after ${v.last} (position ${v.position}): ` + (seen ? `largest gap ${fix(v.gap)}` : "never followed in the rounds");
    return figure(barChart(v.rows.map((r) => [r.token, r.model]), alt, { title, width: o.width,
      ghost: v.rows.map((r) => r.table), labels: v.rows.map((r) => `${fix(r.model)} (${fix(r.table)})`),
      legend: [[PALETTE.muted, "counted table"], [PALETTE.main, "zero-layer model"]] }), alt);
  },

  cat_sat(v, o) {
    const n = v.words.length, last = v.words[n - 1], vec = (xs) => xs.map((x) => fix(x, 2)).join(", ");
    const how = v.scaled ? "divided by √d_head" : "not divided";
    const alt = `The head on ${words(v.words)}, scores ${how}. ${last} scores ` +
      v.words.map((w, j) => `${w} ${fix(v.scores[n - 1][j])}`).join(", ") + "; so it takes " +
      v.words.map((w, j) => `${w} ${fix(v.pattern[n - 1][j])}`).join(", ") + `. The head writes (${vec(v.write)}) ` +
      `for ${last}; its stream becomes (${vec(v.stream)}).`;
    const [body, w, ht] = heatmapBody(4, 4, v.pattern, v.words, heatmapFit(v.words, Math.min(room(o), 420) - 12, 48),
      { title: `who attends to whom (scores ${how})`, values: true });
    const lines = [`scores of ${last}: ${v.words.map((x, j) => `${x} ${fix(v.scores[n - 1][j], 2)}`).join(", ")}`,
      `head writes for ${last}: (${vec(v.write)})`, `stream of ${last} after: (${vec(v.stream)})`];
    lines.forEach((t, i) => body.push(text(4, ht + 18 + 18 * i, t, { size: 12 })));
    const width = Math.max(w + 12, Math.min(room(o), 7 * Math.max(...lines.map((t) => t.length)) + 12));
    return figure(svg(width, ht + 18 * lines.length + 20, alt, body), alt);
  },

  heads(v, o) {
    const n = v.tokens.length, where = v.positions ? "with its position embeddings" : "with its position embeddings off";
    const reads = v.heads.map((name, i) => `${name} ${v.tokens[v.best[i]]} (position ${v.best[i]}, ` +
      `${fix(v.patterns[i][n - 1][v.best[i]], 2)})`).join("; ");
    const alt = `Layer ${v.layer}'s heads on ${words(v.tokens)}, the model ${where}. From the last position ` +
      `(${v.tokens[n - 1]}) each reads most: ${reads}. Mean total-variation distance between two heads' rows there: ` +
      `${fix(v.spread, 2)}.`;
    const maps = v.heads.map((name, i) => [`${name} → ${v.tokens[v.best[i]]}`, v.patterns[i],
      `Attention pattern of head ${name} on ${words(v.tokens)}, ${where}; the last position reads most ` +
      `${v.tokens[v.best[i]]} at position ${v.best[i]}.`]);
    const head = h("p", { class: "course-pick" }, `From ${v.tokens[n - 1]}, the heads' rows differ by `,
      h("b", {}, fix(v.spread, 2)), ` on average (0: they read alike; 1: they share nothing)`);
    return figure(heatmapRow(maps, v.tokens, o), alt, head);
  },
};
Object.assign(PICTURES, HAND_PICTURES);

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
}

// Part 1's map (the rules checker, the whole machine), drawn in machine-render.js with this kit.
Object.assign(PICTURES, machinePictures({ h, svg, text, rect, line, fix, signed, words, room, heatmapBody, heatmapFit,
  barChart, figure, SOFT, LINE }));

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
    el.addEventListener("click", (event) => {
      const target = event.target.closest && event.target.closest("[data-choose]");
      if (target) model.send({ choose: target.getAttribute("data-choose") });
    });
    redraw();
  },
};
