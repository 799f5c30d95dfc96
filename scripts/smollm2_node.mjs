/* The page's SmolLM2 run in Node: the modules as the site serves them (a folder lib.explorers.web.install wrote),
 * the GGUF file as the build splits it (lib.explorers.smollm2.export), one JSON request on stdin (a list of
 * operations), one JSON answer on stdout (a result or {"error"} per operation, each with its CPU milliseconds).
 * tests/explorers/test_smollm2.py holds the page's model to the library with it; `make bench` times it
 * (lib/cli/bench.py, `page_model_costs`).
 *
 *   node scripts/smollm2_node.mjs EXPLORERS_FOLDER MODEL_FOLDER < requests.json
 */
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [folder, modelFolder] = process.argv.slice(2);
const { SmolLM2 } = await import(pathToFileURL(path.join(folder, "smollm2/model.js")));
const ops = await import(pathToFileURL(path.join(folder, "smollm2/ops.js")));
const manifest = JSON.parse(fs.readFileSync(path.join(modelFolder, "model.json"), "utf8"));
const kernel = await WebAssembly.compile(fs.readFileSync(path.join(folder, "smollm2/kernel.wasm")));
const parts = manifest.parts.map((p) => new Uint8Array(fs.readFileSync(path.join(modelFolder, p.name))));
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
let t0 = cpu();
const model = await SmolLM2.create(kernel, parts, manifest.classes);
const loadMs = cpu() - t0;
model.maxContext = manifest.max_tokens + manifest.max_new;
const requests = JSON.parse(fs.readFileSync(0, "utf8"));
const stop = new Set([model.tokenizer.index.get(manifest.stop)]);

function one(r) {
  switch (r.op) {
    case "tokenize": {
      const { ids, missing } = model.tokenizer.encode(r.text);
      return { ids, missing, shown: ids ? model.tokenizer.decode(ids) : null, text: ids ? model.tokenizer.toText(ids) : null };
    }
    case "check": return { ids: ops.check(model, r.text, manifest.max_tokens) };
    case "show": return { shown: r.ids.map((i) => model.tokenizer.show(i)) };
    case "run": {
      const out = ops.runText(model, r.ids);
      return { tokens: out.tokens, summary: { ...out.summary, ids: undefined }, lens: out.lens,
        patterns: Buffer.from(out.patterns).toString("base64"), logits: Array.from(out.logits) };
    }
    case "patterns": {
      // every layer's and head's attention pattern, as the page's forward pass computes it (floats, not the bytes a
      // run keeps): [layer, head, query, key] float32, base64
      const n = r.ids.length;
      const { kept } = model.forward(r.ids, model.newCache(n), { keep: (name) => name.endsWith("attn.pattern"), logits: "none" });
      const all = new Float32Array(model.cfg.L * model.cfg.H * n * n);
      for (let l = 0; l < model.cfg.L; l++) all.set(kept[`blocks.${l}.attn.pattern`], l * model.cfg.H * n * n);
      return { patterns: Buffer.from(all.buffer).toString("base64") };
    }
    case "silu": {
      // the kernel's SwiGLU product on given numbers (a multiple of 4 of them): silu(gate) * up
      const n = r.gate.length;
      model.buf.g.set(r.gate);
      model.buf.u.set(r.up);
      model.kernel.silu_mul(model.work.g, model.work.u, n);
      return { out: Array.from(model.buf.g.subarray(0, n)) };
    }
    case "decode": {
      const o = r.knobs || {};
      const knobs = { doSample: !!o.do_sample, temperature: o.temperature ?? 1, seed: BigInt(o.seed ?? 0),
        penalty: o.repetition_penalty ?? null, minP: o.min_p ?? null };
      return ops.decodeOne(model, r.ids, r.max_new, knobs, stop);
    }
    case "beam": return ops.beamSearch(model, r.ids, r.max_new, r.beams, stop);
    case "patch": {
      const p = ops.patchStream(model, r.clean, r.corrupted, r.target, r.against, r.direction || "denoise");
      return p;
    }
    case "induction": return ops.induction(model, r.ids, r.repeat, r.group, r.kind, r.layer, r.head);
    case "rows": return ops.rows(model, r.words, r.k);
    case "check_text": return { ids: ops.check(model, r.text, r.max ?? manifest.max_tokens) };
    case "bench": {
      // CPU milliseconds: a text from nothing, then `steps` new tokens with the cache, and the lens at one position
      const cache = model.newCache(r.ids.length + r.steps + 1);
      let t = cpu();
      const first = model.forward(r.ids, cache);
      const prefill = cpu() - t;
      const steps = [];
      let next = first.logits.indexOf(Math.max(...first.logits));
      for (let s = 0; s < r.steps; s++) {
        t = cpu();
        const { logits } = model.forward([next], cache);
        steps.push(cpu() - t);
        next = logits.indexOf(Math.max(...logits));
      }
      t = cpu();
      ops.runText(model, r.ids);
      const run = cpu() - t;
      // the logit lens of every block at one position: the stream after the embedding and each block, read out
      const stream = new Float32Array(model.cfg.L * model.cfg.d);
      const lens = [];
      for (let k = 0; k < 5; k++) {
        t = cpu();
        model.readOut(stream, [...Array(model.cfg.L).keys()]);
        lens.push(cpu() - t);
      }
      return { prefill, steps, run, lens, memory: model.memoryBytes() };
    }
    default: throw new Error(`unknown op ${r.op}`);
  }
}

const out = [];
for (const r of requests) {
  const t = cpu();
  try { out.push({ result: one(r), ms: cpu() - t }); }
  catch (e) { out.push({ error: String(e.message || e), kind: e.constructor.name, ms: cpu() - t }); }
}
process.stdout.write(JSON.stringify({ load_ms: loadMs, answers: out }));
