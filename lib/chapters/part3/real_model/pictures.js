/* The real-model chapter's pictures: SmolLM2's results page reshaped and rolled, its logit lens, one
 * layer's nine heads, and a continuation decoded one of five ways.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */
import { PALETTE } from "../../../explorers/js/constants.js";

/** A token as a reader can see it: a line break as ↵, quoted so that a leading space shows. */
const seen = (t) => `"${String(t).replace(/\n/g, "↵")}"`;
/** A prompt as the text it was read from (SmolLM2's tokens carry their own spaces). */
const said = (tokens) => `"${tokens.join("").replace(/\n/g, "↵")}"`;

/** Which tokens belong to a stretch of `n` that occurs at least twice in the text. */
function repeated(tokens, n) {
  const seenAt = new Map(), marked = tokens.map(() => false);
  for (let i = 0; i + n <= tokens.length; i++) {
    const key = JSON.stringify(tokens.slice(i, i + n));
    if (seenAt.has(key)) for (const j of [seenAt.get(key), i]) for (let m = j; m < j + n; m++) marked[m] = true;
    else seenAt.set(key, i);
  }
  return marked;
}

export function pictures(k) {
  const { h, svg, text, rect, fix, shownT, figure, barChart, heatmapRow, room, titleLines, commas, blue, inkOn } = k;
  return {
    real_page(v, o) {
      // The label fits the chart's column of names (about 14 characters): "rest (49,142)".
      const rest = `rest (${commas(v.rest.count + v.stored - v.rows.length)})`;
      const rows = v.rows.map((r) => [seen(r.token), r.final]).concat([[rest, v.rest.final]]);
      const truncating = v.top_k !== null || (v.top_p !== null && v.top_p < 1);
      const n = `${commas(v.survivors)} ${v.survivors === 1 ? "token" : "tokens"}`;
      const kept = truncating ? `${n} ${v.survivors === 1 ? "survives" : "survive"} truncation`
        : `${n} ${v.survivors === 1 ? "has" : "have"} a probability above 0`;
      const pickWords = v.chosen === null
        ? `The roll with seed ${v.seed} falls among the tokens below the best ${v.stored} (together ${fix(v.chosen_prob)})`
        : `The roll with seed ${v.seed} picks ${seen(v.chosen)} (p = ${fix(v.chosen_prob)})`;
      const restRows = v.rows.slice(0, 10).map((r) => `${seen(r.token)} ${fix(r.final)}`).join(", ");
      const alt = `${pickWords}. SmolLM2's next-token page after ${said(v.tokens)} at temperature ${shownT(v.temperature)}` +
        `${v.top_k !== null ? `, top-k ${v.top_k}` : ""}${v.top_p !== null ? `, top-p ${v.top_p}${truncating ? "" : " (off)"}` : ""}. ` +
        `${kept}. Rolled on: ${restRows}; the other ${commas(v.rest.count + v.stored - v.rows.length)} tokens together ${fix(v.rest.final)}.`;
      const chart = barChart(rows, alt, {
        title: `${said(v.tokens)}: ${kept}`, width: o.width,
        ghost: v.rows.map((r) => r.heated).concat([v.rest.heated]),
        labels: rows.map(([, p], i) => (p > 0 ? fix(p) : (i < v.rows.length ? v.rows[i].heated : v.rest.heated) > 0 ? "cut" : "0")),
        legend: [[PALETTE.muted, "after temperature"], [PALETTE.main, "rolled on (after truncation)"]],
        highlight: v.chosen === null ? rest : seen(v.chosen),
      });
      const pick = h("p", { class: "course-pick", role: "status" }, `The roll with seed ${v.seed} `,
        v.chosen === null ? ["falls among ", h("b", {}, `the tokens below the best ${v.stored}`)] : ["picks ", h("b", {}, seen(v.chosen))],
        ` (p = ${fix(v.chosen_prob)})`);
      // The same page as a table: one row a token, its probability as the model gives it, after temperature,
      // and rolled on (after truncation).
      const cut = [v.top_k !== null ? `top-k ${v.top_k}` : "", v.top_p !== null && v.top_p < 1 ? `top-p ${v.top_p}` : "",
        v.min_p !== null && v.min_p !== undefined ? `min-p ${v.min_p}` : ""].filter(Boolean).join(", ");
      const table = h("table", { class: "course-table course-next-tokens" },
        h("caption", {}, `SmolLM2's next token after ${said(v.tokens)}: the best ${v.rows.length} of ${commas(v.rest.count + v.stored)}` +
          ` at temperature ${shownT(v.temperature)}${cut ? `, ${cut}` : ""}`),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "token"), h("th", { scope: "col" }, "probability"),
          h("th", { scope: "col" }, "after temperature"), h("th", { scope: "col" }, "rolled on"))),
        h("tbody", {}, v.rows.map((r) => h("tr", {}, h("th", { scope: "row" }, seen(r.token)), h("td", {}, fix(r.base)),
          h("td", {}, fix(r.heated)), h("td", {}, fix(r.final))))));
      return figure([chart, table], alt, pick);
    },

    real_lens(v, o) {
      const width = Math.max(300, Math.min(room(o), 720));
      // On a narrow picture (a phone) a stage's best tokens go under its bar, not beside it: no word shrinks.
      const narrow = width < 480;
      const titled = titleLines(`logit lens on ${said(v.tokens)}: the final answer ${seen(v.answer)}`, width - 8);
      const rowH = 16, lineH = narrow ? 2 * rowH : rowH, top0 = 10 + 16 * titled.length + 14, labelW = 78, barW = 120;
      const body = titled.map((t, i) => text(4, 12 + 16 * i, t, { size: 13 }));
      if (narrow) body.push(text(labelW + 4, top0 - 8, `P(${seen(v.answer)}), under it the best tokens`, { size: 11 }));
      else body.push(text(labelW + 4, top0 - 8, `P(${seen(v.answer)})`, { size: 11 }), text(labelW + barW + 16, top0 - 8, "best tokens there", { size: 11 }));
      v.stages.forEach((s, i) => {
        const y = top0 + i * lineH;
        const lead = i >= v.first;
        body.push(text(labelW - 6, y + rowH / 2, s.name, { anchor: "end", size: 11 }));
        body.push(rect(labelW + 4, y + 2, Math.max(0.5, barW * s.answer).toFixed(1), rowH - 4, lead ? PALETTE.accent : PALETTE.main));
        body.push(text(narrow ? labelW + 4 : labelW + barW + 16, narrow ? y + rowH + rowH / 2 - 1 : y + rowH / 2,
          s.top.map(([t, p]) => `${seen(t)} ${fix(p, 2)}`).join("  "), { size: 11 }));
      });
      const height = top0 + lineH * v.stages.length + 8;
      const alt = `Logit lens of SmolLM2 on ${said(v.tokens)}: the final answer ${seen(v.answer)} leads from ` +
        `${v.stages[v.first].name} on. ` + v.stages.map((s) => `${s.name}: P(answer) ${fix(s.answer)}, best ${s.top.map(([t, p]) => `${seen(t)} ${fix(p, 2)}`).join(", ")}`).join("; ") + ".";
      return figure(svg(width, height, alt, body), alt);
    },

    real_decode(v, o) {
      // The text: the prompt, then each new token shaded by the probability the model gave it. Under it, one bar
      // per new token (its probability), a stretch that repeats drawn in the accent colour.
      const shown = (t) => String(t).replace(/\n/g, "↵");
      const again = repeated(v.pieces, 4);
      const ending = v.stopped ? "it ends its turn" : `cut at ${v.most} tokens`;
      const loop = v.loop === null ? "it does not end in a loop" : `it ends in a stretch of ${v.loop} ${v.loop === 1 ? "token" : "tokens"} repeated three times or more`;
      const numbers = `${v.length} new ${v.length === 1 ? "token" : "tokens"} (${ending}); the longest stretch it holds twice: ` +
        `${v.longest_repeat} ${v.longest_repeat === 1 ? "token" : "tokens"}; ${Math.round(100 * v.rep4)}% of its 4-token stretches occur twice; ` +
        `mean surprisal ${fix(v.bits, 2)} bits a token; log-probability of the whole ${fix(v.logprob, 1)}; ${loop}.`;
      const text0 = h("p", { class: "course-pick course-decoded", role: "status" }, h("b", {}, v.tokens.join("").replace(/\n/g, "↵")),
        v.pieces.map((t, i) => h("span", { style: `background:${blue(v.probs[i])};color:${inkOn(v.probs[i])};white-space:pre-wrap`,
          title: `p = ${fix(v.probs[i])}` }, shown(t))));
      const width = Math.max(320, Math.min(room(o), 720));
      const titled = titleLines(`${said(v.tokens)}, ${v.settings}: each new token's probability`, width - 8);
      const top0 = 12 + 16 * titled.length, plotH = 80, left = 34, step = (width - left - 8) / Math.max(v.length, 1);
      const body = titled.map((t, i) => text(4, 12 + 16 * i, t, { size: 13 }));
      body.push(text(left - 4, top0, "1", { anchor: "end", size: 11 }), text(left - 4, top0 + plotH, "0", { anchor: "end", size: 11 }));
      v.probs.forEach((p, i) => {
        const hgt = Math.max(0.5, plotH * p);
        body.push(rect((left + i * step + 0.5).toFixed(1), (top0 + plotH - hgt).toFixed(1), Math.max(1, step - 1).toFixed(1),
          hgt.toFixed(1), again[i] ? PALETTE.accent : PALETTE.main));
      });
      body.push(text(left, top0 + plotH + 14, `new tokens 1 to ${v.length}; in the accent colour, those of a 4-token stretch that occurs twice`, { size: 11 }));
      const alt = `SmolLM2 continues ${said(v.tokens)} by ${v.settings}: ${said(v.pieces)}. ${numbers} ` +
        `Each new token's probability: ${v.pieces.map((t, i) => `${seen(t)} ${fix(v.probs[i], 2)}`).join(", ")}.`;
      return figure(svg(width, top0 + plotH + 26, alt, body), alt, [text0, h("p", { class: "course-decoded-numbers" }, numbers)]);
    },

    real_patch(v, o) {
      // Rows: the residual stream before each block and after the last; columns: positions. A row the page has not
      // finished yet is null, drawn as an empty frame.
      const T = v.clean.length, n = v.grid.length;
      const what = v.direction === "denoise" ? "brings back" : "takes away";
      const whatMany = v.direction === "denoise" ? "bring back" : "take away";
      const done = v.grid.map((r, i) => i).filter((i) => v.grid[i] !== null);
      const cells = done.flatMap((i) => v.grid[i].map((x, p) => [i, p, x])).filter(([, p]) => p >= v.first);
      const best = cells.sort((x, y) => y[2] - x[2]).slice(0, 3)
        .map(([i, p, x]) => `${v.stages[i]} at ${seen(v.clean[p])} (position ${p}) ${fix(x, 2)}`).join(", ");
      const alt = `Activation patching of SmolLM2's residual stream (${v.direction}): clean ${said(v.clean)}, corrupted ` +
        `${said(v.corrupted)}. logit(${seen(v.target)}) - logit(${seen(v.against)}) is ${fix(v.clean_diff, 2)} clean and ` +
        `${fix(v.corrupted_diff, 2)} corrupted. ${done.length < n ? `Computing: ${done.length} of ${n} rows done. ` : ""}` +
        `The patches that ${whatMany} most${done.length < n ? " so far" : ""}: ${best || "none yet"}.` +
        (v.first > 0 ? ` The texts are the same before position ${v.first}: patching there changes nothing.` : "") +
        (v.warnings.length ? ` ${v.warnings.join(". ")}.` : "");
      const labelW = 96, cell = Math.max(10, Math.min(44, Math.floor((room(o) - labelW - 12) / T))), rowH = 14;
      const named = cell >= 32;
      const titled = titleLines(`fraction of logit(${seen(v.target)}) - logit(${seen(v.against)}) each patch ${what}`, labelW + T * cell + 4, 12);
      const notes = v.warnings.flatMap((w) => titleLines(w, labelW + T * cell + 4, 11));
      const g0 = 4 + 16 * titled.length + 14 * notes.length;
      const body = titled.map((t, k) => text(4, 12 + 16 * k, t, { size: 12 }));
      notes.forEach((t, k) => body.push(text(4, 12 + 16 * titled.length + 14 * k, t, { size: 11, fill: PALETTE.accent })));
      v.grid.forEach((row, i) => {
        body.push(text(labelW - 6, g0 + i * rowH + rowH / 2, v.stages[i], { anchor: "end", size: 10 }));
        if (row === null) {
          body.push(rect(labelW, g0 + i * rowH, T * cell - 1, rowH - 1, "none", { style: "stroke:#999;stroke-dasharray:3 3" }));
          return;
        }
        row.forEach((x, p) => {
          body.push(h("g", {}, h("title", {}, `${v.stages[i]}, position ${p} (${v.clean[p]} / ${v.corrupted[p]}): ${fix(x, 2)}`),
            rect(labelW + p * cell, g0 + i * rowH, cell - 1, rowH - 1, x < 0 ? "#f4c7cc" : blue(Math.min(1, x))),
            named ? text(labelW + p * cell + cell / 2, g0 + i * rowH + rowH / 2, fix(x, 2), { anchor: "middle", size: 9, fill: inkOn(Math.min(1, Math.max(0, x))) }) : null));
        });
      });
      body.push(h("g", { transform: `translate(0,${g0 + 4 + n * rowH})` }, v.clean.map((t, p) =>
        text(labelW + p * cell + cell / 2, 6, v.corrupted[p] === t ? seen(t) : `${seen(t)}/${seen(v.corrupted[p])}`, { anchor: "end", size: 10, rotate: -45 }))));
      return figure(svg(labelW + T * cell + 12, g0 + 10 + n * rowH + 110, alt, body), alt);
    },

    real_heads(v, o) {
      // Where the last token looks hardest, by head: what each heatmap's description says in words.
      const hardest = v.patterns.map((p) => {
        const q = p[p.length - 1];
        const j = q.reduce((b, x, jj) => (x > q[b] ? jj : b), 0);
        return `${seen(v.tokens[j])} ${fix(q[j], 2)}`;
      });
      const maps = v.patterns.map((p, i) => [`L${v.layer}H${i}`, p,
        `Attention pattern of layer ${v.layer} head ${i} on ${said(v.tokens)}; the last token looks hardest at ${hardest[i]}`]);
      const best = hardest.map((x, i) => `H${i} ${x}`).join(", ");
      const alt = `SmolLM2's layer ${v.layer}: its 9 heads' attention patterns on ${said(v.tokens)} (rows: queries, ` +
        `columns: keys). Where the last token looks hardest, by head: ${best}.`;
      return figure(heatmapRow(maps, v.tokens.map(seen), o), alt);
    },
  };
}
