/* The page twins of the results-page chapter: the sampling explorer's view (temperature, top-k,
 * top-p, greedy and a seed over one prompt) and its checks' computations.
 */
import {
  CourseError,
  MIN_TEMPERATURE,
  checkTemperature,
  checkTopK,
  greedy,
  order,
  parseSeed,
  parseTopK,
  parseTopP,
  reshape,
  sample,
  softmax,
  say,
  truncationMask,
} from "../../../explorers/js/readout.js";
import { formatG } from "../../../explorers/js/python.js";
import { tokensOf } from "../../../explorers/js/twins.js";

/** lib.chapters.part3.results_page.explorers.greedy_hint: temperature 0 is the greedy switch. */
function greedyHint(t, isGreedy) {
  if (typeof t === "number" && t >= 0 && t < MIN_TEMPERATURE) {
    const minimum = formatG(MIN_TEMPERATURE);
    throw new CourseError(say("temperature_greedy", { got: formatG(t), minimum,
      switch: say(isGreedy ? "greedy_on" : "greedy_off", { minimum }) }));
  }
}

export const VIEWS = {
  sampling({ model }, v, a) {
    const topK = parseTopK(v.top_k), topP = parseTopP(v.top_p), seed = parseSeed(v.seed);
    greedyHint(v.temperature, v.greedy);
    checkTemperature(v.temperature);             // before the prompt, as sampling_view checks it
    const ids = model.encode(v.prompt);
    const logits = model.promptLogits(ids);
    const base = softmax(logits), heated = softmax(logits, v.temperature);
    const final = reshape(logits, v.temperature, topK, topP);
    const tokens = model.vocab.tokens;
    const rows = order(base).slice(0, a.k).map((i) => ({ token: tokens[i], base: base[i], heated: heated[i], final: final[i] }));
    const chosen = v.greedy ? greedy(logits) : sample(logits, v.temperature, topK, topP, seed);
    return {
      tokens: tokensOf(model, ids), temperature: v.temperature, top_k: checkTopK(topK, tokens.length), top_p: topP,
      greedy: Boolean(v.greedy), seed: String(seed), rows, chosen: tokens[chosen], chosen_prob: final[chosen],
      survivors: final.filter((p) => p > 0).length,
    };
  },
};

export const COMPUTE = {
  survivors(a, model) {
    const probs = softmax(model.promptLogits(model.encode(a.prompt)));
    const count = (mask) => mask.filter(Boolean).length;
    const wholePage = count(truncationMask(probs, null, a.top_p));
    return { expected: count(truncationMask(probs, a.top_k, a.top_p)), hints: [["whole_page", wholePage]],
      fields: { whole_page: wholePage } };
  },

  topProbAt(a, model) {
    const logits = model.promptLogits(model.encode(a.prompt));
    const top = greedy(logits);
    return { expected: softmax(logits, a.temperature)[top],
      hints: [["times", softmax(Float64Array.from(logits, (x) => x * a.temperature))[top]]] };
  },
};
