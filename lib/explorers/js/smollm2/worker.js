/* The page's Web Worker for SmolLM2: it downloads the model's parts from the site (kept by the browser's Cache
 * API, so that a second visit reads them from disk), checks them, builds the model (model.js) and answers the
 * explorers' requests (ops.js), one at a time, away from the page's main thread.
 *
 * Messages from the page:   {type: "load", base}                 base: the address of the smollm2 folder
 *                           {type: "call", id, op, args}          an operation of `OPS` below
 *                           {type: "cancel", id}                  a request the reader has moved past
 * Messages to the page:     {type: "progress", loaded, total, cached}
 *                           {type: "ready", info} | {type: "failed", message}
 *                           {type: "partial", id, result} | {type: "result", id, result} | {type: "error", id, message, reader}
 * A long operation (decoding, beam search, the patching grid) is a generator: the worker runs it one step at a
 * time and lets messages in between, so a cancelled request stops at its next step.
 */
import { SmolLM2 } from "./model.js";
import * as ops from "./ops.js";

const CACHE = "course-smollm2";
let model = null, manifest = null, stop = null;
const cancelled = new Set();
const RUNS = new Map();
const queue = [];
let running = false;

const post = (m, transfer = []) => self.postMessage(m, transfer);
const pause = () => new Promise((done) => setTimeout(done, 0));

/** One part's bytes: from the browser's cache when it holds this part (its digest in the key), else downloaded
 *  with its progress reported and put in the cache. */
async function part(base, p, cache, report) {
  const url = new URL(p.name, base).href, key = `${url}?sha256=${p.sha256}`;
  if (cache) {
    const hit = await cache.match(key);
    if (hit) {
      const bytes = new Uint8Array(await hit.arrayBuffer());
      if (bytes.byteLength === p.bytes) { report(p.bytes, true); return bytes; }
    }
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`the site answered ${response.status} for ${p.name}`);
  const reader = response.body.getReader();
  const bytes = new Uint8Array(p.bytes);
  let at = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (at + value.byteLength > p.bytes) throw new Error(`${p.name} is longer than the site's list says`);
    bytes.set(value, at);
    at += value.byteLength;
    report(value.byteLength, false);
  }
  if (at !== p.bytes) throw new Error(`${p.name} arrived cut short (${at.toLocaleString("en")} of ${p.bytes.toLocaleString("en")} bytes)`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  if (hex !== p.sha256) throw new Error(`${p.name} arrived damaged (its digest differs from the site's list)`);
  if (cache) {
    try { await cache.put(key, new Response(bytes)); } catch (e) { /* a full disk: the model still runs, uncached */ }
  }
  return bytes;
}

/** A file of the site's smollm2 folder, or an error that names it and what the site answered. */
async function fetched(base, name) {
  const response = await fetch(new URL(name, base));
  if (!response.ok) throw new Error(`the site answered ${response.status} for ${name}`);
  return response;
}

async function load(base) {
  const t0 = performance.now();
  manifest = await (await fetched(base, "model.json")).json();
  const kernelBytes = await (await fetched(base, "kernel.wasm")).arrayBuffer();
  if (!WebAssembly.validate(kernelBytes)) {
    throw Object.assign(new Error("this browser's WebAssembly has no SIMD instructions, which the page's model needs"), { reader: true });
  }
  const kernel = await WebAssembly.compile(kernelBytes);
  let cache = null;
  try { cache = self.caches ? await caches.open(CACHE) : null; } catch (e) { cache = null; }
  let loaded = 0, last = 0, fromCache = 0;
  const report = (n, cached) => {
    loaded += n;
    if (cached) fromCache += n;
    const now = performance.now();
    if (now - last > 100 || loaded === manifest.bytes) { last = now; post({ type: "progress", loaded, total: manifest.bytes, cached: fromCache }); }
  };
  const parts = [];
  for (const p of manifest.parts) parts.push(await part(base, p, cache, report));
  if (cache) {
    // Parts of an older model file: removed, so the browser keeps one copy.
    const wanted = new Set(manifest.parts.map((p) => `${new URL(p.name, base).href}?sha256=${p.sha256}`));
    for (const request of await cache.keys()) if (!wanted.has(request.url)) await cache.delete(request);
  }
  try {
    model = await SmolLM2.create(kernel, parts, manifest.classes);
  } catch (e) {
    if (e instanceof RangeError) throw Object.assign(new Error("this browser would not give the page the memory the model runs in (about 110 MB)"), { reader: true });
    throw e;
  }
  model.maxContext = manifest.max_tokens + manifest.max_new;
  stop = new Set([model.tokenizer.index.get(manifest.stop)]);
  return { bytes: manifest.bytes, fromCache, seconds: (performance.now() - t0) / 1000, memory: model.memoryBytes(),
    maxTokens: manifest.max_tokens, maxNew: manifest.max_new };
}

// ----------------------------------------------------------------------------- the operations
const check = (text, what) => ops.check(model, text, manifest.max_tokens, what);

const OPS = {
  /** The tokens a text is cut into (a reader's text is checked first). */
  tokens: ({ text }) => { const ids = check(text); return { ids, tokens: model.tokenizer.decode(ids) }; },
  /** stored.run: the page in short, the lens, the patterns (the last few texts' kept: three explorers of a page
   *  read one run). */
  run({ text }) {
    if (RUNS.has(text)) return RUNS.get(text);
    const r = ops.runText(model, check(text));
    const out = { tokens: r.tokens, summary: { tokens: r.summary.tokens, logits: r.summary.logits, means: r.summary.means, counts: r.summary.counts },
      lens: r.lens, patterns: r.patterns, layers: model.cfg.L, heads: model.cfg.H };
    RUNS.set(text, out);
    if (RUNS.size > 8) RUNS.delete(RUNS.keys().next().value);
    return out;
  },
  /** One continuation of a text by one of the chapter's methods (decoding.SETTINGS / beam). */
  *decode({ text, knobs, maxNew, beams }) {
    const ids = check(text);
    if (beams) {
      const steps = ops.beamSteps(model, ids, maxNew, beams, stop);
      let r = steps.next();
      while (!r.done) { yield { step: r.value }; r = steps.next(); }
      const best = r.value[0].seq;
      return { prompt: model.tokenizer.decode(ids), tokens: best, pieces: model.tokenizer.decode(best),
        logprobs: ops.tokenLogprobs(model, ids, best) };
    }
    const k = { doSample: !!knobs.do_sample, temperature: knobs.temperature ?? 1, seed: BigInt(knobs.seed ?? 0),
      penalty: knobs.repetition_penalty ?? null, minP: knobs.min_p ?? null };
    const steps = ops.decodeSteps(model, ids, maxNew, k, stop);
    let r = steps.next();
    while (!r.done) {
      yield { prompt: model.tokenizer.decode(ids), tokens: r.value.tokens, pieces: model.tokenizer.decode(r.value.tokens), logprobs: r.value.logprobs };
      r = steps.next();
    }
    return { prompt: model.tokenizer.decode(ids), tokens: r.value.tokens, pieces: model.tokenizer.decode(r.value.tokens), logprobs: r.value.logprobs };
  },
  /** Timings of the page's own operations, inside this worker (scripts/site_bench.py): a text from nothing, then
   *  `steps` new tokens with the cache, and the logit lens of every block at one position, in milliseconds. */
  bench({ text, steps }) {
    const ids = check(text).slice(0, 32), t = () => performance.now();
    const cache = model.newCache(ids.length + steps + 1);
    let t0 = t();
    let { logits } = model.forward(ids, cache);
    const prefill = t() - t0, step = [];
    for (let i = 0; i < steps; i++) {
      t0 = t();
      ({ logits } = model.forward([ids[i % ids.length]], cache));
      step.push(t() - t0);
    }
    const stream = new Float32Array(model.cfg.L * model.cfg.d), lens = [];
    for (let i = 0; i < 5; i++) { t0 = t(); model.readOut(stream, [...Array(model.cfg.L).keys()]); lens.push(t() - t0); }
    return { tokens: ids.length, prefill, steps: step, lens, memory: model.memoryBytes() };
  },
  /** SmolLM2's induction heads on a text read twice (lib/chapters/part1/induction/smol.py). */
  induction({ text, repeat, group, kind, layer, head, most }) {
    const ids = ops.check(model, text, Infinity);
    if (ids.length > most) return { error: "smol_text_long", fields: { n: ids.length, most, twice: 2 * most } };
    const r = ops.induction(model, ids, repeat, group, kind, layer, head);
    if (r.error) return r;
    return { ...r, tokens: model.tokenizer.decode(r.ids), off: r.off.map(([l, h]) => `L${l}H${h}`) };
  },
  /** SmolLM2's embedding rows for the reader's words (lib/chapters/part2/real_language/smol_map.py rows_view). */
  rows({ words, k }) {
    for (const w of words) ops.check(model, " " + w, Infinity, `the word ${JSON.stringify(w)}`);
    return ops.rows(model, words, k);
  },
  /** The residual stream patched between two texts of one length in tokens. */
  *patch({ clean, corrupted, direction }) {
    const a = check(clean, "the clean text"), b = check(corrupted, "the corrupted text");
    if (a.length !== b.length) {
      throw new ops.TextError(`the two texts must be of one length in tokens to be patched: the clean one is ${a.length} tokens, ` +
        `the corrupted one ${b.length}; change a word for another of as many tokens`);
    }
    const steps = ops.patchSteps(model, a, b, null, null, direction);
    const shown = (r) => ({ ...r, clean: model.tokenizer.decode(a), corrupted: model.tokenizer.decode(b),
      target: model.tokenizer.show(r.target), against: model.tokenizer.show(r.against),
      tops: r.cleanTop === undefined ? null : [model.tokenizer.show(r.cleanTop), model.tokenizer.show(r.corruptedTop)] });
    let r = steps.next();
    while (!r.done) { yield shown(r.value); r = steps.next(); }
    return shown(r.value);
  },
};

/** Whether an operation runs in steps (a generator): decoding, beam search, the patching grid. */
const STEPPED = Object.getPrototypeOf(function* () {});
const stepped = (op) => !!OPS[op] && Object.getPrototypeOf(OPS[op]) === STEPPED;

/** The requests of quick operations waiting in the queue, taken out of it in the order they came. */
function quickOnes() {
  const out = queue.filter((r) => !stepped(r.op));
  if (out.length) queue.splice(0, queue.length, ...queue.filter((r) => stepped(r.op)));
  return out;
}

async function call({ id, op, args }) {
  const fn = OPS[op];
  try {
    if (!model) throw new Error("the model is not loaded");
    if (!fn) throw new Error(`unknown operation ${op}`);
    const out = fn(args);
    let result = out;
    if (out && typeof out.next === "function") {
      let r = out.next();
      while (!r.done) {
        post({ type: "partial", id, result: r.value });
        await pause();                               // let a cancel in
        if (cancelled.has(id)) { cancelled.delete(id); post({ type: "error", id, message: "cancelled", cancelled: true }); return; }
        // A picture asked for meanwhile (a page, a lens: well under a second) is answered between two steps, not
        // after the whole continuation or grid.
        for (const q of quickOnes()) await start(q);
        r = out.next();
      }
      result = r.value;
    }
    post({ type: "result", id, result });
  } catch (e) {
    post({ type: "error", id, message: String(e.message || e), reader: e instanceof ops.TextError });
  }
}

/** A request taken from the queue: answered, or told it was cancelled. */
async function start(request) {
  if (cancelled.has(request.id)) {
    cancelled.delete(request.id);
    post({ type: "error", id: request.id, message: "cancelled", cancelled: true });
    return;
  }
  await call(request);
}

async function drain() {
  if (running) return;
  running = true;
  while (queue.length) {
    // quick operations first, then those that run in steps, each group in the order asked
    const i = queue.findIndex((r) => !stepped(r.op));
    const [next] = queue.splice(i < 0 ? 0 : i, 1);
    await start(next);
  }
  running = false;
}

self.onmessage = async ({ data }) => {
  if (data.type === "load") {
    try { post({ type: "ready", info: await load(data.base) }); }
    catch (e) { post({ type: "failed", message: String(e.message || e), reader: !!e.reader }); }
  } else if (data.type === "call") {
    queue.push(data);
    drain();
  } else if (data.type === "cancel") {
    cancelled.add(data.id);
  }
};
