/* The picture of Part 1's map (the part's index page): the whole machine at a glance, and one part
 * in detail.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */
import { PALETTE } from "../../../explorers/js/constants.js";

// The rows of a part's write the detail draws: the chosen position and those just before it.
const SHOWN_ROWS = 8;

export function pictures(k) {
  const {
    h, svg, text, rect, line, fix, signed, words, room, figure, row, barChart, heatmapBody, heatmapFit, SOFT, LINE
  } = k;
  const charW = 7.2;
  const f = (x) => x.toFixed(1);

  function machine(v, o) {
    const W = Math.max(320, Math.min(room(o), 640));
    const names = v.parts, label = (n) => (n === "embed" ? "embedding + positions" : n.startsWith("MLP") ? `MLP ${n.slice(3)}` : n);
    const biggest = Math.max(1e-9, ...v.dla.map(Math.abs));
    const left = 30, right = W - 4, stream = 14, body = [];
    const token = v.tokens[v.position];
    body.push(text(4, 10, `position ${v.position} (${token}): the answer ${v.answer}`, { size: 12, bold: true }));
    // The stream's name sits under the title, over the stream's top, clear of both (11 px text is 13 px tall).
    let y = 40;
    const streamTop = y;
    const box = (n, x, yy, w, hh) => {
      const i = names.indexOf(n), off = v.off.includes(n), chosen = v.detail.part === n;
      const d = v.dla[i];
      const g = [rect(f(x), f(yy), f(w), hh, "transparent", { rx: 4, style: `stroke:${chosen ? PALETTE.main : LINE}`,
        "stroke-width": chosen ? 3 : 1, "stroke-dasharray": off ? "4 3" : null })];
      g.push(text(x + 5, yy + 11, label(n), { size: 11, bold: chosen }));
      g.push(text(x + 5, yy + 26, off ? "off" : signed(d), { size: 11, fill: off ? SOFT : null }));
      const bw = off ? 0 : Math.max(1, (w - 10) * Math.abs(d) / biggest);
      g.push(rect(f(x + 5), f(yy + hh - 8), f(bw), 4, d >= 0 ? PALETTE.main : PALETTE.accent));
      // Joined to the stream at the row's left edge (a line to a later box would cross the ones before it),
      // outside the clickable group (which is clicked at its middle).
      return [line(stream, yy + hh / 2, left, yy + hh / 2), h("g", { "data-choose": `part=${n}`, style: "cursor:pointer", tabindex: 0, role: "button",
        // Its name starts with the words it shows (a <title> would be read as shown words too: none here).
        "aria-label": `${label(n)} ${off ? "off" : signed(d)}: writes ${signed(d)} toward ${v.answer}, length ${fix(v.norm[i], 2)}${off ? " (switched off)" : ""}; press for its values`,
        "aria-pressed": String(chosen) }, g)];
    };
    body.push(box("embed", left, y, right - left, 38));
    y += 46;
    const layers = new Set(names.filter((n) => n !== "embed").map((n) => (n.startsWith("MLP") ? n.slice(3) : n[1])));
    for (const l of layers) {
      body.push(text(left, y + 6, `block ${l}: attention heads, then the MLP`, { size: 10, fill: SOFT }));
      y += 14;
      const heads = names.filter((n) => n.startsWith(`L${l}H`));
      const hw = (right - left - 6 * (heads.length - 1)) / heads.length;
      heads.forEach((n, i) => body.push(box(n, left + i * (hw + 6), y, hw, 38)));
      y += 46;
      if (names.includes(`MLP${l}`)) { body.push(box(`MLP${l}`, left, y, right - left, 38)); y += 46; }
    }
    const sum = v.dla.reduce((a, b) => a + b, 0);
    const chosenOut = v.detail.part === "readout";
    body.push(h("g", { "data-choose": "part=readout", style: "cursor:pointer", tabindex: 0, role: "button",
      "aria-label": `read-out: the stream times the unembedding logit ${v.answer}: ${fix(sum, 2)} + bias ${fix(v.bias, 2)} = ` +
        `${fix(v.logit, 2)}: press for the results page`, "aria-pressed": String(chosenOut) },
      rect(left, f(y), f(right - left), 38, "transparent", { rx: 4, style: `stroke:${chosenOut ? PALETTE.main : LINE}`, "stroke-width": chosenOut ? 3 : 1 }),
      text(left + 5, y + 11, "read-out: the stream times the unembedding", { size: 11, bold: chosenOut }),
      text(left + 5, y + 27, `logit ${v.answer}: ${fix(sum, 2)} + bias ${fix(v.bias, 2)} = ${fix(v.logit, 2)}`, { size: 11 })),
      line(stream, y + 19, left, y + 19));
    body.push(line(stream, streamTop, stream, y + 19));
    body.push(text(stream - 10, streamTop - 10, "stream", { size: 11, fill: SOFT }));
    y += 48;
    body.push(text(4, y, "results page", { size: 11, bold: true }));
    y += 14;
    const pw = right - left - 110;
    v.page.slice(0, 5).forEach(([t, p]) => {
      body.push(text(left + 60, y, t, { anchor: "end", size: 11 }));
      body.push(rect(left + 66, f(y - 5), f(Math.max(1, pw * p)), 10, t === v.answer ? PALETTE.main : PALETTE.muted));
      body.push(text(left + 70 + pw * p, y, fix(p, 3), { size: 10 }));
      y += 16;
    });
    const writes = names.map((n, i) => `${label(n)} ${v.off.includes(n) ? "off" : signed(v.dla[i])}`).join(", ");
    const alt = `The whole model reading ${words(v.tokens)}, at position ${v.position} (${token}). Each part's write toward ` +
      `the answer ${v.answer}: ${writes}; their sum ${fix(sum, 2)} plus the bias ${fix(v.bias, 2)} is its logit ${fix(v.logit, 2)}. ` +
      `Results page: ${v.page.slice(0, 5).map(([t, p]) => `${t} ${fix(p, 3)}`).join(", ")}.` + (v.off.length ? ` Switched off: ${v.off.join(", ")}.` : "");
    // Its parts are buttons (a click or Enter shows that part): a group the keyboard goes through, not one image.
    const map = svg(W, y + 4, alt, body, { role: "group" });
    const [more, moreWords] = detail(v, W);
    return figure([map, more], `${alt} ${moreWords}`);
  }

  function detail(v, W) {
    const d = v.detail, n = d.part;
    const name = n === "embed" ? "the embedding + positions" : n === "readout" ? "the read-out" : n.startsWith("MLP") ? `MLP ${n.slice(3)}` : `head ${n}`;
    if (n === "readout") {
      const said = `The results page at position ${v.position}: ${v.page.map(([t, p]) => `${t} ${fix(p, 3)}`).join(", ")}.`;
      return [barChart(v.page, said, { width: W, title: `the read-out: the results page at position ${v.position}`,
        highlight: v.answer }), said];
    }
    const body = [text(4, 10, `${name}, in detail`, { size: 12, bold: true })];
    let y = 22;
    if (d.pattern) {
      const [hm, , ht] = heatmapBody(4, y, d.pattern, v.tokens, heatmapFit(v.tokens, W - 12, 26),
        { title: `where ${n} looks (rows: queries)` });
      body.push(hm);
      y += ht + 10;
    }
    // The write at the chosen position and the ones just before it (every position's is in the words):
    // a long prompt's forty-eight rows would cost more to draw than the model takes to run.
    const first = Math.max(0, v.position - SHOWN_ROWS + 1), shown = d.dla.slice(first, v.position + 1);
    body.push(text(4, y + 6, `its write toward ${v.answer} (and its length), positions ${first} to ${v.position}`, { size: 11 }));
    y += 18;
    const biggest = Math.max(1e-9, ...shown.map(Math.abs));
    const labelW = 8 + charW * Math.max(...v.tokens.map((t, i) => `${i} ${t}`.length)), half = (W - labelW - 90) / 2, mid = labelW + half;
    shown.forEach((x, k) => {
      const i = first + k, yy = y + k * 15, here = i === v.position;
      body.push(text(labelW - 4, yy + 6, `${i} ${v.tokens[i]}`, { anchor: "end", size: 10, bold: here }));
      const bw = half * Math.abs(x) / biggest;
      body.push(rect(f(x >= 0 ? mid : mid - bw), yy + 1, f(Math.max(bw, 0.5)), 10, x >= 0 ? PALETTE.main : PALETTE.accent));
      body.push(text(labelW + 2 * half + 4, yy + 6, `${signed(x)} (${fix(d.norm[i], 1)})`, { size: 10, bold: here }));
    });
    y += 15 * shown.length + 4;
    body.push(line(mid, y - 15 * shown.length - 4, mid, y - 2, LINE));
    body.push(text(4, y + 8, `logit lens after ${d.stage}, position ${v.position}:`, { size: 11 }));
    y += 22;
    d.lens.forEach(([t, p], i) => { body.push(text(14, y + 14 * i, `${i + 1}. ${t} ${fix(p, 3)}`, { size: 11 })); });
    y += 14 * d.lens.length;
    const alt = `${name} reading ${words(v.tokens)}. Its write toward ${v.answer} at each position: ` +
      d.dla.map((x, i) => `${v.tokens[i]} ${signed(x)}`).join(", ") + `. The logit lens after ${d.stage} at position ${v.position}: ` +
      d.lens.map(([t, p]) => `${t} ${fix(p, 3)}`).join(", ") + "." + (d.pattern ? ` Its pattern at position ${v.position} looks at: ` +
      d.pattern[v.position].map((p, j) => [v.tokens[j], p]).filter(([, p], j) => j <= v.position && p >= 0.1).map(([t, p]) => `${t} ${fix(p, 2)}`).join(", ") + "." : "");
    return [svg(W, y + 4, alt, body), alt];
  }

  return {
  machine,
  };
}
