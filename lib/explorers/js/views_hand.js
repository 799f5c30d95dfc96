/* The hand-worked chapters' views computed in the page: the twins of lib/explorers/hand_worked.py.
 *
 * Same contract as views.js (which adds these to its VIEWS): the page's context, the controls' values
 * and the explorer's fixed arguments in; the library's view out, with the library's messages for a
 * bad value, checked in the same order. tests/browser/test_site_model.py holds them to the library.
 */
import { formatG, pyParseFloat, pyRepr, pySplit, pyStrip } from "./python.js";
import { order, require, say, softmax } from "./readout.js";
import { parsePosition } from "./views.js";

const argmax = (row) => { let b = 0; for (let j = 1; j < row.length; j++) if (row[j] > row[b]) b = j; return b; };
const tokensOf = (model, ids) => ids.map((i) => model.vocab.tokens[i]);

/** lib.explorers.hand_worked.box_filter */
export function boxFilter(n, width) {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (__, j) => (i - width < j && j <= i ? 1 / width : 0)));
}

/** lib.explorers.hand_worked.parse_vector */
export function parseVector(text, name, n, limit) {
  const s = pyStrip(text);
  const problem = say("vector_numbers", { name, n, limit: formatG(limit), got: pyRepr(s) });
  const pieces = pySplit(s.replace(/,/g, " "));
  require(pieces.length === n, problem);
  const values = pieces.map(pyParseFloat);
  require(values.every((x) => x !== null && Number.isFinite(x) && x >= -limit && x <= limit), problem);
  return values;
}

const matmul = (A, B) => A.map((row) => B[0].map((_, j) => row.reduce((s, x, k) => s + x * B[k][j], 0)));
const transpose = (A) => A[0].map((_, j) => A.map((row) => row[j]));

/** A hook that takes the position embeddings back out of the stream entering block 0
 *  (lib.analysis.positions.without_positions: the same model with W_pos zero). */
function noPositions(model) {
  const D = model.cfg.d_model, pos = model.w.W_pos;
  return (rows, name, info) => {
    const out = rows.slice();
    for (let p = 0; p < info.rows; p++) for (let d = 0; d < D; d++) out[p * D + d] -= pos[p * D + d];
    return out;
  };
}

export const HAND_VIEWS = {
  window({ model }, v) {
    const ids = model.encode(v.prompt), n = ids.length;
    const pattern = model.run(ids, {}, "patterns").patterns[v.layer][v.head].map((r) => Array.from(r));
    const last = pattern[n - 1];
    let outside = 0;
    for (let j = 0; j < Math.max(0, n - v.width); j++) outside += last[j];
    return { tokens: tokensOf(model, ids), width: v.width, layer: v.layer, head: v.head, window: boxFilter(n, v.width),
      pattern, head_best: argmax(last), outside };
  },

  bigram({ model }, v, a) {
    const ids = model.encode(v.prompt);
    const at = parsePosition(v.position, ids.length);
    const probs = Array.from(softmax(model.promptLogits(ids.slice(0, at + 1))));
    const tokens = model.vocab.tokens, row = a.table[ids[at]], seen = a.pairs[ids[at]];
    const rows = order(seen ? row : probs).filter((i) => !seen || row[i] > 0).slice(0, a.k)
      .map((i) => ({ token: tokens[i], model: probs[i], table: row[i] }));
    let gap = null;
    if (seen) { gap = 0; probs.forEach((p, i) => { gap = Math.max(gap, Math.abs(p - row[i])); }); }
    return { tokens: tokensOf(model, ids), position: at, last: tokens[ids[at]], pairs: seen, rows, gap };
  },

  cat_sat(_, v, a) {
    const d = a.W_Q.length;
    const embed = {};
    for (const w of a.words) embed[w] = parseVector(v[`embed_${w}`], `the embedding of ${w}`, d, a.limit);
    const words = pySplit(v.order), n = words.length;
    const X = words.map((w) => embed[w]);
    const Q = matmul(X, a.W_Q), K = matmul(X, a.W_K), V = matmul(X, a.W_V);
    const raw = matmul(Q, transpose(K)), divide = v.scaled ? Math.sqrt(a.d_head) : 1;
    const scores = raw.map((row, i) => row.map((s, j) => (j > i ? null : s / divide)));
    const pattern = scores.map((row, i) => {
      const live = Array.from(softmax(row.slice(0, i + 1)));
      return row.map((_, j) => (j > i ? 0 : live[j]));
    });
    const write = matmul(matmul(pattern, V), a.W_O)[n - 1];
    return { words, scaled: Boolean(v.scaled), scores, pattern, write, stream: X[n - 1].map((x, j) => x + write[j]) };
  },

  heads({ model }, v) {
    const ids = model.encode(v.prompt), H = model.nHeads;
    const off = v.no_positions ? { hooks: { "blocks.0.resid_pre": [noPositions(model)] }, key: "no positions" } : {};
    const patterns = model.run(ids, off, "patterns").patterns[v.layer].map((p) => p.map((r) => Array.from(r)));
    const lasts = patterns.map((p) => p[ids.length - 1]);
    let total = 0, pairs = 0;
    for (let a = 0; a < H; a++) for (let b = a + 1; b < H; b++) {
      total += 0.5 * lasts[a].reduce((s, x, j) => s + Math.abs(x - lasts[b][j]), 0);
      pairs++;
    }
    return { tokens: tokensOf(model, ids), layer: v.layer, positions: !v.no_positions,
      heads: patterns.map((_, h) => `L${v.layer}H${h}`), patterns, best: lasts.map(argmax), spread: pairs ? total / pairs : 0 };
  },
};
