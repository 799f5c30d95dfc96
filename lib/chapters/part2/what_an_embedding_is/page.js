/* The page twins of the what-an-embedding-is chapter: its checks' computations.
 */
import { bestByCosine, cosine, dot, embeddingRow, norm } from "../../../explorers/js/twins.js";

export const COMPUTE = {
  rowCosine(a, model) {
    const D = model.cfg.d_model, row = (w) => Array.from(model.w.W_E.subarray(model.vocab.id(w) * D, (model.vocab.id(w) + 1) * D));
    const [u, v] = a.pair.map(row);
    return { expected: cosine(u, v), hints: [["dot", dot(u, v)], ["distance", norm(u.map((x, i) => x - v[i]))]] };
  },

  dotDisagreements(a, model) {
    const D = model.cfg.d_model, V = model.vocab.size;
    const rows = Array.from({ length: V }, (_, v) => Array.from(model.w.W_E.subarray(v * D, (v + 1) * D)));
    const nearest = (i, score) => {
      let best = -1, s = -Infinity;
      for (let j = 0; j < V; j++) if (j !== i) { const x = score(rows[i], rows[j]); if (x > s) { best = j; s = x; } }
      return best;
    };
    let n = 0;
    for (let i = 0; i < V; i++) if (nearest(i, cosine) !== nearest(i, dot)) n++;
    const at = a.upper.findIndex((top) => n <= top);
    return { expected: a.ranges[at < 0 ? a.ranges.length - 1 : at], options: a.ranges, hints: [["none", a.ranges[0]]],
      fields: { n, tokens: V } };
  },

  nearestRow(a, models) {
    const [lm, zl] = models;
    // lib.analysis.maps.nearest with k=1: the other rows ranked by cosine, ties in vocabulary order.
    const nearest = (model) => {
      const row = (w) => embeddingRow(model, model.vocab.id(w));
      return bestByCosine(row(a.word), model.vocab.tokens.filter((w) => w !== a.word), row);
    };
    const best = nearest(zl), other = nearest(lm);
    return { expected: best, options: zl.vocab.tokens, fields: { word: a.word },
      hints: [["self", a.word], ...(other !== best ? [["other_model", other]] : [])] };
  },
};
