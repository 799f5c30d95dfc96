/* The three-ways chapter's pictures: two t-SNE layouts side by side, and the concept plane (the
 * real-language chapter shows the t-SNE explorer too).
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */
import { GROUP_COLOURS } from "../../../explorers/js/constants.js";

export function pictures(k) {
  const { h, svg, text, rect, line, f1, fix, pct, signed, words, commas, figure, row, planeScale, SOFT, GRID } = k;
  function groupColours(groups) {
    const out = new Map();
    for (const g of groups) if (!out.has(g)) out.set(g, GROUP_COLOURS[out.size % GROUP_COLOURS.length]);
    return out;
  }

  /** Each point's name beside it where it runs into no other name and stays inside the plot (`box`:
   *  [x0, y0, x1, y1]): the first free place of eight around the point, else none (its dot still names
   *  it on hover, and the words under the picture list the neighbours). 11 px text, about 7 px a character. */
  function pointLabels(at, labels, box) {
    const placed = [], out = [];
    const h0 = 13, gap = 2;
    const free = (b) => b[0] >= box[0] && b[2] <= box[2] + 12 && b[1] >= box[1] - 6 && b[3] <= box[3] + 2 &&
      placed.every((q) => b[2] + gap <= q[0] || q[2] + gap <= b[0] || b[3] + gap <= q[1] || q[3] + gap <= b[1]);
    at.forEach(([x, y], i) => {
      const w = 7 * String(labels[i]).length + 2;
      for (const [dx, dy, anchor] of [[5, -7, "start"], [5, 7, "start"], [-5, -7, "end"], [-5, 7, "end"],
                                      [0, -11, "middle"], [0, 11, "middle"], [8, 0, "start"], [-8, 0, "end"]]) {
        const x0 = anchor === "start" ? x + dx : anchor === "end" ? x + dx - w : x - w / 2;
        const b = [x0, y + dy - h0 / 2, x0 + w, y + dy + h0 / 2];
        if (!free(b)) continue;
        placed.push(b);
        out.push(text(x + dx, y + dy, labels[i], { size: 11, anchor: anchor === "start" ? null : anchor }));
        break;
      }
    });
    return out;
  }

  /** Labelled points coloured by group; without `axes` (t-SNE) no axis means anything, so none is drawn. */
  function scatter(points, labels, groups, alt, o = {}) {
    const width = o.width || 380, height = o.height || 360;
    const colours = groupColours(groups);
    // The legend in as many columns as its longest name allows (11 px text: about 7 px a character).
    const cols = Math.max(1, Math.min(4, Math.floor((width - 48) / (22 + 7 * Math.max(...[...colours.keys()].map((g) => g.length))))));
    const top0 = o.title ? 26 : 8, bottom = 30 + 16 * Math.ceil(colours.size / cols), left = 34, right = 14;
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
    });
    if (o.labelled !== false) body.push(...pointLabels(points.map(([x, y]) => [sx(x), sy(y)]), labels, [left, top0, left + pw, top0 + ph]));
    [...colours].forEach(([group, c], i) => {
      const lx = left + (i % cols) * (pw / cols), ly = top0 + ph + 32 + 16 * Math.floor(i / cols);
      body.push(rect(f1(lx), ly - 5, 10, 10, c));
      body.push(text(lx + 14, ly, group, { size: 11 }));
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

  return {
    tsne(v, o) {
      // Each layout drawn at the width it is shown (two side by side where they fit, else one above the
      // other), so its words stay at their size instead of being scaled down with it.
      const room = o.width || 640, width = Math.floor(room >= 648 ? (room - 8) / 2 : room);
      const panels = v.layouts.map((layout, i) => {
        const run = `${commas(v.iterations[i])} iterations${v.converged[i] ? " (converged)" : " (stopped before converging)"}`;
        const alt = `t-SNE layout (perplexity ${v.perplexity}, seed ${v.seeds[i]}) of ${v.points_label}, coloured by group, ` +
          `after ${run}, KL ${fix(v.kl[i])}. Nearest on the page: ${nearestOnPage(layout, v.labels)}. ` +
          `${pct(v.kept[i])} of each point's 5 nearest neighbours kept.`;
        const title = `seed ${v.seeds[i]}: ${v.converged[i] ? "converged" : "stopped"} at ${commas(v.iterations[i])}, ` +
          `KL ${fix(v.kl[i])}, ${pct(v.kept[i])} kept`;
        return [scatter(layout, v.labels, v.groups, alt, { title, labelled: v.labelled, width }), alt];
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
  };
}
