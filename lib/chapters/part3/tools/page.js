/* The page twins of the tools chapter: its checks' computations.
 */
import { CourseError, greedy } from "../../../explorers/js/readout.js";

export const COMPUTE = {
  wordAfterTool(a, model) {
    // lib.chapters.part3.tools.checks: lib.content.conveyor.run_belt from <BOS>, greedy, a tool stuck on one word: after
    // the model's first trigger the tool writes its word, and the model's next word is the answer.
    const ids = model.encode("<BOS>"), trigger = model.vocab.id(a.trigger), eos = model.vocab.id("<EOS>");
    let expected = null;
    for (let toolAt = -1; ids.length < model.cfg.n_ctx;) {
      const next = greedy(model.promptLogits(ids));
      if (toolAt >= 0) { expected = model.vocab.tokens[next]; break; }
      ids.push(next);
      if (next === eos) break;
      if (next === trigger && ids.length < model.cfg.n_ctx) { ids.push(model.vocab.id(a.tool_word)); toolAt = ids.length - 1; }
    }
    if (expected === null) throw new CourseError("the belt ended before the tool wrote");
    return { expected, options: model.vocab.tokens,
      hints: [["tool", a.tool_word], ...a.epithets.map((e) => [`epithet_${e}`, e])] };
  },
};
