/* The real-model chapter's pictures: SmolLM2's results page reshaped and rolled, its logit lens, and one
 * layer's nine heads.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */
import { PALETTE } from "../../../explorers/js/constants.js";

/** A token as a reader can see it: a line break as ↵, quoted so that a leading space shows. */
const seen = (t) => `"${String(t).replace(/\n/g, "↵")}"`;
/** A prompt as the text it was read from (SmolLM2's tokens carry their own spaces). */
const said = (tokens) => `"${tokens.join("").replace(/\n/g, "↵")}"`;

export function pictures(k) {
  const { h, svg, text, rect, fix, shownT, figure, barChart, heatmapRow, room, titleLines, commas } = k;
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
      return figure(chart, alt, pick);
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
