/* The read-out in the page: softmax with temperature, top-k then top-p, and the seeded roll.
 *
 * The twin of lib/model/readout.py, line for line where it matters: the same order of the knobs
 * (temperature, softmax, keep the k best, share out, keep the smallest set reaching p, share out),
 * the same checks with the same messages, and the same generator (SplitMix64 read as a counter,
 * then inverse-CDF in vocabulary order), so that a seed picks the same token here and in a kernel.
 * Probabilities are doubles, as in the library.
 */
import { MAX_SEED, MESSAGES, MIN_TEMPERATURE, TOP_P_FLOOR } from "./constants.js";
import { formatG, pyFloat, pyInt, pyParseFloat, pyRepr, pyStrip } from "./python.js";

export { MAX_SEED, MIN_TEMPERATURE };

/** A reader's mistake: its message is the whole explanation (lib.errors.CourseError). */
export class CourseError extends Error {}

export function require(condition, message) {
  if (!condition) throw new CourseError(message);
}

/** The library's sentence `name` (lib/messages.py) with its fields, each already formatted, filled in. */
export function say(name, fields = {}) {
  return MESSAGES[name].replace(/\{(\w+)\}/g, (_, key) => String(fields[key]));
}

/** check_temperature: a number, or text that reads as one (a typed box), finite and at least MIN_TEMPERATURE. */
export function checkTemperature(t) {
  let value = t;
  if (typeof t === "string") value = pyParseFloat(t);
  require(typeof value === "number", say("temperature_number", { got: typeof t === "string" ? pyRepr(t) : String(t) }));
  require(Number.isFinite(value) && value >= MIN_TEMPERATURE,
    say("temperature_range", { minimum: formatG(MIN_TEMPERATURE), got: formatG(value) }));
  return value;
}

export function checkSeed(seed) {
  const ok = typeof seed === "bigint" && seed >= 0n && seed <= MAX_SEED;
  require(ok, say("seed", { maximum: MAX_SEED, got: String(seed) }));
  return seed;
}

export function checkTopK(k, vocabSize = null) {
  if (k === null) return null;
  require(Number.isInteger(k) && k >= 1, say("top_k", { got: k }));
  return vocabSize === null ? k : Math.min(k, vocabSize);
}

/** check_top_p of a number or of the text a reader typed. */
export function checkTopP(p) {
  if (p === null) return null;
  let value = p;
  if (typeof p === "string") {
    value = pyParseFloat(p);
    require(value !== null, say("top_p_number", { got: pyRepr(p) }));
  }
  require(Number.isFinite(value) && value > 0 && value <= 1, say("top_p_range", { got: pyFloat(value) }));
  require(value >= TOP_P_FLOOR, say("top_p_floor", { got: pyFloat(value), floor: formatG(TOP_P_FLOOR) }));
  return value;
}

const NO_LIMIT = ["", "all", "none"];

/** A top-k typed in a box (lib.explorers.boxes.parse_top_k). */
export function parseTopK(text) {
  const s = pyStrip(text);
  if (NO_LIMIT.includes(s.toLowerCase())) return null;
  const value = pyInt(s);
  require(value !== null, say("top_k_text", { got: pyRepr(s) }));
  require(value >= 1n, say("top_k", { got: value }));
  // Any k past the vocabulary keeps everything; a Number is exact far beyond that.
  return Number(value > 1000000000n ? 1000000000n : value);
}

/** A top-p typed in a box (lib.explorers.boxes.parse_top_p). */
export function parseTopP(text) {
  const s = pyStrip(text);
  if (NO_LIMIT.includes(s.toLowerCase())) return null;
  return checkTopP(s);
}

/** A seed typed in a box (lib.explorers.boxes.parse_seed): a BigInt. */
export function parseSeed(text) {
  const s = pyStrip(text);
  const value = pyInt(s);
  require(value !== null, say("seed", { maximum: MAX_SEED, got: pyRepr(s) }));
  return checkSeed(value);
}

/** Probabilities from logits at a temperature, as torch.softmax computes them (max subtracted). */
export function softmax(logits, temperature = 1) {
  const t = checkTemperature(temperature);
  const z = Float64Array.from(logits, (x) => x / t);
  require(z.every(Number.isFinite),
    say("logits_not_finite", { t: formatG(t) }));
  let max = -Infinity;
  for (const v of z) if (v > max) max = v;
  let sum = 0;
  for (let i = 0; i < z.length; i++) { z[i] = Math.exp(z[i] - max); sum += z[i]; }
  for (let i = 0; i < z.length; i++) z[i] /= sum;
  return z;
}

/** Token ids by probability, best first; ties keep vocabulary order (torch's stable argsort). */
export function order(probs) {
  return Array.from(probs.keys()).sort((a, b) => (probs[b] - probs[a]) || (a - b));
}

/** Which tokens survive top-k and then top-p, judged on the shared-out survivors of top-k. */
export function truncationMask(probs, topK = null, topP = null) {
  topK = checkTopK(topK, probs.length);
  topP = checkTopP(topP);
  const sorted = order(probs);
  const keep = sorted.map((_, r) => topK === null || r < topK);
  if (topP !== null && topP < 1) {          // top-p 1 keeps every token: truncation off
    const kept = sorted.map((i, r) => (keep[r] ? probs[i] : 0));
    let mass = 0;
    for (const v of kept) mass += v;
    let running = 0;
    for (let r = 0; r < kept.length; r++) {
      const share = kept[r] / mass;
      running += share;
      // The mass of the better survivors, as the library computes it (running total minus self).
      keep[r] = keep[r] && running - share < topP - TOP_P_FLOOR;
    }
    keep[0] = true;
  }
  const mask = new Array(probs.length).fill(false);
  sorted.forEach((i, r) => { mask[i] = keep[r]; });
  return mask;
}

/** The sampling distribution: temperature, then truncation, then renormalisation. */
export function reshape(logits, temperature = 1, topK = null, topP = null) {
  const probs = softmax(logits, temperature);
  const mask = truncationMask(probs, topK, topP);
  const kept = probs.map((p, i) => (mask[i] ? p : 0));
  let sum = 0;
  for (const v of kept) sum += v;
  return kept.map((p) => p / sum);
}

export function greedy(logits) {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}

// ----------------------------------------------------------------------------- seeded rolls
const GAMMA = 0x9E3779B97F4A7C15n;
const MASK64 = (1n << 64n) - 1n;

/** The n-th (from 0) 64-bit output of SplitMix64 started at `seed` (BigInts). */
export function splitmix64(seed, n) {
  let z = (seed + BigInt(n + 1) * GAMMA) & MASK64;
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK64;
  return z ^ (z >> 31n);
}

/** The n-th number in [0, 1) of a seed's stream (lib.model.readout.Rolls). */
export function uniform(seed, n = 0) {
  return Number(splitmix64(checkSeed(seed), n) >> 11n) / 2 ** 53;
}

/** The token whose slice of [0, total) holds u * total, slices in vocabulary order. */
export function inverseCdf(probs, u) {
  const running = [];
  let total = 0;
  for (const p of probs) { total += p; running.push(total); }
  const target = u * total;
  for (let i = 0; i < running.length; i++) if (running[i] > target) return i;
  for (let i = probs.length - 1; i >= 0; i--) if (probs[i] > 0) return i;
  return 0;
}

/** One seeded roll on the reshaped distribution (lib.model.readout.sample with `seed`). */
export function sample(logits, temperature = 1, topK = null, topP = null, seed = 0n) {
  return inverseCdf(reshape(logits, temperature, topK, topP), uniform(seed, 0));
}
