/* The real model's attention in the page: the twin of lib/explorers/real_attention.py.
 *
 * The page cannot run all-MiniLM-L6-v2 (90 MB of weights); the site's build computed every head's
 * pattern on the sentences the explorer offers and wrote them once for the whole site
 * (real/minilm-attention.json, the sentences, their tokens and which are [CLS], [SEP] or punctuation; real/minilm-attention.bin, each
 * weight as the byte round(255 p), [layer, head, query, key] per sentence). This module reads them
 * (once per page; the browser caches them across pages) and gives the library's view from them,
 * each weight within 1/510 of the library's. A sentence the site did not compute gets a sentence
 * saying so; a kernel runs the model on any.
 */
import { CourseError, say } from "./readout.js";
import { pyRepr, pyStrip } from "./python.js";

const PRONOUNS = ["it", "he", "she", "they", "him", "her", "them", "its", "his", "their"];
const DATA = new Map();

/** The site's patterns `name` (a path under the explorers' folder, without its extension). */
export function realPatterns(name) {
  if (!DATA.has(name)) {
    const url = (ext) => new URL(`${name}.${ext}`, import.meta.url);
    DATA.set(name, Promise.all([fetch(url("json")).then((r) => r.json()), fetch(url("bin")).then((r) => r.arrayBuffer())])
      .then(([meta, buffer]) => ({ meta, bytes: new Uint8Array(buffer),
        bySentence: new Map(meta.sentences.map((s) => [s.text, s])) })));
  }
  return DATA.get(name);
}

/** The query box (lib.explorers.real_attention.parse_query): a position, a token, or blank for the first pronoun. */
export function parseQuery(text, tokens) {
  const t = pyStrip(text);
  if (t === "") {
    const found = tokens.findIndex((w) => PRONOUNS.includes(w));
    return found >= 0 ? found : Math.min(1, tokens.length - 1);
  }
  if (/^[0-9]+$/.test(t) && Number(t) < tokens.length) return Number(t);
  const at = tokens.indexOf(t.toLowerCase());
  if (at >= 0) return at;
  throw new CourseError(say("query", { last: tokens.length - 1, tokens: tokens.join(" "), got: pyRepr(t) }));
}

/** The view (VIEWS.real_attention). */
export async function realAttention(_, v, a) {
  const data = await realPatterns(a.data);
  const text = pyStrip(v.sentence);
  const s = data.bySentence.get(text);
  if (!s) throw new CourseError(say("not_precomputed", { n: data.meta.sentences.length }));
  const { layers: L, heads: H, scale } = data.meta, T = s.tokens.length;
  const q = parseQuery(v.query, s.tokens);
  const at = (l, h, i, j) => data.bytes[s.offset + ((l * H + h) * T + i) * T + j] / scale;
  const layer = Number(v.layer), head = Number(v.head);
  const range = (n) => Array.from({ length: n }, (_, i) => i);
  return {
    sentence: text, tokens: s.tokens, special: s.special, layer, head, query: q,
    pattern: range(T).map((i) => range(T).map((j) => at(layer, head, i, j))),
    rows: range(L).map((l) => range(H).map((h) => range(T).map((j) => at(l, h, q, j)))),
  };
}
