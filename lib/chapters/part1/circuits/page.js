/* The page twins of the circuits chapter: the pattern viewer's view and its checks' computations.
 */
import { allHeads, eigenvalues, tokensOf } from "../../../explorers/js/twins.js";

export const VIEWS = {
  pattern({ model }, v) {
    const ids = model.encode(v.prompt);
    const run = model.run(ids, {}, "patterns");
    return { tokens: tokensOf(model, ids), layer: v.layer, head: v.head,
      pattern: run.patterns[v.layer][v.head].map((r) => Array.from(r)) };
  },
};

export const COMPUTE = {
  ovRank(a, model) {
    const D = model.cfg.d_model, Dh = model.cfg.d_head;
    const M = Array.from({ length: D }, () => new Float64Array(D));
    for (const [l, h] of a.pair) {
      const V = model.w[`blocks.${l}.attn.W_V`], O = model.w[`blocks.${l}.attn.W_O`];
      for (let i = 0; i < D; i++) for (let e = 0; e < Dh; e++) {
        const v = V[h * D * Dh + i * Dh + e];
        for (let j = 0; j < D; j++) M[i][j] += v * O[h * Dh * D + e * D + j];
      }
    }
    const gram = Array.from({ length: D }, (_, i) => Array.from({ length: D }, (_, j) => {
      let s = 0;
      for (let k = 0; k < D; k++) s += M[k][i] * M[k][j];
      return s;
    }));
    const sv = eigenvalues(gram).map((x) => Math.sqrt(Math.max(x, 0)));
    return { expected: sv.filter((s) => s > sv[0] * a.tol).length, hints: [["one_head", Dh], ["d_model", D]] };
  },

  selfAttention(a, model) {
    // lib.chapters.part1.circuits.checks: each head's mean attention from the last position to itself over the
    // prompts (lib.chapters.part1.circuits.circuits.head_habits, "the callee itself"); the first head with the most.
    const heads = allHeads(model), share = heads.map(() => 0);
    for (const text of a.prompts) {
      const ids = model.encode(text), T = ids.length, run = model.run(ids, {}, "patterns");
      heads.forEach(([l, h], k) => { share[k] += run.patterns[l][h][T - 1][T - 1] / a.prompts.length; });
    }
    let best = 0;
    share.forEach((x, k) => { if (x > share[best]) best = k; });
    const names = heads.map(([l, h]) => `L${l}H${h}`);
    return { expected: names[best], options: names };
  },
};
