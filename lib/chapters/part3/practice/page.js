/* The page twins of the practice chapter: its checks' computations.
 */
import { whyNotAPrefix } from "../../../explorers/js/game.js";
import { softmax } from "../../../explorers/js/readout.js";
import { entropyBits, promptSigns } from "../../../explorers/js/twins.js";

export const COMPUTE = {
  flattestPage(a, model) {
    const entropy = a.prompts.map((p) => entropyBits(softmax(model.promptLogits(model.encode(p)))));
    const expected = a.prompts[entropy.indexOf(Math.max(...entropy))];
    // The rules' one word after a prompt (computed by the library's rules, a property of the game).
    return { expected, options: a.prompts,
      hints: a.prompts.map((p, i) => [`want${i}`, p]).filter(([key]) => key in a.texts) };
  },

  async steerTo(a, model) {
    // lib.chapters.part3.practice.checks.steer_to
    return { decide(answer) {
      const signs = promptSigns(model, answer.value, whyNotAPrefix);
      if (signs.key) return signs;
      if (signs.why !== null) return { ok: false, key: "forbidden", fields: { why: signs.why } };
      const fields = { ...signs, word: a.word };
      if (signs.top !== a.word || signs.top_prob <= a.threshold) return { ok: false, key: "wrong", fields };
      return { ok: true, key: "right", fields };
    } };
  },
};
