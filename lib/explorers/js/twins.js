/* What the chapters' page twins share: the helpers of the explorers' views and of the exercises'
 * page checks that more than one chapter uses, the one loader of the site's point sets, and the check
 * computations several chapters declare.
 *
 * Each chapter's own twins live in its unit (lib/chapters/PART/UNIT/page.js: its explorers' views,
 * its checks' computations, and helpers only it uses, such as the ablation chapter's hooks and patching
 * grid); the build assembles them into one table (units.js, written by lib/explorers/web.py), which
 * views.js and checks.js read. This module imports no unit.
 */
import { float32Of } from "./model.js";
import { pyInt, pyRepr, pySplit, pyStrip } from "./python.js";
import { CourseError, greedy, require, say, softmax } from "./readout.js";

export const headName = (l, h) => `L${l}H${h}`;
export const tokensOf = (model, ids) => ids.map((i) => model.vocab.tokens[i]);
export const argmax = (row) => { let b = 0; for (let j = 1; j < row.length; j++) if (row[j] > row[b]) b = j; return b; };

/** A residual checkpoint's name for a reader (lib.analysis.lens.stage_label). */
export function stageLabel(stage) {
  if (stage === "embed") return "embedding";
  const [, layer, kind] = stage.split(".");
  return `${kind === "mlp" ? "MLP" : "attention"} ${layer}`;
}

/** The heads whose switches are on, as [layer, head], in the library's order. */
export function switchedOff(model, v) {
  const out = [];
  for (let l = 0; l < model.nLayers; l++) for (let h = 0; h < model.nHeads; h++) if (v[headName(l, h)]) out.push([l, h]);
  return out;
}

// ----------------------------------------------------------------------------- vectors
export const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
export const norm = (a) => Math.sqrt(dot(a, a));
export const cosine = (u, v) => { const n = norm(u) * norm(v); return n > 0 ? dot(u, v) / n : 0; };

/** Orthonormal axes from directions, in order (lib.analysis.maps.gram_schmidt). */
export function gramSchmidt(directions, tol = 1e-10) {
  const axes = [];
  directions.forEach((d, i) => {
    let v = Array.from(d);
    for (const e of axes) {
      const c = dot(v, e);
      v = v.map((x, j) => x - c * e[j]);
    }
    const n = norm(v);
    require(n > tol, say("direction_in_span", { i: i + 1 }));
    axes.push(v.map((x) => x / n));
  });
  return axes;
}

/** The rows of x on the plane of d1 and (d2 made orthogonal to d1) (lib.analysis.maps.concept_plane). */
export function conceptPlane(x, d1, d2) {
  const axes = gramSchmidt([d1, d2]);
  const coords = x.map((row) => axes.map((a) => dot(row, a)));
  const dim = d1.length, mean = new Array(dim).fill(0);
  for (const row of x) row.forEach((val, j) => { mean[j] += val / x.length; });
  let total = 0, inPlane = 0;
  for (const row of x) {
    const c = Array.from(row, (val, j) => val - mean[j]);
    total += dot(c, c);
    for (const a of axes) inPlane += dot(c, a) ** 2;
  }
  return { coords, spread: total > 0 ? inPlane / total : 0, rawOverlap: dot(d1, d2) / (norm(d1) * norm(d2)) };
}

export function embeddingRow(model, id) {
  const D = model.cfg.d_model;
  return Array.from(model.w.W_E.subarray(id * D, (id + 1) * D));
}

// ----------------------------------------------------------------------------- parsers shared with the library

/** lib.explorers.boxes.parse_position */
export function parsePosition(text, n) {
  const s = pyStrip(text);
  if (["", "last"].includes(s.toLowerCase())) return n - 1;
  const value = pyInt(s);
  const p = value === null ? -1 : Number(value);
  require(p >= 0 && p < n, say("position", { last: n - 1, n, got: pyRepr(s) }));
  return p;
}

// ----------------------------------------------------------------------------- the checks' computations
// Each is the twin of a check's `values` in Python: {expected, hints: [[text key, wrong value], ...]
// in the library's order, options (a choice's), fields (what the texts print)}.

const BASE = new URL("./", import.meta.url);

export function entropyBits(p) {
  let h = 0;
  for (const x of p) if (x > 0) h -= x * Math.log2(x);
  return h;
}

export function blockHeads(model, block) {
  return Array.from({ length: model.nHeads }, (_, h) => [block, h]);
}

export function allHeads(model) {
  return Array.from({ length: model.nLayers }, (_, l) => blockHeads(model, l)).flat();
}

/** A point set the site serves (lib.explorers.page.export_site): {labels, groups, vectors as doubles},
 *  fetched once per page. The page's one loader: the explorers' views (page.js gives it to them), the
 *  preload of a map's first point set and the checks all read this cache. */
const POINTS = new Map();
export function points(name) {
  if (!POINTS.has(name)) {
    const loading = fetch(new URL(`points/${name}.json`, BASE)).then((r) => {
      if (!r.ok) throw new CourseError(`point set ${name} not found`);
      return r.json();
    }).then((p) => {
      const { shape: [n, d], data } = float32Of(p.vectors);
      return { labels: p.labels, groups: p.groups, vectors: Array.from({ length: n }, (_, i) => Array.from(data.subarray(i * d, (i + 1) * d))) };
    });
    loading.catch(() => POINTS.delete(name));      // a failure is tried again at the next ask
    POINTS.set(name, loading);
  }
  return POINTS.get(name);
}

/** The best of `pool` by cosine with `target`; ties keep the pool's order (lib.analysis.maps.analogy). */
export function bestByCosine(target, pool, vectorOf) {
  let best = null, score = -Infinity;
  for (const w of pool) { const s = cosine(target, vectorOf(w)); if (s > score) { best = w; score = s; } }
  return best;
}

/** The eigenvalues of a symmetric matrix (cyclic Jacobi rotations), largest first. */
export function eigenvalues(A) {
  const n = A.length, a = A.map((r) => Float64Array.from(r));
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p][q] * a[p][q];
    if (off < 1e-30) break;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) {
      if (a[p][q] === 0) continue;
      const theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
      const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
      const c = 1 / Math.sqrt(t * t + 1), s = t * c;
      for (let k = 0; k < n; k++) {
        const akp = a[k][p], akq = a[k][q];
        a[k][p] = c * akp - s * akq; a[k][q] = s * akp + c * akq;
      }
      for (let k = 0; k < n; k++) {
        const apk = a[p][k], aqk = a[q][k];
        a[p][k] = c * apk - s * aqk; a[q][k] = s * apk + c * aqk;
      }
    }
  }
  return Array.from({ length: n }, (_, i) => a[i][i]).sort((x, y) => y - x);
}

/** Each principal component's share of the variance of the rows (lib.analysis.maps.pca's
 *  explained_variance_ratio_), from the centred rows' Gram matrix. */
export function varianceShares(rows) {
  const n = rows.length, d = rows[0].length;
  const mean = Array.from({ length: d }, (_, j) => rows.reduce((s, r) => s + r[j], 0) / n);
  const c = rows.map((r) => r.map((v, j) => v - mean[j]));
  const gram = c.map((u) => c.map((v) => dot(u, v)));
  const eig = eigenvalues(gram).slice(0, Math.min(n, d)).map((x) => Math.max(x, 0));
  const total = eig.reduce((s, x) => s + x, 0);
  return eig.map((x) => x / total);
}

/** lib.exercises.prompt_signs and lib.analysis.signs.read_signs for a typed prompt: the model's top word
 *  and its probability, and why the rules forbid the prompt (null where they allow it); or, where the model
 *  cannot read it, the open check's verdict saying so. */
export function promptSigns(model, text, whyNotAPrefix) {
  let probs;
  try {
    probs = softmax(model.promptLogits(model.encode(text)));
  } catch (e) {
    if (e instanceof CourseError) return { ok: false, key: "unreadable", fields: { error: e.message } };
    throw e;
  }
  const top = greedy(probs);
  return { top: model.vocab.tokens[top], top_prob: probs[top], why: whyNotAPrefix(pySplit(text)) };
}

/** The computations of checks that several chapters declare (each chapter's own are in its page.js). */
export const COMPUTE = {
  topWithHeadsOff(a, model) {
    const heads = a.block === undefined ? allHeads(model) : blockHeads(model, a.block);
    const expected = model.vocab.tokens[greedy(model.promptLogits(model.encode(a.prompt), { heads }))];
    return { expected, options: model.vocab.tokens, hints: Object.entries(a.wrong_tokens || {}) };
  },
};
