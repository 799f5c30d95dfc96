/* The page twins of the real-model chapter: SmolLM2's results page, logit lens and attention on the
 * prompts of the menu, from the files the site's build wrote (lib/chapters/part3/real_model/stored.py,
 * `export`): an index (real/smollm2-menu.json) and, per prompt, N.json (the results page in short and
 * the lens) and N.bin (every head's pattern as bytes). The page loads the index and the prompts it
 * shows, each once. The results page is computed here from the summary exactly as `stored.page_view`
 * computes it in Python. The decoding explorer reads real/smollm2-decoding.json (`decoding.export`): each open
 * prompt's five continuations with their measures, as the build computed them (`decoding.view`).
 */
import {
  CourseError, checkTemperature, parseSeed, parseTopK, parseTopP, say, uniform,
} from "../../../explorers/js/readout.js";
import { TOP_P_FLOOR } from "../../../explorers/js/constants.js";

// This file runs inside units.js, which the site's build writes into the explorers' folder (lib.explorers.web):
// the site's stored files are under that folder.
const BASE = new URL("./", import.meta.url);
const INDEX = new Map();
const FILES = new Map();

function fetched(path, how) {
  if (!FILES.has(path)) {
    FILES.set(path, fetch(new URL(path, BASE)).then((r) => {
      if (!r.ok) throw new Error(`${path}: ${r.status}`);
      return how(r);
    }));
  }
  return FILES.get(path);
}

/** One prompt's stored run: {prompt (its index entry), data (summary and lens), bytes(): the patterns}. */
async function run(a, text) {
  if (!INDEX.has(a.data)) INDEX.set(a.data, fetched(`${a.data}.json`, (r) => r.json()));
  const meta = await INDEX.get(a.data);
  const t = String(text);
  const prompt = meta.prompts.find((p) => p.text === t);
  if (!prompt) throw new CourseError(say("not_stored", { n: meta.prompts.length }));
  const folder = a.data.split("/").slice(0, -1).join("/");
  const data = await fetched(`${folder}/${prompt.file}.json`, (r) => r.json());
  return { meta, prompt, data, bytes: () => fetched(`${folder}/${prompt.file}.bin`, (r) => r.arrayBuffer().then((b) => new Uint8Array(b))) };
}

const sum = (xs) => xs.reduce((s, x) => s + x, 0);

/** stored.weights: each kept token's weight and one token's of each bin, the best logit subtracted. */
function weights(s, temperature) {
  const t = checkTemperature(temperature), top = s.logits[0];
  return [s.logits.map((l) => Math.exp((l - top) / t)), s.means.map((m) => Math.exp((m - top) / t))];
}

/** stored.probabilities: each kept token's probability and the rest's total. */
function probabilities(s, temperature = 1) {
  const [w, r] = weights(s, temperature);
  const rest = sum(r.map((x, i) => x * s.counts[i])), z = sum(w) + rest;
  return [w.map((x) => x / z), rest / z];
}

const vocabSize = (s) => s.logits.length + sum(s.counts);

/** stored.reshaped: temperature, top-k, top-p on the shared-out survivors, shared out again. */
function reshaped(s, temperature, topK, topP) {
  const [w, r] = weights(s, temperature);
  const z = sum(w) + sum(r.map((x, i) => x * s.counts[i]));
  const items = w.map((x) => [x / z, 1]).concat(r.map((x, i) => [x / z, s.counts[i]]));
  let left = topK === null ? vocabSize(s) : topK;
  let kept = items.map(([p, n]) => { const take = Math.min(n, left); left -= take; return [p, take]; });
  if (topP !== null && topP < 1) {
    const mass = sum(kept.map(([p, n]) => p * n));
    let before = 0;
    kept = kept.map(([p, n], i) => {
      const q = p / mass;
      if (n === 0 || q === 0) return [p, 0];
      const room = topP - TOP_P_FLOOR - before;
      let take = room <= 0 ? 0 : Math.min(n, Math.ceil(room / q));
      if (i === 0) take = Math.max(take, 1);
      before += q * take;
      return [p, take];
    });
  }
  const mass = sum(kept.map(([p, n]) => p * n)), k = s.logits.length;
  const final = kept.slice(0, k).map(([p, n]) => (p / mass) * n);
  const rest = sum(kept.slice(k).map(([p, n]) => (p / mass) * n));
  return [final, rest, sum(kept.map(([p, n]) => (p > 0 ? n : 0)))];
}

/** stored.roll: the seeded roll walked best first; null when it falls among the rest. */
function roll(final, rest, seed) {
  const target = uniform(seed, 0) * (sum(final) + rest);
  let running = 0;
  for (let i = 0; i < final.length; i++) {
    running += final[i];
    if (running > target) return i;
  }
  return null;
}

const ROWS = 10;

export const VIEWS = {
  async real_page(_, v, a) {
    const topK = parseTopK(v.top_k), topP = parseTopP(v.top_p), seed = parseSeed(v.seed);
    const t = checkTemperature(v.temperature);
    const { prompt, data } = await run(a, v.prompt);
    const s = data.summary, n = vocabSize(s);
    const [base, baseRest] = probabilities(s), [heated, heatedRest] = probabilities(s, t);
    const [final, finalRest, survivors] = reshaped(s, t, topK === null ? null : Math.min(topK, n), topP);
    const pick = roll(final, finalRest, seed);
    return {
      tokens: prompt.tokens, temperature: t, top_k: topK === null ? null : Math.min(topK, n), top_p: topP,
      seed: String(seed),
      rows: s.tokens.slice(0, ROWS).map((token, i) => ({ token, base: base[i], heated: heated[i], final: final[i] })),
      rest: { base: baseRest, heated: heatedRest, final: finalRest, count: n - s.tokens.length },
      survivors, stored: s.tokens.length, chosen: pick === null ? null : s.tokens[pick],
      chosen_prob: pick === null ? finalRest : final[pick],
    };
  },

  async real_lens(_, v, a) {
    const { prompt, data } = await run(a, v.prompt);
    const lens = data.lens, answer = lens[lens.length - 1].top[0][0];
    const onTop = lens.map((s) => s.top[0][0] === answer);
    let first = onTop.length - 1;
    while (first > 0 && onTop[first - 1]) first -= 1;
    return { tokens: prompt.tokens, answer, first,
      stages: lens.map((s) => ({ name: s.name, top: s.top, answer: s.answer })) };
  },

  async real_heads(_, v, a) {
    const r = await run(a, v.prompt);
    const { heads: H, scale } = r.meta, T = r.prompt.tokens.length, layer = Number(v.layer);
    const bytes = await r.bytes();
    const range = (n) => Array.from({ length: n }, (_, i) => i);
    return { tokens: r.prompt.tokens, layer,
      patterns: range(H).map((h) => range(T).map((i) => range(T).map((j) => bytes[((layer * H + h) * T + i) * T + j] / scale))) };
  },
};

/** The decoding explorer's file, loaded once: {methods, prompts: [{text, views: {method: view}}]}. */
function decodings(a) {
  if (!INDEX.has(a.data)) INDEX.set(a.data, fetched(`${a.data}.json`, (r) => r.json()));
  return INDEX.get(a.data);
}

VIEWS.real_decode = async (_, v, a) => {
  const stored = await decodings(a);
  const method = String(v.method);
  if (!stored.methods.includes(method)) {
    throw new CourseError(say("decoding_method", { methods: stored.methods.join(", "), got: method }));
  }
  const prompt = stored.prompts.find((p) => p.text === String(v.prompt));
  if (!prompt) throw new CourseError(say("not_stored", { n: stored.prompts.length }));
  return prompt.views[method];
};

export const COMPUTE = {
  // lib.chapters.part3.real_model.checks.top_prob_cooled: the top line at a temperature, from the stored summary.
  async realTopCooled(a) {
    const { data } = await run(a, a.prompt);
    const at = (t) => probabilities(data.summary, t)[0][0];
    return { expected: at(a.temperature), hints: [["unchanged", at(1)], ["times", at(1 / a.temperature)]] };
  },
};
