/* The residual-path chapter's picture: the last position's path through a plane, stage by stage.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */
import { PALETTE } from "../../../explorers/js/constants.js";

export function pictures(k) {
  const { h, svg, text, line, f1, fix, words, figure, titleLines, planeScale, placeLabels, textBox, SOFT, GRID } = k;
  /** Paths through a plane, a point per stage: [[label, coords, colour], ...]; the first path's stages named. */
  function pathChart(paths, stages, alt, o = {}) {
    const width = Math.max(340, Math.min(o.width || 640, 640)), height = 400;
    const all = paths.flatMap((p) => p[1]);
    const titled = o.title ? titleLines(o.title, width - 8) : [];
    const top0 = o.title ? 10 + 16 * titled.length : 8, bottom = 48, left = 40, right = 20;
    const pw = width - left - right, ph = height - top0 - bottom;
    const { sx, sy } = planeScale(all, left, top0, pw, ph, true);
    const body = titled.map((t, i) => text(4, 13 + 16 * i, t, { size: 13 }));
    // What the stages' names must stay clear of: the title, the axes' names, the legend, every dot.
    const taken = titled.map((t, i) => textBox(4, 13 + 16 * i, t, 13));
    body.push(line(sx(0), top0, sx(0), top0 + ph, GRID), line(left, sy(0), left + pw, sy(0), GRID));
    body.push(text(left + pw / 2, top0 + ph + 14, o.xlabel || "", { anchor: "middle", size: 11 }));
    taken.push(textBox(left + pw / 2, top0 + ph + 14, o.xlabel || "", 11, "middle"));
    body.push(text(12, top0 + ph / 2, o.ylabel || "", { anchor: "middle", size: 11, rotate: -90 }));
    taken.push([4, 0, 20, height]);
    paths.forEach(([label, coords, colour], k) => {
      const dash = k ? "5 4" : null;
      const d = coords.map(([x, y], i) => `${i ? "L" : "M"}${f1(sx(x))},${f1(sy(y))}`).join(" ");
      body.push(h("path", { d, fill: "none", stroke: colour, "stroke-width": 2, "stroke-dasharray": dash }));
      coords.forEach(([x, y], i) => {
        body.push(h("circle", { cx: f1(sx(x)), cy: f1(sy(y)), r: 4, fill: colour },
          h("title", {}, `${label}: ${stages[i]} (${fix(x, 2)}, ${fix(y, 2)})`)));
        taken.push([sx(x) - 4, sy(y) - 4, sx(x) + 4, sy(y) + 4]);
      });
      const lx = left + k * Math.min(220, pw / 2);
      body.push(h("line", { x1: lx, y1: height - 12, x2: lx + 24, y2: height - 12, stroke: colour, "stroke-width": 2,
        "stroke-dasharray": dash }));
      body.push(text(lx + 30, height - 12, label, { size: 11 }));
      taken.push(textBox(lx + 30, height - 12, label, 11));
    });
    // The first path's stages named, each where it clears the rest (stages that leave the point where it
    // was share a name: "embedding = attention 0").
    body.push(placeLabels(paths[0][1].map(([x, y], i) => [sx(x), sy(y), stages[i]]), taken, width, height, { fill: SOFT }));
    return svg(width, height, alt, body);
  }

  return {
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
}
