/* The page twins of the many-heads chapter: the heads explorer's view (every head of a layer,
 * the position embeddings on or off) and its checks' computations.
 */
import { argmax, tokensOf } from "../../../explorers/js/twins.js";

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

export const VIEWS = {
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

export const COMPUTE = {
  mlpWeights(a) {
    const d = a.d_model, m = a.d_mlp;
    return { expected: 2 * d * m, hints: [["one", d * m], ["biases", 2 * d * m + d + m], ["square", d * d + m * m]] };
  },
};
