/* The model's vocabulary in the page: a prompt is words split on white space, each one a token.
 *
 * The twin of lib/model/vocab.py: an unknown word gets the same sentence, naming the closest
 * known tokens by spelling. Those are chosen as Python's difflib.get_close_matches chooses them
 * (the ratio 2M / T of its SequenceMatcher, cut-off 0.5, the three best, ties to the later name),
 * so the suggestions match the command line's.
 */
import { pyRepr, pySplit } from "./python.js";
import { CourseError, require, say } from "./readout.js";

/** difflib.SequenceMatcher(None, a, b).ratio() for short strings (no junk, no autojunk). */
export function matchRatio(a, b) {
  const A = Array.from(a), B = Array.from(b);
  const b2j = new Map();
  B.forEach((ch, j) => { if (!b2j.has(ch)) b2j.set(ch, []); b2j.get(ch).push(j); });

  function longest(alo, ahi, blo, bhi) {
    let besti = alo, bestj = blo, bestsize = 0;
    let j2len = new Map();
    for (let i = alo; i < ahi; i++) {
      const next = new Map();
      for (const j of b2j.get(A[i]) || []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) || 0) + 1;
        next.set(j, k);
        if (k > bestsize) { besti = i - k + 1; bestj = j - k + 1; bestsize = k; }
      }
      j2len = next;
    }
    while (besti > alo && bestj > blo && A[besti - 1] === B[bestj - 1]) { besti--; bestj--; bestsize++; }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && A[besti + bestsize] === B[bestj + bestsize]) bestsize++;
    return [besti, bestj, bestsize];
  }

  let matches = 0;
  const queue = [[0, A.length, 0, B.length]];
  while (queue.length) {
    const [alo, ahi, blo, bhi] = queue.pop();
    const [i, j, k] = longest(alo, ahi, blo, bhi);
    if (k) {
      matches += k;
      if (alo < i && blo < j) queue.push([alo, i, blo, j]);
      if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
    }
  }
  const total = A.length + B.length;
  return total ? (2 * matches) / total : 1;
}

/** difflib.get_close_matches(word, possibilities, n, cutoff). */
export function closeMatches(word, possibilities, n = 3, cutoff = 0.5) {
  const scored = [];
  for (const x of possibilities) {
    const r = matchRatio(x, word);
    if (r >= cutoff) scored.push([r, x]);
  }
  scored.sort((p, q) => (q[0] - p[0]) || (q[1] < p[1] ? -1 : q[1] > p[1] ? 1 : 0));
  return scored.slice(0, n).map((s) => s[1]);
}

export class Vocabulary {
  constructor(tokens) {
    this.tokens = Array.from(tokens);
    this.index = new Map(this.tokens.map((t, i) => [t, i]));
  }

  get size() { return this.tokens.length; }

  has(token) { return this.index.has(token); }

  id(token) {
    if (this.index.has(token)) return this.index.get(token);
    throw new CourseError(this.unknownMessage(token));
  }

  unknownMessage(token) {
    // Case-insensitive closeness, so "pietro" suggests "Pietro" (a later token wins a shared
    // lower-case spelling, as in the library's dictionary).
    const lowered = new Map();
    for (const t of this.tokens) lowered.set(t.toLowerCase(), t);
    const close = closeMatches(token.toLowerCase(), Array.from(lowered.keys()));
    const hint = close.length ? say("did_you_mean", { close: close.map((c) => pyRepr(lowered.get(c))).join(", ") }) : "";
    return say("unknown_token", { token: pyRepr(token), hint, known: this.tokens.join(" ") });
  }

  split(text) {
    const words = pySplit(text);
    require(words.length > 0, say("empty_prompt"));
    return words;
  }

  encode(text) {
    return this.split(text).map((w) => this.id(w));
  }
}
