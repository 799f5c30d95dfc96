/* SmolLM2's tokenizer in the page: lib/model/bytebpe.py written again, step for step, so that a text is
 * cut into the same tokens here as in the library (tests/explorers/test_smollm2.py holds the two
 * together on held-out texts).
 *
 * 1. Special tokens written in the text are kept whole.
 * 2. Pre-tokenization: every number character alone, then GPT-2's pattern (a contraction, letters,
 *    numbers or other signs with at most one space before them, runs of white space).
 * 3. Each chunk's UTF-8 bytes spelled in GPT-2's alphabet of 256 printable characters.
 * 4. Merges: the adjacent pair listed first is joined, everywhere in the chunk, until none is listed.
 *
 * Which characters are letters and numbers is the library's answer (the `regex` package's Unicode
 * tables), handed to the page as ranges with the model (`classes`), not the browser's own tables:
 * browsers ship different Unicode versions, and a letter new to one would cut a text differently.
 * White space is Unicode's White_Space, as the library's `\s`.
 */

const SPACE = "\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

const hex = (c) => `\\u{${c.toString(16)}}`;
/** The inside of a character class from ranges [[from, to], ...] of code points. */
function inside(ranges) {
  return ranges.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join("");
}
const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

/** GPT-2's map from each byte to a printable character (bytebpe.byte_alphabet). */
export function byteAlphabet() {
  const keep = [];
  for (let b = "!".charCodeAt(0); b <= "~".charCodeAt(0); b++) keep.push(b);
  for (let b = 0xa1; b <= 0xac; b++) keep.push(b);
  for (let b = 0xae; b <= 0xff; b++) keep.push(b);
  const kept = new Set(keep), out = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) out[b] = kept.has(b) ? String.fromCharCode(b) : String.fromCharCode(256 + extra++);
  return out;
}

/** UTF-8 decoding of bytes, each byte of an undecodable stretch written as <0xHH> (the library's display
 *  rule: the stretches are those of Unicode's "maximal subpart" practice, which Python's decoder and
 *  the WHATWG decoder both follow). */
export function showBytes(bytes) {
  let out = "", i = 0;
  const n = bytes.length;
  const bad = (from, to) => {
    for (let k = from; k < to; k++) out += `<0x${bytes[k].toString(16).toUpperCase().padStart(2, "0")}>`;
  };
  while (i < n) {
    const b = bytes[i];
    if (b < 0x80) { out += String.fromCharCode(b); i++; continue; }
    let need, cp, lower = 0x80, upper = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) { need = 1; cp = b & 0x1f; }
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2; cp = b & 0x0f;
      if (b === 0xe0) lower = 0xa0;
      if (b === 0xed) upper = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3; cp = b & 0x07;
      if (b === 0xf0) lower = 0x90;
      if (b === 0xf4) upper = 0x8f;
    } else { bad(i, i + 1); i++; continue; }
    let j = i + 1, ok = true;
    for (let k = 0; k < need; k++, j++) {
      if (j >= n || bytes[j] < lower || bytes[j] > upper) { ok = false; break; }
      cp = (cp << 6) | (bytes[j] & 0x3f);
      lower = 0x80; upper = 0xbf;
    }
    if (!ok) { bad(i, j); i = j; continue; }
    out += String.fromCodePoint(cp);
    i = j;
  }
  return out;
}

export class ByteBPE {
  /** `vocab`: the tokens spelled in the byte alphabet; `merges`: "left right", best first; `special`: the
   *  ids of the special tokens; `classes`: {L: ranges, N: ranges} of letters and numbers. */
  constructor(vocab, merges, special, classes) {
    this.spelled = vocab;
    this.index = new Map();
    vocab.forEach((t, i) => { if (!this.index.has(t)) this.index.set(t, i); });
    this.ranks = new Map();
    merges.forEach((m, rank) => { if (!this.ranks.has(m)) this.ranks.set(m, rank); });
    this.special = new Map([...special].map((i) => [vocab[i], i]));
    const names = [...this.special.keys()].sort((a, b) => b.length - a.length);
    this.specialSplit = names.length ? new RegExp(`(${names.map(escapeRegExp).join("|")})`, "u") : null;
    const L = inside(classes.L), N = inside(classes.N);
    this.numberSplit = new RegExp(`([${N}])`, "u");
    this.pattern = new RegExp(
      `'s|'t|'re|'ve|'m|'ll|'d| ?[${L}]+| ?[${N}]+| ?[^${SPACE}${L}${N}]+|[${SPACE}]+(?![^${SPACE}])|[${SPACE}]+`, "gu");
    this.alphabet = byteAlphabet();
    this.byteOf = new Map(this.alphabet.map((c, b) => [c, b]));
    this.cache = new Map();
    this.encoder = new TextEncoder();
    this.shown = null;
  }

  get size() { return this.spelled.length; }

  /** The bytes a token stands for (a special token: its name's). */
  tokenBytes(i) {
    const t = this.spelled[i];
    if (this.special.has(t)) return this.encoder.encode(t);
    const out = new Uint8Array(t.length);
    for (let k = 0; k < t.length; k++) out[k] = this.byteOf.get(t[k]);
    return out;
  }

  /** Each token as a reader sees it (bytebpe's display rule). */
  show(i) {
    const t = this.spelled[i];
    if (this.special.has(t) || [...t].some((c) => !this.byteOf.has(c))) return t;
    return showBytes(this.tokenBytes(i));
  }

  decode(ids) { return ids.map((i) => this.show(i)); }

  /** The text a run of ids spells, bytes joined before decoding. */
  toText(ids) {
    const parts = ids.map((i) => this.tokenBytes(i));
    const all = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
    let at = 0;
    for (const p of parts) { all.set(p, at); at += p.length; }
    return showBytes(all);
  }

  /** Step 2: the chunks no token crosses (special tokens are chunks of their own). */
  chunks(text) {
    const out = [];
    for (const part of this.specialSplit ? text.split(this.specialSplit) : [text]) {
      if (this.special.has(part)) { out.push(part); continue; }
      for (const piece of part.split(this.numberSplit)) {
        if (piece) for (const m of piece.matchAll(this.pattern)) out.push(m[0]);
      }
    }
    return out;
  }

  /** Steps 3 and 4 for one chunk. */
  merge(chunk) {
    const known = this.cache.get(chunk);
    if (known) return known;
    let parts = Array.from(this.encoder.encode(chunk), (b) => this.alphabet[b]);
    while (parts.length > 1) {
      let best = -1, where = -1;
      for (let i = 0; i < parts.length - 1; i++) {
        const rank = this.ranks.get(parts[i] + " " + parts[i + 1]);
        if (rank !== undefined && (best < 0 || rank < best)) { best = rank; where = i; }
      }
      if (best < 0) break;
      const left = parts[where], right = parts[where + 1], out = [];
      for (let i = 0; i < parts.length;) {
        if (i < parts.length - 1 && parts[i] === left && parts[i + 1] === right) { out.push(left + right); i += 2; }
        else { out.push(parts[i]); i += 1; }
      }
      parts = out;
    }
    if (this.cache.size > 65536) this.cache.clear();
    this.cache.set(chunk, parts);
    return parts;
  }

  /** The tokens of `text`, spelled in the byte alphabet. */
  tokenize(text) {
    const out = [];
    for (const chunk of this.chunks(text)) {
      if (this.special.has(chunk)) out.push(chunk);
      else out.push(...this.merge(chunk));
    }
    return out;
  }

  /** The ids of `text`; a piece the vocabulary lacks is returned as {missing: piece} for the caller to explain. */
  encode(text) {
    const ids = [];
    for (const piece of this.tokenize(text)) {
      const i = this.index.get(piece);
      if (i === undefined) return { ids: null, missing: piece };
      ids.push(i);
    }
    return { ids, missing: null };
  }

  /** The character of `text` whose bytes hold `piece` (a byte the vocabulary lacks): the first one that,
   *  cut alone, is not all in the vocabulary. */
  unwritable(text) {
    for (const ch of text) {
      for (const b of this.encoder.encode(ch)) {
        if (!this.index.has(this.alphabet[b])) return { char: ch, byte: b };
      }
    }
    return null;
  }
}
