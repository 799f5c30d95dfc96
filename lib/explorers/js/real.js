/* The real model's attention in the page: the twin of lib/explorers/real_attention.py.
 *
 * The page cannot run all-MiniLM-L6-v2 (90 MB of weights); the site's build computed every head's
 * pattern on the sentences the explorer offers and wrote them once for the whole site: an index
 * (real/minilm-attention.json: the sentences, their tokens, which are [CLS], [SEP] or punctuation)
 * and one file per sentence (real/minilm-attention/N.bin: [layer, head, query, key], each weight as
 * the byte round(255 p)). This module reads the index, and a sentence's file when it is shown (each
 * once per page; the browser caches them across pages), and gives the library's view from them,
 * each weight within 1/510 of the library's. A sentence the site did not compute gets a sentence
 * saying so; a kernel runs the model on any.
 */
import { CourseError, say } from "./readout.js";
import { pyRepr, pyStrip } from "./python.js";

const PRONOUNS = ["it", "he", "she", "they", "him", "her", "them", "its", "his", "their"];
const DATA = new Map();

/** The site's index of stored patterns `name` (a path under the explorers' folder, without ".json"):
 *  {meta, bySentence, bytes(s)}, where bytes(s) fetches one sentence's file once. */
export function realPatterns(name) {
  if (!DATA.has(name)) {
    DATA.set(name, fetch(new URL(`${name}.json`, import.meta.url)).then((r) => r.json()).then((meta) => {
      const files = new Map();
      const folder = new URL(name.split("/").slice(0, -1).join("/") + "/", import.meta.url);
      const bytes = (s) => {
        if (!files.has(s.file)) {
          files.set(s.file, fetch(new URL(s.file, folder)).then((r) => {
            if (!r.ok) throw new Error(`${s.file}: ${r.status}`);
            return r.arrayBuffer();
          }).then((b) => new Uint8Array(b)));
        }
        return files.get(s.file);
      };
      return { meta, bySentence: new Map(meta.sentences.map((s) => [s.text, s])), bytes };
    }));
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
  const bytes = await data.bytes(s);
  const at = (l, h, i, j) => bytes[((l * H + h) * T + i) * T + j] / scale;
  const layer = Number(v.layer), head = Number(v.head);
  const range = (n) => Array.from({ length: n }, (_, i) => i);
  return {
    sentence: text, tokens: s.tokens, special: s.special, layer, head, query: q,
    pattern: range(T).map((i) => range(T).map((j) => at(layer, head, i, j))),
    rows: range(L).map((l) => range(H).map((h) => range(T).map((j) => at(l, h, q, j)))),
  };
}
