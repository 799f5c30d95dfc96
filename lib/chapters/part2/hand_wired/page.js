/* The page twins of the hand-wired chapter: its checks' computations.
 */
import { bestByCosine, varianceShares } from "../../../explorers/js/twins.js";

function componentsFor(rows, share) {
  let sum = 0;
  const shares = varianceShares(rows);
  for (let i = 0; i < shares.length; i++) { sum += shares[i]; if (sum >= share - 1e-12) return i + 1; }
  return shares.length;
}

export const COMPUTE = {
  componentsForShare(a, model) {
    const D = model.cfg.d_model;
    const rows = a.words.map((w) => Array.from(model.w.W_E.subarray(model.vocab.id(w) * D, (model.vocab.id(w) + 1) * D)));
    return { expected: componentsFor(rows, a.share), hints: [["designed", componentsFor(a.designed, a.share)]] };
  },

  analogyLeftIn(a, model) {
    const D = model.cfg.d_model;
    const row = (w) => Array.from(model.w.W_E.subarray(model.vocab.id(w) * D, (model.vocab.id(w) + 1) * D));
    const [x, y, z] = a.inputs;
    const target = row(x).map((v, i) => v - row(y)[i] + row(z)[i]);
    return { expected: bestByCosine(target, a.words, row), options: a.words,
      hints: [["excluded", bestByCosine(target, a.words.filter((w) => !a.inputs.includes(w)), row)]] };
  },
};
