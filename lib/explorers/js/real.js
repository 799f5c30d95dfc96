/* The real model's stored attention patterns in the page (lib/chapters/part1/ablation/explorers.py, the real model's attention explorer).
 *
 * The page cannot run all-MiniLM-L6-v2 (90 MB of weights); the site's build computed every head's
 * pattern on the sentences the explorer offers and wrote them once for the whole site: an index
 * (real/minilm-attention.json: the sentences, their tokens, which are [CLS], [SEP] or punctuation)
 * and one file per sentence (real/minilm-attention/N.bin: [layer, head, query, key], each weight as
 * the byte round(255 p)). This module reads the index, and a sentence's file when it is shown (each
 * once per page; the browser caches them across pages); page.js reads the index early, and the
 * explorer's view (its chapter's page.js, lib/chapters/part1/ablation) gives the library's view from
 * them, each weight within 1/510 of the library's.
 */

import { CourseError, say } from "./readout.js";

const DATA = new Map();

/** An explorer that runs SmolLM2 in the page (lib/explorers/js/smollm2/), before the reader loads the model: the
 *  picture the build drew for its opening values, and for those only (`context.defaults`); any other value
 *  gets the sentence that says to load the model. */
export function openingView(context, values) {
  const d = context.defaults || {};
  const same = Object.keys(values).every((k) => JSON.stringify(values[k]) === JSON.stringify(d[k]));
  if (context.defaultView && same) return context.defaultView;
  throw new CourseError(say("not_live"));
}

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
