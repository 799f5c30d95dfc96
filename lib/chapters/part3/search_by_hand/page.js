/* The page twins of the search-by-hand chapter: the temperature explorer's view and its
 * checks' computations.
 */
import { formatG } from "../../../explorers/js/python.js";
import { MIN_TEMPERATURE, order, reshape, softmax } from "../../../explorers/js/readout.js";
import { asNumber, wholeString } from "../../../explorers/js/rules.js";
import { dot, tokensOf } from "../../../explorers/js/twins.js";

const best = (probs, k, tokens) => order(probs).filter((i) => probs[i] > 0).slice(0, k).map((i) => [tokens[i], probs[i]]);

export const VIEWS = {
  temperature({ model }, v, a) {
    const ids = model.encode(v.prompt);
    const probs = reshape(model.promptLogits(ids), v.temperature);
    return { tokens: tokensOf(model, ids), temperature: v.temperature, page: best(probs, a.k, model.vocab.tokens) };
  },
};

export const COMPUTE = {
  searchScore(a) {
    return { expected: dot(a.query, a.dictionary[a.word]), hints: [["chapter", dot(a.chapter_query, a.dictionary[a.word])]] };
  },

  searchWinner(a) {
    const words = Object.keys(a.dictionary);
    const best = (q) => words.reduce((b, w) => (dot(q, a.dictionary[w]) > dot(q, a.dictionary[b]) ? w : b), words[0]);
    const expected = best(a.query), before = best(a.chapter_query);
    return { expected, options: words, hints: before !== expected ? [["before", before]] : [] };
  },

  smallestScale(a) {
    // lib.chapters.part3.search_by_hand.checks.smallest_scale: the chapter's query times k, searched as by search().
    const words = Object.keys(a.dictionary), t = words.indexOf(a.word);
    const p = (k) => softmax(words.map((w) => dot(a.chapter_query.map((x) => x * k), a.dictionary[w])))[t];
    return { decide(answer) {
      const value = asNumber(answer);
      if (value === null || value !== Math.trunc(value) || value < 1) return { ok: false, key: "invalid" };
      const fields = { k: wholeString(value), word: a.word, target: a.target };
      if (p(value) < a.target) return { ok: false, key: "low", fields };
      if (value > 1 && p(value - 1) >= a.target) return { ok: false, key: "high", fields };
      return { ok: true, key: "right", fields };
    } };
  },

  temperatureForHalf(a, model) {
    // lib.chapters.part3.search_by_hand.checks.temperature_for_half: the model's page after the prompt at the
    // temperature (model_search's scores are the logits).
    const logits = model.promptLogits(model.encode(a.prompt));
    return { decide(answer) {
      const value = asNumber(answer);
      if (value === null || value < MIN_TEMPERATURE) return { ok: false, key: "invalid", fields: { minimum: formatG(MIN_TEMPERATURE) } };
      const top = Math.max(...softmax(logits, value)), fields = { value, top };
      if (Math.abs(top - 0.5) <= a.tol) return { ok: true, key: "right", fields };
      return { ok: false, key: "wrong", fields: { ...fields, direction: top > 0.5 ? "raise" : "lower" } };
    } };
  },
};
