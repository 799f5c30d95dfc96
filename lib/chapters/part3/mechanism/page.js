/* The page twins of the mechanism chapter: its checks' computations.
 */
import { greedy } from "../../../explorers/js/readout.js";
import { cosine } from "../../../explorers/js/twins.js";

export const COMPUTE = {
  logitOf(a, model) {
    const i = model.vocab.id(a.word);
    const logit = model.promptLogits(model.encode(a.prompt))[i];
    return { expected: logit, hints: [["no_bias", logit - model.w.b_U[i]]] };
  },

  stretchedLogit(a, model) {
    const i = model.vocab.id(a.word), bias = model.w.b_U[i];
    const logit = model.promptLogits(model.encode(a.prompt))[i];
    return { expected: a.scale * (logit - bias) + bias,
      hints: [["bias_too", a.scale * logit], ["unstretched", logit], ["no_bias", a.scale * (logit - bias)]] };
  },

  cosineWinner(a, model) {
    const ids = model.encode(a.prompt);
    const run = model.run(ids, {}, true);
    const names = model.stageNames();
    const q = run.stages[names[names.length - 1]][ids.length - 1];
    const D = model.cfg.d_model, V = model.cfg.vocab_size;
    let best = 0, score = -Infinity;
    for (let v = 0; v < V; v++) {
      const col = Array.from({ length: D }, (_, d) => model.W_U[d * V + v]);
      const s = cosine(Array.from(q), col);
      if (s > score) { best = v; score = s; }
    }
    return { expected: model.vocab.tokens[best], options: model.vocab.tokens,
      hints: [["by_dot", model.vocab.tokens[greedy(run.logitsAt(ids.length - 1))]]] };
  },
};
