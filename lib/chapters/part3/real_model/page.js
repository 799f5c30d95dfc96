/* The page twins of the real-model chapter: SmolLM2's results page, logit lens and attention on the
 * prompts of the menu, from the files the site's build wrote (lib/chapters/part3/real_model/stored.py,
 * `export`): an index (real/smollm2-menu.json) and, per prompt, N.json (the results page in short and
 * the lens) and N.bin (every head's pattern as bytes). The page loads the index and the prompts it
 * shows, each once. The results page is computed here from the summary exactly as `stored.page_view`
 * computes it in Python. The decoding explorer reads real/smollm2-decoding.json (`decoding.export`): each open
 * prompt's five continuations with their measures, as the build computed them (`decoding.view`).
 *
 * Once the reader loads the real model into the page (`context.real`, lib/explorers/js/smollm2/), any text is
 * run by SmolLM2 itself, in the page's worker: `stored.run`'s twin gives the same summary, lens and patterns the
 * files hold, and the views are computed from them as from a stored prompt; the decoding explorer continues the
 * text with the chapter's settings (`decoding.SETTINGS`) and measures it as `decoding.view` does; the patching
 * explorer patches the residual stream between two texts (`lib.analysis.patching.patch_stream`).
 */
import {
  CourseError, checkTemperature, parseSeed, parseTopK, parseTopP, say, uniform,
} from "../../../explorers/js/readout.js";
import { formatG, pyParseFloat, pyRepr, pyStrip } from "../../../explorers/js/python.js";
import { openingView } from "../../../explorers/js/real.js";
import { PATCH_SMALL_MOVE, TOP_P_FLOOR } from "../../../explorers/js/constants.js";

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

/** One prompt's run: {prompt (its tokens), data (summary and lens), meta (heads, scale), bytes(): the patterns}.
 *  With the real model loaded, SmolLM2 runs the text in the page; else the stored run of a prompt of the menu.
 *  Null: the reader moved on before the model answered. */
async function run(a, text, context = {}) {
  if (context.real) {
    const r = await context.real.run("run", { text: String(text) });
    if (r === null) return null;
    return { meta: { heads: r.heads, scale: 255 }, prompt: { tokens: r.tokens }, data: { summary: r.summary, lens: r.lens },
      bytes: async () => r.patterns };
  }
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

/** A min-p typed in a box (lib.explorers.boxes.parse_min_p): null (off) or a number above 0 and at most 1. */
function parseMinP(text) {
  const s = pyStrip(String(text));
  if (["", "off", "none"].includes(s.toLowerCase())) return null;
  const value = pyParseFloat(s);
  if (value === null) throw new CourseError(say("min_p", { got: pyRepr(s) }));
  if (!(Number.isFinite(value) && value > 0 && value <= 1)) throw new CourseError(say("min_p", { got: formatG(value) }));
  return value;
}

/** stored.reshaped: min-p, then temperature, top-k, top-p on the shared-out survivors, shared out again. */
function reshaped(s, temperature, topK, topP, minP = null) {
  const [w, r] = weights(s, temperature);
  const z = sum(w) + sum(r.map((x, i) => x * s.counts[i]));
  let items = w.map((x) => [x / z, 1]).concat(r.map((x, i) => [x / z, s.counts[i]]));
  if (minP !== null) items = items.map(([p, n], i) => [p, (i < w.length ? w[i] : r[i - w.length]) >= minP * w[0] ? n : 0]);
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
  async real_page(context, v, a) {
    const topK = parseTopK(v.top_k), topP = parseTopP(v.top_p), seed = parseSeed(v.seed);
    const minP = parseMinP(v.min_p === undefined ? "" : v.min_p);
    const t = checkTemperature(v.temperature);
    const got = await run(a, v.prompt, context);
    if (got === null) return null;
    const { prompt, data } = got;
    const s = data.summary, n = vocabSize(s);
    const [base, baseRest] = probabilities(s), [heated, heatedRest] = probabilities(s, t);
    const [final, finalRest, survivors] = reshaped(s, t, topK === null ? null : Math.min(topK, n), topP, minP);
    const pick = roll(final, finalRest, seed);
    return {
      tokens: prompt.tokens, temperature: t, top_k: topK === null ? null : Math.min(topK, n), top_p: topP, min_p: minP,
      seed: String(seed),
      rows: s.tokens.slice(0, ROWS).map((token, i) => ({ token, base: base[i], heated: heated[i], final: final[i] })),
      rest: { base: baseRest, heated: heatedRest, final: finalRest, count: n - s.tokens.length },
      survivors, stored: s.tokens.length, chosen: pick === null ? null : s.tokens[pick],
      chosen_prob: pick === null ? finalRest : final[pick],
    };
  },

  async real_lens(context, v, a) {
    const got = await run(a, v.prompt, context);
    if (got === null) return null;
    const { prompt, data } = got;
    const lens = data.lens, answer = lens[lens.length - 1].top[0][0];
    const onTop = lens.map((s) => s.top[0][0] === answer);
    let first = onTop.length - 1;
    while (first > 0 && onTop[first - 1]) first -= 1;
    return { tokens: prompt.tokens, answer, first,
      stages: lens.map((s) => ({ name: s.name, top: s.top, answer: s.answer })) };
  },

  async real_heads(context, v, a) {
    const r = await run(a, v.prompt, context);
    if (r === null) return null;
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

// ----------------------------------------------------------------------------- decoding.view's measures
/** decoding.repeated_share: the share of the continuation's n-grams that occurred earlier in it. */
function repeatedShare(tokens, n = 4) {
  const seen = new Set();
  let again = 0, grams = 0;
  for (let i = 0; i + n <= tokens.length; i++) {
    const g = tokens.slice(i, i + n).join(",");
    again += seen.has(g) ? 1 : 0;
    seen.add(g);
    grams += 1;
  }
  return grams ? again / grams : 0;
}

/** decoding.longest_repeat: the longest stretch that occurs twice (the two may overlap). */
function longestRepeat(tokens) {
  let best = 0;
  for (let shift = 1; shift < tokens.length; shift++) {
    let run = 0;
    for (let i = shift; i < tokens.length; i++) {
      run = tokens[i] === tokens[i - shift] ? run + 1 : 0;
      best = Math.max(best, run);
    }
  }
  return best;
}

/** lib.model.decoding.find_loop: the period of the stretch the text ends in, repeated back to back at least 3 times
 *  over at least 6 tokens (the earliest start, then the shortest period), or null. */
function findLoop(tokens, minRepeats = 3, minTokens = 6) {
  const n = tokens.length;
  let best = null;
  for (let p = 1; p <= Math.floor(n / minRepeats); p++) {
    let i = n - 1;
    while (i - p >= 0 && tokens[i] === tokens[i - p]) i -= 1;
    const start = i - p >= 0 ? i + 1 - p : 0, length = n - start;
    if (length >= minRepeats * p && length >= minTokens && (best === null || start < best.start)) best = { start, period: p };
  }
  return best;
}

const round4 = (x) => Math.round(x * 1e4) / 1e4;

/** decoding.view of one continuation (the page's run of it). */
function decodedView(row, promptTokens, method, a) {
  const { tokens, logprobs, pieces } = row;
  const loop = findLoop(tokens);
  const mean = logprobs.length ? logprobs.reduce((x, y) => x + y, 0) / logprobs.length : 0;
  return { tokens: promptTokens, method, settings: a.shown[method], pieces, probs: logprobs.map((x) => round4(Math.exp(x))),
    length: tokens.length, most: method === "sampled" || method === "beam" ? a.new : a.long,
    stopped: pieces.length > 0 && pieces[pieces.length - 1] === a.stop,
    longest_repeat: longestRepeat(tokens), rep4: round4(repeatedShare(tokens)),
    bits: tokens.length ? round4(-mean / Math.log(2)) : 0, logprob: round4(logprobs.reduce((x, y) => x + y, 0)),
    loop: loop === null ? null : loop.period };
}

VIEWS.real_decode = async (context, v, a) => {
  const method = String(v.method);
  const methods = Object.keys(a.shown);
  if (!methods.includes(method)) {
    throw new CourseError(say("decoding_method", { methods: methods.join(", "), got: method }));
  }
  if (context.real) {
    // decoding.run for one text and one method: the chapter's settings, LONG new tokens (NEW for the sample at
    // temperature 1 and for beam search), stopping at the end of a turn.
    const knobs = a.settings[method] || {};
    const args = method === "beam" ? { text: String(v.prompt), maxNew: a.new, beams: a.beams }
      : { text: String(v.prompt), knobs, maxNew: knobs.max_new_tokens || a.long };
    let promptTokens = null;
    const row = await context.real.run("decode", args, (partial) => {
      if (!partial.tokens) return;                     // beam search says only which step it has done
      promptTokens = partial.prompt;
      if (context.progress) context.progress(decodedView(partial, partial.prompt, method, a));
    });
    if (row === null) return null;
    return decodedView(row, row.prompt || promptTokens, method, a);
  }
  const stored = await decodings(a);
  const prompt = stored.prompts.find((p) => p.text === String(v.prompt));
  if (!prompt) throw new CourseError(say("not_stored", { n: stored.prompts.length }));
  return prompt.views[method];
};

// ----------------------------------------------------------------------------- activation patching, two texts

/** {moved:+.3f}, as Python writes it. */
const signed3 = (x) => `${x < 0 || Object.is(x, -0) ? "-" : "+"}${Math.abs(x).toFixed(3)}`;

/** explorers.patch_view from the page's run (worker.js `patch`): rows not finished yet are null (drawn blank). */
function patchView(r, direction, done = true) {
  const L = r.grid.length - 1;
  const warnings = [];
  if (r.tops && r.tops[0] === r.tops[1]) warnings.push(say("patch_same_top", { token: r.tops[0] }));
  const moved = r.cleanDiff - r.corruptedDiff;
  if (Math.abs(moved) < PATCH_SMALL_MOVE) warnings.push(say("patch_small_move", { moved: signed3(moved), least: formatG(PATCH_SMALL_MOVE) }));
  return { clean: r.clean, corrupted: r.corrupted, target: r.target, against: r.against, clean_diff: r.cleanDiff,
    corrupted_diff: r.corruptedDiff, direction, first: r.firstDiffer,
    stages: [...Array(L).keys()].map((i) => `before block ${i}`).concat([`after block ${L - 1}`]),
    grid: r.grid.map((row, s) => (done || s >= r.stage ? row : null)), warnings };
}

VIEWS.real_patch = async (context, v, a) => {
  const direction = String(v.direction);
  if (!context.real) {
    // The site holds the opening pair's picture (the build drew it): other texts need the model.
    return openingView(context, v);
  }
  const r = await context.real.run("patch", { clean: String(v.clean), corrupted: String(v.corrupted), direction }, (partial) => {
    if (context.progress && partial.grid) context.progress(patchView(partial, direction, false));
  });
  if (r === null) return null;
  if (r.grid === null) {
    if (r.target === r.against) {
      throw new CourseError(say("patch_same_token", { said: "the clean run's top token and the corrupted run's are both", token: pyRepr(r.target) }));
    }
    throw new CourseError(say("patch_no_change", { target: r.target, against: r.against, diff: formatG(r.cleanDiff) }));
  }
  return patchView(r, direction);
};

export const COMPUTE = {
  // checks.lens_from: on the learner's text, the block after which the lens keeps the final answer on top.
  async realLensFrom(a, _, real) {
    const r = await real.run("run", { text: a.text });
    const lens = r.lens, answer = lens[lens.length - 1].top[0][0];
    let first = lens.length - 1;
    while (first > 0 && lens[first - 1].top[0][0] === answer) first -= 1;
    return { expected: first - 1, hints: [], fields: { answer: pyRepr(answer), first: first - 1 } };
  },
  // lib.chapters.part3.real_model.checks.top_prob_cooled: the top line at a temperature, from the stored summary.
  async realTopCooled(a) {
    const { data } = await run(a, a.prompt);
    const at = (t) => probabilities(data.summary, t)[0][0];
    return { expected: at(a.temperature), hints: [["unchanged", at(1)], ["times", at(1 / a.temperature)]] };
  },
};
