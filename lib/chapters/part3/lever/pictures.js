/* The lever chapter's picture: the logit lens, stage by stage, and the followed token's climb.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */
import { PALETTE } from "../../../explorers/js/constants.js";

export function pictures(k) {
  const { h, svg, text, rect, line, f1, fix, words, figure, titleLines, blue, inkOn } = k;
  return {
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
        body.push(text(left + j * cellW + cellW / 2, y0 + k * cellH + 10, first, { anchor: "middle", size: 11 }));
        // (11 px text is 13 px tall: the second line 14 px under the first, clear of it)
        if (rest.length) body.push(text(left + j * cellW + cellW / 2, y0 + k * cellH + 24, rest.join(" "), { anchor: "middle", size: 11 }));
      });
      for (let i = 0; i < k; i++) body.push(text(left - 6, y0 + i * cellH + cellH / 2, `#${i + 1}`, { anchor: "end", size: 11 }));
      // The followed token's climb: on the right, or under the grid.
      const px = beside ? gridW + 50 : left + 10, pw = beside ? 200 : Math.max(120, Math.min(300, W - left - 40));
      const ph = beside ? k * cellH - 10 : 110, py = beside ? y0 + 6 : y0 + k * cellH + 50;
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
  };
}
