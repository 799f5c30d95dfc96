/* Sharing what an explorer shows: its state in the page's address, its picture saved as a file.
 *
 * Every explorer on a page has an id made from its view (`sampling`, or `tsne-2` for a page's second
 * t-SNE explorer). After every picture drawn, the values of the controls that differ from their
 * defaults are written into the page's address, one query parameter per explorer (`?sampling=
 * {"temperature":2.05,"seed":"7"}`), without reloading; opening that address sets the controls to
 * them before the first picture, so a link reopens the same picture. Nothing here knows one explorer
 * from another: the controls and their defaults come from each explorer's declaration.
 *
 * "save SVG" and "save PNG" write the picture as the reader sees it (every chart of the figure where the
 * screen lays it out) with its description in words beneath it, and in the SVG's <title> and <desc>.
 */
const SVG_NS = "http://www.w3.org/2000/svg";

/** Ids for the explorers of a page, in order: the view's name, then -2, -3... for later ones of the same view. */
export function explorerIds(specs) {
  const seen = {};
  return specs.map((spec) => {
    seen[spec.view] = (seen[spec.view] || 0) + 1;
    return seen[spec.view] === 1 ? spec.view : `${spec.view}-${seen[spec.view]}`;
  });
}

/** The controls' values an address holds for explorer `id` (only those the declaration has), or {}. */
export function readState(id, controls, search = location.search) {
  const text = new URLSearchParams(search).get(id);
  if (!text) return {};
  let state;
  try { state = JSON.parse(text); } catch (e) { return {}; }
  if (!state || typeof state !== "object") return {};
  const names = new Set(controls.map((c) => c.name));
  return Object.fromEntries(Object.entries(state).filter(([name]) => names.has(name)));
}

/** The values that differ from the declared defaults, in the declaration's order. */
export function changedValues(controls, values) {
  const changed = {};
  for (const c of controls) if (JSON.stringify(values[c.name]) !== JSON.stringify(c.default)) changed[c.name] = values[c.name];
  return changed;
}

/** Writes explorer `id`'s values into the page's address (only the ones that differ from the defaults). */
export function writeState(id, controls, values) {
  const changed = changedValues(controls, values);
  const url = new URL(location.href);
  if (Object.keys(changed).length) url.searchParams.set(id, JSON.stringify(changed));
  else url.searchParams.delete(id);
  if (url.href !== location.href) history.replaceState(history.state, "", url.href);
}

// ----------------------------------------------------------------------------- the picture as a file

/** Lines of at most `width` characters, broken at spaces. */
function wrap(text, width = 100) {
  const lines = [];
  let line = "";
  for (const word of String(text).split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) { lines.push(line); line = word; } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** Where each chart sits in the figure as the screen lays it out: [chart, x, y, width, height] in CSS px,
 *  or null when the figure is not laid out (hidden): then the charts are stacked, one above the other. */
function layout(figure, charts, pad) {
  const box = figure.getBoundingClientRect();
  const placed = charts.map((c) => { const r = c.getBoundingClientRect(); return [c, r.left - box.left, r.top - box.top, r.width, r.height]; });
  if (!placed.length || placed.some((p) => !(p[3] > 0 && p[4] > 0))) return null;
  const left = Math.min(...placed.map((p) => p[1])), top = Math.min(...placed.map((p) => p[2]));
  return placed.map(([c, x, y, w, h]) => [c, pad + x - left, pad + y - top, w, h]);
}

/** One SVG document of the figure: its charts where the screen shows them (a grid stays a grid), then
 *  its description in words. */
export function figureSVG(figure) {
  const charts = [...figure.querySelectorAll("svg.course-chart")];
  const pick = figure.querySelector(".course-pick, .course-kv-result");
  const described = (figure.querySelector(".course-words p") || { textContent: "" }).textContent.trim();
  const picked = pick ? pick.textContent.trim() : "";
  // The pick line is said once: a description that opens with it already has it.
  const words = [described.startsWith(picked) ? "" : picked, described].filter(Boolean).join(" ");
  const size = (svg) => [+svg.getAttribute("width") || 0, +svg.getAttribute("height") || 0];
  const lines = wrap(words);
  const lineH = 16, pad = 8;
  let y = pad;
  const placed = layout(figure, charts, pad) || charts.map((c) => {
    const [w, h] = size(c), at = [c, pad, y, w, h];
    y += h + pad;
    return at;
  });
  let width = 640;
  for (const [, x, top, w, h] of placed) { width = Math.max(width, Math.ceil(x + w + pad)); y = Math.max(y, Math.ceil(top + h + pad)); }
  const doc = document.createElementNS(SVG_NS, "svg");
  doc.setAttribute("xmlns", SVG_NS);
  const title = document.createElementNS(SVG_NS, "title"), desc = document.createElementNS(SVG_NS, "desc");
  title.textContent = words.slice(0, 200);
  desc.textContent = words;
  const background = document.createElementNS(SVG_NS, "rect");
  background.setAttribute("fill", "#fff");
  doc.append(title, desc, background);
  for (const [c, x, top, w, h] of placed) {
    const copy = c.cloneNode(true);
    for (const [k, v] of [["x", x], ["y", top], ["width", w], ["height", h]]) copy.setAttribute(k, +v.toFixed(1));
    doc.append(copy);
  }
  const text = document.createElementNS(SVG_NS, "text");
  text.setAttribute("font-family", "DejaVu Sans, Verdana, sans-serif");
  text.setAttribute("font-size", "12");
  text.setAttribute("fill", "#222");
  lines.forEach((line, i) => {
    const span = document.createElementNS(SVG_NS, "tspan");
    span.setAttribute("x", pad);
    span.setAttribute("y", y + lineH * (i + 1));
    span.textContent = line;
    text.append(span);
  });
  doc.append(text);
  const height = Math.ceil(y + lineH * (lines.length + 1));
  width = Math.max(width, Math.ceil(7 * Math.max(0, ...lines.map((l) => l.length)) + 2 * pad));
  for (const [k, v] of [["width", width], ["height", height], ["viewBox", `0 0 ${width} ${height}`]]) doc.setAttribute(k, v);
  background.setAttribute("width", width);
  background.setAttribute("height", height);
  return { text: new XMLSerializer().serializeToString(doc), width, height };
}

function download(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

export function saveSVG(figure, name) {
  download(new Blob([figureSVG(figure).text], { type: "image/svg+xml" }), `${name}.svg`);
}

/** The same document drawn at twice its size into a PNG. */
export async function pngBlob(figure, scale = 2) {
  const { text, width, height } = figureSVG(figure);
  const image = new Image();
  image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  await image.decode();
  const canvas = document.createElement("canvas");
  canvas.width = width * scale;
  canvas.height = height * scale;
  const context = canvas.getContext("2d");
  context.scale(scale, scale);
  context.drawImage(image, 0, 0, width, height);
  return new Promise((done) => canvas.toBlob(done, "image/png"));
}

export async function savePNG(figure, name) {
  download(await pngBlob(figure), `${name}.png`);
}

/** The row of buttons under a figure: a link to this picture, and the two saves. */
export function shareBar(figure, id, el) {
  const link = el("a", { class: "course-share-link", href: location.href, text: "link to this picture",
    title: "this page's address with the explorer's settings: it reopens the same picture" });
  const svg = el("button", { type: "button", class: "course-token", text: "save SVG",
    title: "save the picture and its description as an SVG file" });
  const png = el("button", { type: "button", class: "course-token", text: "save PNG",
    title: "save the picture and its description as a PNG image" });
  svg.addEventListener("click", () => saveSVG(figure, id));
  png.addEventListener("click", () => savePNG(figure, id).catch((e) => console.error(e)));
  const bar = el("div", { class: "course-share" }, [link, svg, png]);
  return { bar, refresh: () => { link.href = location.href; } };
}
