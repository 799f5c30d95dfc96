/* The page twins of the hallucination chapter: its checks' computations.
 */
import { whyNotAPrefix } from "../../../explorers/js/game.js";
import { softmax } from "../../../explorers/js/readout.js";
import { entropyBits, promptSigns } from "../../../explorers/js/twins.js";

export const COMPUTE = {
  pageEntropy(a, model) {
    const expected = entropyBits(softmax(model.promptLogits(model.encode(a.prompt))));
    return { expected, hints: [["nats", expected * Math.log(2)]] };
  },

  surePageEntropy(a, model) {
    const rest = model.vocab.size - 1;
    const bits = (p) => -p * Math.log2(p);
    const expected = bits(a.top) + rest * bits((1 - a.top) / rest);
    return { expected, fields: { rest },
      hints: [["nats", expected * Math.log(2)], ["top_only", bits(a.top)], ["two_words", bits(a.top) + bits(1 - a.top)]] };
  },

  async confidentImpossible(a, model) {
    // lib.chapters.part3.hallucination.checks.confident_impossible
    return { decide(answer) {
      const signs = promptSigns(model, answer.value, whyNotAPrefix);
      if (signs.key) return signs;
      if (signs.why === null) return { ok: false, key: "possible" };
      if (signs.top_prob <= a.threshold) return { ok: false, key: "unsure", fields: { top_prob: signs.top_prob, threshold: a.threshold } };
      return { ok: true, key: "right", fields: signs };
    } };
  },
};
