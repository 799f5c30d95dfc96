/* The page twins of the bigrams chapter: the bigram explorer's view and its checks' computations.
 */
import { order, softmax } from "../../../explorers/js/readout.js";
import { parsePosition, tokensOf } from "../../../explorers/js/twins.js";

export const VIEWS = {
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
};

export const COMPUTE = {
  twoStepsAhead(a, model) {
    const ids = model.encode(a.prefix), t = model.vocab.id(a.target);
    const first = softmax(model.promptLogits(ids));
    const paths = Array.from(first, (p, x) => p * softmax(model.promptLogits([...ids, x]))[t]);
    let top = 0;
    paths.forEach((p, x) => { if (p > paths[top]) top = x; });
    return { expected: paths.reduce((s, p) => s + p, 0), fields: { first: model.vocab.tokens[top] },
      hints: [["next", first[t]], ["first", paths[top]], ["rules", paths[model.vocab.id(a.rules)]], ["certain", 1]] };
  },

  unseenRange(a, model) {
    const p = softmax(model.promptLogits(model.encode(a.prompt)))[model.vocab.id(a.token)];
    const r = a.ranges, expected = p === 0 ? r[0] : p < 0.001 ? r[1] : p <= 0.1 ? r[2] : r[3];
    return { expected, options: r, hints: [["zero", r[0]]], fields: { p } };
  },
};
