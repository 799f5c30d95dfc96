/* The induction chapter's pictures: a training run at one checkpoint (the loss curves over training, first
 * and second copy apart, with the checkpoint marked, every head's pattern on the sequence, and the heads'
 * three scores); and SmolLM2's heads on a text read twice (every head's score as a grid, the chosen head's
 * pattern, each next token's probability with a group of heads switched off and without). The renderer
 * (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a kernel this file
 * is written into the renderer's single module, so it imports nothing but the constants.
 */
import { PALETTE } from "../../../explorers/js/constants.js";

export function pictures(k) {
  const { h, svg, text, line, rect, fix, pct, words, room, figure, heatmapRow, blue, INK, SOFT, GRID } = k;
  const ACCENT = PALETTE.accent;
  const seen = (t) => `"${String(t).replace(/\n/g, "↵")}"`;

  function curves(v, o) {
    const W = Math.min(room(o), 640), H = 190, left = 44, right = 12, top = 14, bottom = 34;
    const steps = v.curve.steps, last = steps[steps.length - 1];
    const most = Math.max(...v.curve.first, ...v.curve.second);
    const sx = (s) => left + ((W - left - right) * s) / last;
    const sy = (y) => top + ((H - top - bottom) * (most - y)) / most;
    const path = (ys, colour, dash) => h("polyline", { points: steps.map((s, i) => `${sx(s).toFixed(1)},${sy(ys[i]).toFixed(1)}`).join(" "),
      style: `fill:none;stroke:${colour};stroke-width:2${dash ? ";stroke-dasharray:5 3" : ""}` });
    const body = [line(left, sy(0), W - right, sy(0), GRID), line(left, top, left, sy(0), GRID)];
    for (const y of [0, 1, 2, 3].filter((t) => t <= most)) body.push(text(left - 6, sy(y), String(y), { anchor: "end", size: 10 }));
    body.push(text(left - 30, top + 4, "nats", { size: 10 }));
    for (const s of [0, Math.round(last / 2), last]) body.push(text(sx(s), H - bottom + 14, String(s), { anchor: "middle", size: 10 }));
    body.push(text((left + W - right) / 2, H - 6, "training step", { anchor: "middle", size: 10 }));
    body.push(path(v.curve.first, SOFT, true), path(v.curve.second, INK, false));
    body.push(h("line", { x1: sx(v.step).toFixed(1), y1: top, x2: sx(v.step).toFixed(1), y2: sy(0).toFixed(1),
      style: `stroke:${INK};stroke-width:1.5;stroke-dasharray:2 2` }));
    body.push(text(W - right, top + 2, "— second copy", { anchor: "end", size: 11 }));
    body.push(text(W - right, top + 16, "- - first copy", { anchor: "end", size: 11, fill: SOFT }));
    const at = steps.indexOf(v.step);
    const alt = `Loss on the trainer's held-out sequences over ${last} steps: the first copy from ${fix(v.curve.first[0], 2)} ` +
      `to ${fix(v.curve.first[steps.length - 1], 2)} nats, the second from ${fix(v.curve.second[0], 2)} to ` +
      `${fix(v.curve.second[steps.length - 1], 2)}` + (at >= 0 ? `; at step ${v.step}, first ${fix(v.curve.first[at], 2)}, ` +
      `second ${fix(v.curve.second[at], 2)}.` : `; the checkpoint at step ${v.step} is marked.`);
    return [svg(W, H, alt, body), alt];
  }

  /** SmolLM2's 30 x 9 scores as a grid of cells: the switched-off heads framed, the chosen one in the accent; a press
   *  on a cell picks its head (data-choose), and so does Enter or Space on the focused cell: the grid is a keyboard
   *  grid (render.js moves its one tabindex 0 with the arrow keys), reached by Tab at the chosen head. */
  function scoreGrid(scores, v, what, o) {
    const L = scores.length, H = scores[0].length, W = Math.min(room(o), 420);
    const labelW = 30, top0 = 30, cw = Math.max(14, Math.floor((W - labelW - 8) / H)), ch = 12;
    const body = [text(2, 12, `each head's ${what} on this text (darker is higher)`, { size: 12 })];
    for (let hd = 0; hd < H; hd++) body.push(text(labelW + hd * cw + cw / 2, top0 - 5, `H${hd}`, { anchor: "middle", size: 9 }));
    const off = new Set(v.off);
    const rows = [];
    for (let l = 0; l < L; l++) {
      if (l % 5 === 0) body.push(text(labelW - 4, top0 + l * ch + ch - 2, `L${l}`, { anchor: "end", size: 9 }));
      const cells = [];
      for (let hd = 0; hd < H; hd++) {
        const name = `L${l}H${hd}`, x = scores[l][hd];
        const chosen = l === v.layer && hd === v.head;
        const frame = chosen ? { stroke: ACCENT, "stroke-width": 2 } : off.has(name) ? { stroke: INK, "stroke-width": 1.5, "stroke-dasharray": "2 1" } : {};
        // Its name starts with the number it stands for, as the patching grid's cells do (no <title>: shown words).
        cells.push(h("g", { "data-choose": `layer=${l}&head=${hd}`, "data-row": l, "data-col": hd, role: "gridcell",
          tabindex: chosen ? 0 : -1, "aria-selected": String(chosen), style: "cursor:pointer",
          "aria-label": `${fix(x, 2)}: ${name}'s ${what}${off.has(name) ? ", switched off" : ""}${chosen ? ", shown" : ""}; ` +
            "press Enter to show its pattern" },
          rect(labelW + hd * cw, top0 + l * ch, cw - 1, ch - 1, blue(Math.max(0, Math.min(1, x))), frame)));
      }
      rows.push(h("g", { role: "row", "aria-label": `layer ${l}` }, cells));
    }
    body.push(h("g", { role: "grid", "aria-label": `${what} of every head: ${L} layers by ${H} heads; arrow keys move ` +
      "between heads, Enter shows a head's pattern", "aria-rowcount": L, "aria-colcount": H }, rows));
    // A group, not an image: an image may not hold the cells a reader presses (axe-core's nested-interactive).
    return svg(labelW + H * cw + 8, top0 + L * ch + 6, `${what} of every head`, body, { role: "group" });
  }

  /** The probability of each next token, with the heads on (ink) and off (accent), the second copy shaded. */
  function probsChart(v, o) {
    const W = Math.min(room(o), 640), H0 = 160, left = 34, right = 8, top = 28, bottom = 24;
    const n = v.clean.length, sx = (i) => left + ((W - left - right) * (i + 0.5)) / n, sy = (p) => top + (H0 - top - bottom) * (1 - p);
    const body = [text(2, 12, "probability of the next token of the text, position by position", { size: 12 }),
      line(left, sy(0), W - right, sy(0), GRID), text(left - 4, sy(1) + 4, "1", { anchor: "end", size: 10 }),
      text(left - 4, sy(0) + 4, "0", { anchor: "end", size: 10 })];
    if (v.period !== null) {
      body.push(rect(sx(v.period - 0.5).toFixed(1), top, (W - right - sx(v.period - 0.5)).toFixed(1), H0 - top - bottom, "#eef3f9"));
      body.push(text(sx(v.period - 0.5) + 4, top + 10, "second copy", { size: 10, fill: SOFT }));
    }
    const path = (ps, colour) => h("polyline", { points: ps.map((p, i) => `${sx(i).toFixed(1)},${sy(p).toFixed(1)}`).join(" "),
      style: `fill:none;stroke:${colour};stroke-width:1.8` });
    body.push(path(v.clean, INK));
    if (v.ablated) body.push(path(v.ablated, ACCENT));
    body.push(text(W - right, H0 - 6, v.ablated ? "— heads on   — heads off (accent)" : "— heads on", { anchor: "end", size: 10 }));
    return svg(W, H0, "next-token probabilities", body);
  }

  return {
    smol_induction(v, o) {
      const twice = v.period !== null;
      const scores = twice ? v.ind : v.prev, what = twice ? "induction score" : "previous-token score";
      const offWords = v.off.length ? `${v.off.length} ${v.off.length === 1 ? "head" : "heads"} (${v.off.join(", ")})` : "no head";
      const copyLine = !twice ? "Read once, the text has no second copy to predict; switch 'read it twice' on to find induction heads."
        : `Read twice (${v.period} tokens each time): SmolLM2's top choice is the next token at ${pct(v.copy.accuracy)} of the ` +
          `second copy (loss ${fix(v.copy.loss, 2)} nats)` + (v.copy_off ? `; with ${offWords} switched off (${v.kind}): ` +
          `${pct(v.copy_off.accuracy)} (loss ${fix(v.copy_off.loss, 2)} nats).` : v.group === "none" ? "." : `; ${v.group} found ${offWords} to switch off.`);
      const ind = twice ? v.ind.flatMap((r, l) => r.map((x, hd) => [`L${l}H${hd}`, x])).filter(([, x]) => x >= v.formed).map(([n, x]) => `${n} ${fix(x, 2)}`) : [];
      const prev = v.prev.flatMap((r, l) => r.map((x, hd) => [`L${l}H${hd}`, x])).filter(([, x]) => x >= v.formed_previous).map(([n, x]) => `${n} ${fix(x, 2)}`);
      const name = `L${v.layer}H${v.head}`;
      const alt = `SmolLM2 on "${v.tokens.slice(0, twice ? v.period : v.tokens.length).join("").replace(/\n/g, "↵")}"${twice ? ", read twice" : ""}. ${copyLine} Induction heads (score at least ${v.formed}): ` +
        `${twice ? ind.join(", ") || "none" : "not measured (read once)"}. Previous-token heads (at least ${v.formed_previous}): ` +
        `${prev.join(", ") || "none"}. The chosen head ${name} has previous-token score ${fix(v.prev[v.layer][v.head], 2)}` +
        `${twice ? ` and induction score ${fix(v.ind[v.layer][v.head], 2)}` : ""}.`;
      const map = heatmapRow([[name, v.pattern, `Attention pattern of ${name} on the text${twice ? " read twice" : ""}`]], v.tokens.map(seen), o);
      const head = h("p", { class: "course-pick", role: "status" }, copyLine);
      return figure([h("div", { class: "course-row" }, h("div", { class: "course-cell" }, scoreGrid(scores, v, what, o)),
        h("div", { class: "course-cell" }, map)), probsChart(v, o)], alt, head);
    },

    training(v, o) {
      const [chart, curveAlt] = curves(v, o);
      const names = v.patterns.flatMap((layer, l) => layer.map((_, hd) => `L${l}H${hd}`));
      const flat = v.patterns.flat();
      const scores = names.map((n, i) => {
        const [l, hd] = [Math.floor(i / v.patterns[0].length), i % v.patterns[0].length];
        return { n, prev: v.previous[l][hd], prefix: v.prefix[l][hd], copy: v.copying[l][hd] };
      });
      const maps = names.map((n, i) => [`${n} prev ${fix(scores[i].prev, 2)} · ind ${fix(scores[i].prefix, 2)}`, flat[i],
        `Attention pattern of ${n} at step ${v.step} on ${words(v.tokens)}: previous-token score ${fix(scores[i].prev, 2)}, ` +
        `prefix-matching score ${fix(scores[i].prefix, 2)}, copying score ${fix(scores[i].copy, 2)}.`]);
      const table = h("table", { class: "course-table" },
        h("tr", {}, ["head", "previous-token", "prefix-matching", "copying"].map((c) => h("th", {}, c))),
        scores.map((s) => h("tr", {}, [s.n, fix(s.prev, 2), fix(s.prefix, 2), fix(s.copy, 2)].map((c) => h("td", {}, c)))));
      const lossLine = v.loss.second === null
        ? "The sequence is not one segment typed twice, so it has no first and second copy to compare."
        : `On this sequence: first copy ${fix(v.loss.first, 2)} nats, second copy ${fix(v.loss.second, 2)} nats.`;
      const head = h("p", { class: "course-pick" }, `Step ${v.step}. `, lossLine);
      const alt = `${curveAlt} ${lossLine} Scores at step ${v.step} (previous-token, prefix-matching, copying): ` +
        scores.map((s) => `${s.n} ${fix(s.prev, 2)}, ${fix(s.prefix, 2)}, ${fix(s.copy, 2)}`).join("; ") + ".";
      return figure([chart, heatmapRow(maps, v.tokens, o), table], alt, head);
    },
  };
}
