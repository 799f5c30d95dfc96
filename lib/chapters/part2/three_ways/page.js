/* The page twins of the three-ways chapter: its explorers' views (two t-SNE layouts side by side,
 * the concept plane the reader builds; the real-language chapter shows the t-SNE explorer too) and its
 * checks' computations.
 */
import { pyRepr } from "../../../explorers/js/python.js";
import { CourseError, require, say } from "../../../explorers/js/readout.js";
import { conceptPlane, gramSchmidt, norm, points } from "../../../explorers/js/twins.js";

/** lib.chapters.part2.three_ways.views.parse_axis: "Paolo - Pietro" -> [plus words, minus words]. */
function parseAxis(text, labels) {
  const pieces = String(text || "").match(/[+-]|[^\s+-]+/g) || [];
  const plus = [], minus = [];
  let sign = "+";
  for (const piece of pieces) {
    if (piece === "+" || piece === "-") { sign = piece; continue; }
    require(labels.includes(piece), say("not_a_label", { piece: pyRepr(piece), labels: labels.join(" ") }));
    (sign === "+" ? plus : minus).push(piece);
    sign = "+";
  }
  require(plus.length || minus.length, say("empty_axis"));
  return [plus, minus];
}

function axisVector(points, text) {
  const [plus, minus] = parseAxis(text, points.labels);
  const dim = points.vectors[0].length;
  const mean = (ws) => {
    const m = new Array(dim).fill(0);
    for (const w of ws) points.vectors[points.labels.indexOf(w)].forEach((x, j) => { m[j] += x; });
    return m.map((x) => x / ws.length);
  };
  let v = new Array(dim).fill(0);
  if (plus.length) v = mean(plus);
  if (minus.length) { const m = mean(minus); v = v.map((x, j) => x - m[j]); }
  const tidy = (plus.join(" + ") + minus.map((w) => ` - ${w}`).join("")).trim();
  require(norm(v) > 1e-9, say("zero_axis", { axis: tidy }));
  return [v, tidy];
}

export const VIEWS = {
  tsne(_, v, a) {
    // Every layout was computed in advance (lib.chapters.part2.three_ways.views.tsne_grid): a step looks one up.
    const stops = a.stops, steps = v.steps === undefined ? stops[stops.length - 1] : v.steps;
    require(stops.includes(steps), say("not_a_stop", { name: "iterations", value: steps, stops: stops.join(", ") }));
    const cells = ["left", "right"].map((side) => a.grid[`${v.perplexity}|${v[side]}|${steps}`]);
    return { points: a.points, points_label: a.points_label, labels: a.labels, labelled: a.labelled, groups: a.groups,
      perplexity: v.perplexity, seeds: [v.left, v.right], steps, layouts: cells.map((c) => c.layout),
      kept: cells.map((c) => c.kept), iterations: cells.map((c) => c.n_iter), kl: cells.map((c) => c.kl),
      converged: cells.map((c) => c.converged) };
  },

  async plane({ points }, v, a) {
    const ps = await points(v.points);
    const [d1, t1] = axisVector(ps, v.axis_1);
    const [d2, t2] = axisVector(ps, v.axis_2);
    try {
      gramSchmidt([d1, d2], 1e-9 * norm(d2));
    } catch (e) {
      if (!(e instanceof CourseError)) throw e;
      throw new CourseError(say("parallel_axes", { second: t2, first: t1 }));
    }
    const plane = conceptPlane(ps.vectors, d1, d2);
    return { points: v.points, points_label: a.labels[v.points], axes: [t1, t2], labels: ps.labels, groups: ps.groups,
      coords: plane.coords, spread: plane.spread, raw_overlap: plane.rawOverlap };
  },
};

export const COMPUTE = {
  async widestPlane(a) {
    // lib.chapters.part2.three_ways.checks: each plane's share by the concept-plane explorer's view
    // (lib.chapters.part2.three_ways.views.plane_view); the first of the widest, as max() picks it.
    let best = null, share = -Infinity;
    for (const name of a.planes) {
      const [axis_1, axis_2] = name.split(" and ");
      const view = await VIEWS.plane({ points }, { points: a.points, axis_1, axis_2 }, { labels: {} });
      if (view.spread > share) { best = name; share = view.spread; }
    }
    return { expected: best, options: a.planes, fields: { share } };
  },
};
