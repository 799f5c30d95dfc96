/* What the page asks of SmolLM2 once it is loaded: each operation a twin of the library's, on the model in
 * the page (model.js). They run in the page's Web Worker (worker.js), and in Node for the tests, which hold
 * each one to the library (tests/explorers/test_smollm2.py):
 *
 *   runText     lib/chapters/part3/real_model/stored.py `run`: the next-token page in short (the best 100
 *               logits and a histogram of the rest), the logit lens after every block, every head's pattern
 *   decodeText  lib/chapters/part3/real_model/decoding.py `run` for one text and one method (lib.model.decoding:
 *               greedy, a repetition penalty, seeded sampling with min-p, beam search)
 *   patchStream lib/analysis/patching.py `patch_stream`: the residual stream patched at every stage and position
 *   ablate      lib/chapters/part1/induction/smol.py `run`: a text (repeated or not), heads switched off
 *   rows        lib/chapters/part2/real_language/smol_map.py `rows_view`: words' rows, their neighbours
 *
 * A text is checked as the library checks it (`check`): not empty, at most `maxTokens` tokens, every character
 * one the vocabulary can write.
 */
import { PATCH_MIN_CHANGE as MIN_CHANGE } from "../constants.js";
import { greedy, inverseCdf, reshape, say, softmax, uniform } from "../readout.js";
import { pyRepr } from "../python.js";

// The sizes the library keeps (stored.py): the best logits kept exactly, the rest's bins, the lens's tokens.
export const TOP = 100, BIN = 0.05, LENS_TOP = 3, SCALE = 255;

export class TextError extends Error {}

/** The ids of a text, or a TextError whose message a reader can act on, the library's (lib.model.smollm2's
 *  SmolLM2.encode, lib.model.bytebpe's `encode` and `unwritable`): empty, half of a surrogate pair alone, a
 *  character the vocabulary cannot write, or (the
 *  page's own limit) more than `maxTokens` tokens. */
export function check(model, text, maxTokens, what = "the text") {
  if (typeof text !== "string" || text === "") throw new TextError(say("text_empty"));
  const hex = (n, w) => n.toString(16).toUpperCase().padStart(w, "0");
  // half of a surrogate pair alone (a browser's TextEncoder would quietly write U+FFFD in its place)
  const lone = text.match(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  if (lone) throw new TextError(say("text_surrogate", { code: `U+${hex(lone[0].charCodeAt(0), 4)}` }));
  const { ids, missing } = model.tokenizer.encode(text);
  if (ids === null) {
    const bad = model.tokenizer.unwritable(text);
    if (!bad) throw new TextError(`the piece ${JSON.stringify(missing)} is not in the vocabulary: the merges and the vocabulary do not fit together`);
    throw new TextError(say("text_unwritable", { char: pyRepr(bad.char), code: `U+${hex(bad.char.codePointAt(0), 4)}`, byte: `0x${hex(bad.byte, 2)}` }));
  }
  if (ids.length > maxTokens) {
    throw new TextError(say("page_text_long", { what, n: ids.length, most: maxTokens }));
  }
  return ids;
}

/** Round half to even at 6 decimals, as Python's round(x, 6) on the same double (near enough: a tie is rare). */
const round6 = (x) => Math.round(x * 1e6) / 1e6;

/** stored.summarize: the best `top` logits (float32 values, best first, ties by id) and the rest as bins
 *  `width` wide counted down from the last kept logit, each its count and mean (rounded to 1e-6). */
export function summarize(logits, show, top = TOP, width = BIN) {
  const n = logits.length;
  const idx = Array.from({ length: n }, (_, i) => i);
  idx.sort((a, b) => (logits[b] - logits[a]) || (a - b));
  const best = idx.slice(0, top), lastKept = logits[best[best.length - 1]];
  const counts = [], sums = [];
  for (let r = top; r < n; r++) {
    const x = logits[idx[r]];
    const b = Math.floor((lastKept - x) / width);
    while (counts.length <= b) { counts.push(0); sums.push(0); }
    counts[b] += 1;
    sums[b] += x;
  }
  const means = [], kept = [];
  counts.forEach((c, b) => { if (c > 0) { means.push(round6(sums[b] / c)); kept.push(c); } });
  return { tokens: best.map((i) => show(i)), logits: best.map((i) => logits[i]), means, counts: kept, ids: best };
}

/** log(sum(exp(x))) of one row, in doubles. */
function logSumExp(x) {
  let max = -Infinity;
  for (const v of x) if (v > max) max = v;
  let s = 0;
  for (const v of x) s += Math.exp(v - max);
  return max + Math.log(s);
}

/** The `k` best ids of a row (ties: the lower id first). */
function topIds(x, k) {
  const best = [];
  for (let i = 0; i < x.length; i++) {
    if (best.length < k || x[i] > x[best[best.length - 1]]) {
      best.push(i);
      best.sort((a, b) => (x[b] - x[a]) || (a - b));
      if (best.length > k) best.pop();
    }
  }
  return best;
}

/** stored.run on one text: {ids, tokens, summary, lens: [{name, top: [[token, p], ...], answer}], patterns
 *  (Uint8Array [layer, head, query, key] as round(255 p)), logits (the last position's, Float32Array)}. */
export function runText(model, ids) {
  const { L, H, vocab, d } = model.cfg;
  const T = ids.length;
  const cache = model.newCache(T);
  const want = (name) => name.endsWith(".attn.pattern") || name === "embed" || name.endsWith(".resid_post");
  const { logits, kept } = model.forward(ids, cache, { keep: want });
  const show = (i) => model.tokenizer.show(i);
  const summary = summarize(logits, show);
  // The lens: the stream after the embedding and blocks 0 to L-2, read out; after the last block, the logits.
  const stream = new Float32Array(L * d);
  const lastRow = (a) => a.subarray((T - 1) * d, T * d);
  stream.set(lastRow(kept.embed), 0);
  for (let l = 0; l < L - 1; l++) stream.set(lastRow(kept[`blocks.${l}.resid_post`]), (l + 1) * d);
  const read = model.readOut(stream, [...Array(L).keys()]);
  const answer = topIds(logits, 1)[0];
  const lens = [];
  for (let s = 0; s <= L; s++) {
    const row = s < L ? read.subarray(s * vocab, (s + 1) * vocab) : logits;
    const z = logSumExp(row);
    lens.push({ name: s === 0 ? "embedding" : `block ${s - 1}`,
      top: topIds(row, LENS_TOP).map((i) => [show(i), Math.exp(row[i] - z)]), answer: Math.exp(row[answer] - z) });
  }
  const patterns = new Uint8Array(L * H * T * T);
  for (let l = 0; l < L; l++) {
    const p = kept[`blocks.${l}.attn.pattern`];
    for (let i = 0; i < H * T * T; i++) {
      // numpy's rint: half to even
      const x = p[i] * SCALE, f = Math.floor(x), r = x - f;
      const v = r > 0.5 ? f + 1 : r < 0.5 ? f : (f % 2 === 0 ? f : f + 1);
      patterns[l * H * T * T + i] = Math.min(SCALE, Math.max(0, v));
    }
  }
  return { ids, tokens: ids.map(show), summary, lens, patterns, logits };
}

// ----------------------------------------------------------------------------- decoding (lib.model.decoding)
export const BANNED = -1e30;

/** The processors of the knobs, in the library's order: the repetition penalty, then min-p at the temperature. */
function processed(logits, tokens, { penalty = null, minP = null, temperature = 1 }) {
  const out = Float64Array.from(logits);
  if (penalty !== null) {
    for (const t of new Set(tokens)) out[t] = out[t] > 0 ? out[t] / penalty : out[t] * penalty;
  }
  if (minP !== null) {
    let max = -Infinity;
    for (const v of out) if (v > max) max = v;
    const cut = temperature * Math.log(minP);
    for (let i = 0; i < out.length; i++) if (out[i] < max + cut) out[i] = BANNED;
  }
  return out;
}

function logSoftmax(logits) {
  const z = logSumExp(logits);
  return Float64Array.from(logits, (x) => x - z);
}

/** Run a step-by-step operation (a generator) to its end and return its result (Node's tests; the worker
 *  drives the same generators one step at a time, so that a reader's next move can stop them). */
export function finish(steps) {
  let r = steps.next();
  while (!r.done) r = steps.next();
  return r.value;
}

/** One text continued by greedy or seeded sampling (lib.model.decoding.decode, one row): the new ids and
 *  the log-probability the model gave each (temperature 1, before any processor). A generator that yields the
 *  continuation so far after each token. */
export function* decodeSteps(model, prompt, maxNew, knobs, stop = new Set()) {
  const { doSample = false, temperature = 1, seed = 0n, topK = null, topP = null } = knobs;
  const room = Math.min(maxNew, model.maxContext - prompt.length);
  const cache = model.newCache(prompt.length + Math.max(room, 0));
  let { logits } = model.forward(prompt, cache);
  const tokens = [...prompt], out = { tokens: [], logprobs: [] };
  let n = 0;
  while (out.tokens.length < room) {
    const own = logSoftmax(logits);
    const last = processed(logits, tokens, knobs);
    const t = doSample ? inverseCdf(reshape(last, temperature, topK, topP), uniform(seed, n++)) : greedy(last);
    out.tokens.push(t);
    out.logprobs.push(own[t]);
    tokens.push(t);
    if (stop.has(t) || out.tokens.length >= room) break;
    yield out;
    ({ logits } = model.forward([t], cache));
  }
  return out;
}

export const decodeOne = (...args) => finish(decodeSteps(...args));

/** lib.model.decoding.beam_search for one prompt: the `beams` best continuations, best first (a generator
 *  that yields the step it has done). */
export function* beamSteps(model, prompt, maxNew, beams, stop = new Set(), lengthPenalty = 0) {
  const vocab = model.cfg.vocab;
  maxNew = Math.min(maxNew, model.maxContext - prompt.length);
  const first = model.newCache(prompt.length + maxNew);
  const start = model.forward(prompt, first).logits;
  // Each beam: its new tokens, its sum, its cache and its next logits. At first one beam; the others impossible.
  let live = [];
  for (let b = 0; b < beams; b++) live.push({ seq: [], score: b === 0 ? 0 : -Infinity, cache: first, logits: start });
  const finished = [];
  for (let step = 0; step < maxNew; step++) {
    const totals = [];
    live.forEach((beam, b) => {
      if (beam.score === -Infinity) return;
      const lp = logSoftmax(beam.logits);
      for (let t = 0; t < vocab; t++) totals.push([beam.score + lp[t], b * vocab + t]);
    });
    // torch.topk(total, 2 * beams) over [beam, token] flattened: ties by the lower flat index.
    totals.sort((x, y) => (y[0] - x[0]) || (x[1] - y[1]));
    const kept = [];
    for (const [score, flat] of totals.slice(0, 2 * beams)) {
      const b = Math.floor(flat / vocab), t = flat % vocab;
      const seq = [...live[b].seq, t];
      if (stop.has(t)) {
        if (finished.length < beams) finished.push({ seq, score, finished: true });
        continue;
      }
      kept.push({ from: b, t, seq, score });
      if (kept.length === beams) break;
    }
    while (kept.length < beams) kept.push(kept.length ? { ...kept[0], score: -Infinity } : { from: 0, t: 0, seq: [0], score: -Infinity });
    if (step === maxNew - 1 || finished.length >= beams) {
      live = kept.map((k) => ({ seq: k.seq, score: k.score }));
      break;
    }
    // Each kept beam extends a copy of its parent's cache (a beam kept twice gets two copies).
    live = kept.map((k) => {
      if (k.score === -Infinity) return { seq: k.seq, score: -Infinity, cache: null, logits: null };
      const parent = live[k.from];
      const cache = model.copyCache(parent.cache);
      const logits = model.forward([k.t], cache).logits;
      return { seq: k.seq, score: k.score, cache, logits };
    });
    yield step;
  }
  const every = finished.concat(live.filter((b) => b.score > -Infinity).map((b) => ({ seq: b.seq, score: b.score, finished: false })));
  const rank = (b) => b.score / Math.max(1, b.seq.length) ** lengthPenalty;
  return every.map((b, i) => [b, i]).sort((x, y) => (rank(y[0]) - rank(x[0])) || (x[1] - y[1])).slice(0, beams).map(([b]) => b);
}

export const beamSearch = (...args) => finish(beamSteps(...args));

/** lib.model.decoding.token_logprobs: each token's log-probability after the prompt and the tokens before it. */
export function tokenLogprobs(model, prompt, continuation) {
  const ids = [...prompt, ...continuation];
  const cache = model.newCache(ids.length);
  const vocab = model.cfg.vocab;
  const { logits } = model.forward(ids, cache, { logits: "all" });
  return continuation.map((t, i) => {
    const row = logits.subarray((prompt.length - 1 + i) * vocab, (prompt.length + i) * vocab);
    return row[t] - logSumExp(row);
  });
}

// ----------------------------------------------------------------------------- patching (lib.analysis.patching)

/** The residual stream patched at every stage (before each block, and after the last) and position, one at a
 *  time, from one run into the other, and the fraction of the logit difference (target minus rival at the
 *  last position) each moves (lib.analysis.patching.patch_stream): `denoise` patches the clean run's stream
 *  into the corrupted run, `noise` the corrupted run's into the clean run. The stages are computed from the
 *  last to the first (a late stage costs few blocks); a generator that yields the result so far as each stage
 *  is finished (the page draws the grid as it fills). A patch at stage s and position p starts from
 *  the base run's keys and values before p and runs blocks s onwards for positions p onwards: what comes
 *  before is the base run's. Positions before the first where the two texts differ hold the same stream in
 *  both runs: a patch there changes nothing, and is not run. */
export function* patchSteps(model, clean, corrupted, target, against, direction = "denoise") {
  const { L, d } = model.cfg;
  const T = clean.length;
  const keep = (name) => name.endsWith(".resid_pre") || name === `blocks.${L - 1}.resid_post`;
  const cleanCache = model.newCache(T), badCache = model.newCache(T);
  const a = model.forward(clean, cleanCache, { keep });
  const b = model.forward(corrupted, badCache, { keep });
  // By default the target is the clean run's top token and the rival the corrupted run's (as the library's).
  if (target === null) target = topIds(a.logits, 1)[0];
  if (against === null) against = topIds(b.logits, 1)[0];
  const diff = (logits) => logits[target] - logits[against];
  const cleanDiff = diff(a.logits), corruptedDiff = diff(b.logits);
  const [base, source, baseCache] = direction === "denoise" ? [b, a, badCache] : [a, b, cleanCache];
  let firstDiffer = 0;
  while (firstDiffer < T && clean[firstDiffer] === corrupted[firstDiffer]) firstDiffer++;
  const fraction = (x) => (direction === "denoise" ? (x - corruptedDiff) / (cleanDiff - corruptedDiff)
    : (cleanDiff - x) / (cleanDiff - corruptedDiff));
  if (target === against || !(Math.abs(cleanDiff - corruptedDiff) > MIN_CHANGE)) {
    return { grid: null, target, against, cleanDiff, corruptedDiff, firstDiffer };    // the view says why
  }
  const unchanged = fraction(diff(base.logits));
  const grid = Array.from({ length: L + 1 }, () => new Array(T).fill(unchanged));
  const done = { grid, target, against, cleanDiff, corruptedDiff, firstDiffer, cleanTop: topIds(a.logits, 1)[0], corruptedTop: topIds(b.logits, 1)[0] };
  for (let s = L; s >= 0; s--) {
    for (let p = firstDiffer; p < T; p++) {
      let logits;
      if (s === L) {
        // after the last block only the last position's read-out matters
        if (p !== T - 1) continue;
        logits = model.readOut(source.kept[`blocks.${L - 1}.resid_post`], [T - 1]);
      } else {
        const cache = model.copyCache(baseCache, p, T);
        const stream = base.kept[`blocks.${s}.resid_pre`].slice(p * d, T * d);
        stream.set(source.kept[`blocks.${s}.resid_pre`].subarray(p * d, (p + 1) * d), 0);
        logits = model.forward(new Array(T - p).fill(0), cache, { from: s, stream }).logits;
      }
      grid[s][p] = fraction(diff(logits));
    }
    if (s > 0) yield { ...done, stage: s };
  }
  return done;
}

export const patchStream = (...args) => finish(patchSteps(...args));

export { softmax };

// ----------------------------------------------------------------------------- induction (lib/chapters/part1/induction/smol.py)
export const FORMED = 0.5, FORMED_PREVIOUS = 0.3;

/** smol.draw: k heads drawn from `pool` without repeats, one seeded roll (SplitMix64) each. */
export function drawHeads(k, pool, seed = 0n) {
  const left = [...pool], out = [];
  for (let n = 0; n < Math.min(k, pool.length); n++) out.push(left.splice(Math.floor(uniform(seed, n) * left.length), 1)[0]);
  return out.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/** smol.run's numbers: the sequence (the text's ids, twice if `repeat`), every head's scores, the chosen head's
 *  pattern, each position's probability of the next token with the group of heads switched off and without,
 *  and the second copy's figures. `group` as in smol.GROUPS. A reader's mistake comes back as {error: key}. */
export function induction(model, textIds, repeat, group, kind, layer, head) {
  const { L, H, dh, vocab } = model.cfg;
  const ids = repeat ? [...textIds, ...textIds] : [...textIds];
  const T = ids.length, period = repeat ? T / 2 : null;
  if (T < 2) return { error: "smol_text_short" };
  const want = (name) => name.endsWith(".attn.pattern") || name.endsWith(".attn.z");
  const clean = model.forward(ids, model.newCache(T), { keep: want, logits: "all" });
  const pat = (l) => clean.kept[`blocks.${l}.attn.pattern`];           // [H, T, T]
  const at = (p, h, q, k) => p[(h * T + q) * T + k];
  const prev = [], ind = repeat ? [] : null;
  for (let l = 0; l < L; l++) {
    const p = pat(l), pr = [], ir = [];
    for (let h = 0; h < H; h++) {
      let s = 0;
      for (let q = 1; q < T; q++) s += at(p, h, q, q - 1);
      pr.push(s / (T - 1));
      if (repeat) {
        let t = 0;
        for (let q = period; q < T; q++) t += at(p, h, q, q - period + 1);
        ir.push(t / period);
      }
    }
    prev.push(pr);
    if (repeat) ind.push(ir);
  }
  const every = [];
  for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) every.push([l, h]);
  let off;
  if (group === "none") off = [];
  else if (group === "head") off = [[layer, head]];
  else if (group === "layer") off = [...Array(H).keys()].map((h) => [layer, h]);
  else if (group === "previous") off = every.filter(([l, h]) => prev[l][h] >= FORMED_PREVIOUS);
  else {
    if (!repeat) return { error: "smol_induction_twice" };
    const found = every.filter(([l, h]) => ind[l][h] >= FORMED);
    off = group === "induction" ? found : drawHeads(found.length, every.filter(([l, h]) => !(ind[l][h] >= FORMED)));
  }
  const probs = (logits) => {
    const out = [];
    for (let t = 0; t < T - 1; t++) {
      const row = logits.subarray(t * vocab, (t + 1) * vocab);
      out.push(Math.exp(row[ids[t + 1]] - logSumExp(row)));
    }
    return out;
  };
  const copy = (ps, logits) => {
    let right = 0, loss = 0;
    for (let t = period; t < 2 * period - 1; t++) {
      const row = logits.subarray(t * vocab, (t + 1) * vocab);
      if (topIds(row, 1)[0] === ids[t + 1]) right += 1;
      loss -= Math.log(ps[t]);
    }
    return { accuracy: right / (period - 1), loss: loss / (period - 1), n: period - 1 };
  };
  const cleanProbs = probs(clean.logits);
  const patternRows = [];
  const p = pat(layer);
  for (let q = 0; q < T; q++) patternRows.push(Array.from(p.subarray((head * T + q) * T, (head * T + q + 1) * T)));
  const out = { ids, period, prev, ind, off, clean: cleanProbs, ablated: null, copy: null, copyOff: null, pattern: patternRows };
  let ablated = null;
  if (off.length) {
    const hooks = {};
    for (const [l, h] of off) {
      const z = clean.kept[`blocks.${l}.attn.z`];
      let mean = null;
      if (kind === "mean") {
        mean = new Float64Array(dh);
        for (let r = 1; r < T; r++) for (let i = 0; i < dh; i++) mean[i] += z[(r * H + h) * dh + i];
        for (let i = 0; i < dh; i++) mean[i] /= T - 1;
      }
      (hooks[`blocks.${l}.attn.z`] = hooks[`blocks.${l}.attn.z`] || []).push((rows) => {
        for (let r = kind === "mean" ? 1 : 0; r < T; r++) {
          for (let i = 0; i < dh; i++) rows[(r * H + h) * dh + i] = kind === "mean" ? mean[i] : 0;
        }
      });
    }
    ablated = model.forward(ids, model.newCache(T), { hooks, logits: "all" });
    out.ablated = probs(ablated.logits);
  }
  if (repeat) {
    out.copy = copy(cleanProbs, clean.logits);
    if (ablated) out.copyOff = copy(out.ablated, ablated.logits);
  }
  return out;
}

// ----------------------------------------------------------------------------- embedding rows (lib/chapters/part2/real_language/smol_map.py)
let NORMS = null;

/** Every row's length (the table's norms, as the library's `norms`), computed once. */
function rowNorms(model) {
  if (NORMS && NORMS.model === model) return NORMS.values;
  const { vocab, d } = model.cfg, row = new Float32Array(d), values = new Float64Array(vocab);
  for (let i = 0; i < vocab; i++) {
    model.embedRows([i], row);
    let s = 0;
    for (let j = 0; j < d; j++) s += row[j] * row[j];
    values[i] = Math.sqrt(s);
  }
  NORMS = { model, values };
  return values;
}

/** smol_map.rows_view's numbers for the reader's words: each word (as " word") cut into tokens; for each word
 *  that is one token, its `k` nearest tokens by cosine over the whole vocabulary (itself left out), and the
 *  cosines between those words. */
export function rows(model, words, k) {
  const { vocab, d } = model.cfg, norms = rowNorms(model);
  const entries = words.map((w) => {
    const { ids } = model.tokenizer.encode(" " + w);
    return { word: w, ids, pieces: ids ? model.tokenizer.decode(ids) : null, one: !!ids && ids.length === 1, neighbours: [] };
  });
  const ones = entries.filter((e) => e.one);
  const queries = new Float32Array(ones.length * d);
  ones.forEach((e, j) => model.embedRows([e.ids[0]], queries.subarray(j * d, (j + 1) * d)));
  const qn = ones.map((_, j) => { let s = 0; for (let i = j * d; i < (j + 1) * d; i++) s += queries[i] * queries[i]; return Math.sqrt(s); });
  if (ones.length) {
    const x = model.buf.xn;
    x.set(queries);
    const dots = new Float32Array(ones.length * vocab);
    for (let j = 0; j < ones.length; j++) {
      model.matmul(model.embed, model.work.xn + 4 * j * d, 1, model.work.logits);
      dots.set(model.buf.logits.subarray(0, vocab), j * vocab);
    }
    ones.forEach((e, j) => {
      const cos = new Float64Array(vocab);
      for (let i = 0; i < vocab; i++) cos[i] = dots[j * vocab + i] / (qn[j] * norms[i]);
      cos[e.ids[0]] = -Infinity;
      e.neighbours = topIds(cos, k).map((i) => [model.tokenizer.show(i), cos[i]]);
    });
  }
  const cos = ones.map((a, i) => ones.map((b, j) => {
    let s = 0;
    for (let t = 0; t < d; t++) s += queries[i * d + t] * queries[j * d + t];
    return s / (qn[i] * qn[j]);
  }));
  return { words: entries.map(({ word, pieces, one, neighbours }) => ({ word, pieces, one, neighbours })),
    tokens: ones.map((e) => model.tokenizer.show(e.ids[0])), cos };
}
