/* SmolLM2 in the page, as the explorers on the main thread see it: one model per page, loaded when the reader
 * asks (a button on every explorer that shows the real model), run in a Web Worker (worker.js), so the page's
 * main thread only sends requests and draws answers.
 *
 * Until it is loaded the explorers show what the site's build ran (a menu of stored prompts, or one opening text). Loading downloads the model's file
 * from the site (about 98 MB, in parts; progress in bytes), which the browser keeps (its Cache API), so a
 * second visit reads it from disk. A browser without WebAssembly SIMD or module workers, one that refuses the
 * memory, or a download that fails, gets one sentence, and the menu goes on working.
 */

const listeners = new Set();
// What the reader keeps when the model cannot run: every explorer's pictures as the site's build made them (its menu
// of stored prompts, or the one text it opens with).
const STILL = "The pictures the site's build made still work.";
export const real = {
  state: "idle",           // idle | loading | ready | failed
  loaded: 0, total: 0, cached: 0, info: null, message: "",
  worker: null, base: null,
};
let nextId = 0;
const pending = new Map();
// The tests and the benchmark read the model's state here (scripts/site_bench.py, tests/browser/test_site_smollm2.py).
if (typeof window !== "undefined") window.courseSmolLM2 = real;

function tell() { for (const fn of listeners) fn(real); }

/** Call `fn(real)` on every change of the model's state (loading progress included); returns `unsubscribe`. */
export function watch(fn) { listeners.add(fn); fn(real); return () => listeners.delete(fn); }

/** Why this browser cannot run the page's model, or null. */
export function unsupported() {
  if (typeof WebAssembly !== "object" || typeof WebAssembly.validate !== "function") return "this browser has no WebAssembly";
  if (typeof Worker !== "function") return "this browser cannot run a Web Worker";
  if (navigator.deviceMemory !== undefined && navigator.deviceMemory < 1) return "this device has too little memory for the model (it runs in about 110 MB, and needs as much again while it loads)";
  return null;
}

/** Start loading the model from the smollm2 folder at `base` (once per page; later calls wait on the first). */
export function load(base) {
  if (real.state === "loading" || real.state === "ready") return real.done;
  const why = unsupported();
  if (why) {
    real.state = "failed";
    real.message = `SmolLM2 cannot run in this browser: ${why}. ${STILL}`;
    tell();
    return Promise.resolve(false);
  }
  real.state = "loading";
  real.base = base;
  real.loaded = 0;
  tell();
  real.done = new Promise((resolve) => {
    let worker;
    try {
      worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "smollm2" });
    } catch (e) {
      real.state = "failed";
      real.message = `SmolLM2 cannot run in this browser: it cannot start the page's worker. ${STILL}`;
      tell();
      resolve(false);
      return;
    }
    real.worker = worker;
    worker.onerror = (e) => {
      if (real.state !== "loading") return;
      real.state = "failed";
      real.message = `SmolLM2 could not start in this page (${e.message || "its worker failed"}). ${STILL}`;
      tell();
      resolve(false);
    };
    worker.onmessage = ({ data }) => {
      if (data.type === "progress") {
        Object.assign(real, { loaded: data.loaded, total: data.total, cached: data.cached });
        tell();
      } else if (data.type === "ready") {
        real.state = "ready";
        real.info = data.info;
        tell();
        resolve(true);
      } else if (data.type === "failed") {
        real.state = "failed";
        real.message = data.reader ? `SmolLM2 cannot run in this browser: ${data.message}. ${STILL}`
          : `SmolLM2 could not be loaded: ${data.message}. ${STILL} Try again later.`;
        worker.terminate();
        real.worker = null;
        tell();
        resolve(false);
      } else {
        const p = pending.get(data.id);
        if (!p) return;
        if (data.type === "partial") { if (p.onPartial) p.onPartial(data.result); return; }
        pending.delete(data.id);
        if (data.type === "result") p.resolve(data.result);
        else p.reject(Object.assign(new Error(data.message), { reader: !!data.reader, cancelled: !!data.cancelled }));
      }
    };
    worker.postMessage({ type: "load", base: new URL(base, location.href).href });
  });
  return real.done;
}

/** Ask the loaded model for `op` (worker.js OPS) with `args`; `onPartial` sees each step of a long one.
 *  Returns {promise, cancel}. */
export function call(op, args, onPartial = null) {
  if (real.state !== "ready") return { promise: Promise.reject(new Error("the model is not loaded")), cancel() {} };
  const id = ++nextId;
  const promise = new Promise((resolve, reject) => pending.set(id, { resolve, reject, onPartial }));
  real.worker.postMessage({ type: "call", id, op, args });
  return { promise, cancel: () => real.worker && real.worker.postMessage({ type: "cancel", id }) };
}

real.call = call;       // the benchmark asks the worker for its own timings through it

/** A size in megabytes, as the bar says it. */
export const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
