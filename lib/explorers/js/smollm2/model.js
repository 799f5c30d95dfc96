/* SmolLM2-135M-Instruct in the page: lib/model/llama.py's forward pass written again over the GGUF file's
 * own bytes, its matrix work in WebAssembly (kernel.wat), the rest here.
 *
 * The same steps as the library, block by block: RMSNorm, the queries, keys and values, rotary positions,
 * grouped-query attention (9 query heads reading 3 shared key/value heads) with a KV cache, the heads'
 * outputs through W_O, RMSNorm, the gated MLP (SiLU(gate) * up, then down), a final RMSNorm and the tied
 * read-out (the embedding read across). Weights stay as the file stores them (Q4_1 blocks, the embedding
 * Q8_0, the norms float32) and are widened block by block inside the kernel; activations are float32
 * between steps, as the library's.
 *
 * llama.cpp's converter stored each head's query and key rows with the two halves of every rotary pair
 * next to each other (rows 2i, 2i+1 are Hugging Face's i, i + 32); the library undoes that order, the
 * page keeps it and turns each adjacent pair instead: every dot product of a query with a key is the same.
 *
 * Interventions are hooks by name, as in the library (lib/model/hooks.py) and the toy's page model:
 * `hooks[name]` is a list of functions fn(rows, info) that may change the rows in place. The page's hook
 * points, for the `n` new positions of a pass (info.start is the first one's position):
 *   blocks.L.resid_pre   [n, d_model]   the residual stream before block L
 *   blocks.L.attn.z      [n, 9 * 64]    each head's mix of values, head after head (its write is z @ W_O)
 *   blocks.L.resid_post  [n, d_model]   after block L
 * and `keep(name)` asks for a copy of `blocks.L.attn.pattern` [9, n, keys] and of the streams above.
 */
import { readHeader, TYPES } from "./gguf.js";
import { ByteBPE } from "./tokenizer.js";

const PAGE = 65536;
const LUT = 0;                       // 65,536 float32: every half-precision number
const WARM_PASSES = 3;                // one-token passes at load (see warm)
const ACC = 256 * 1024;              // the kernel's scratch: 16 bytes a vector, or 144 a block for one vector
const FILE = 1024 * 1024;            // where the file's bytes start
export const MAX_ROWS = 256;         // positions (or vectors) one kernel call takes
export const LOGIT_ROWS = 32;        // read-outs one call takes (the lens: 31 stages)
export const MEMORY_PAGES_MAX = 6144; // 384 MiB, the kernel's declared maximum

/** Every half-precision number, widened. */
function halfTable(view) {
  for (let bits = 0; bits < 65536; bits++) {
    const sign = bits & 0x8000 ? -1 : 1, exp = (bits >> 10) & 0x1f, frac = bits & 0x3ff;
    let v;
    if (exp === 0) v = sign * frac * 2 ** -24;
    else if (exp === 31) v = frac ? NaN : sign * Infinity;
    else v = sign * (1 + frac / 1024) * 2 ** (exp - 15);
    view[bits] = v;
  }
}

export class ModelError extends Error {}

/** The model's shapes from the file's metadata (as lib.model.smollm2.config_from reads them). */
function configFrom(meta, tensors) {
  const need = (k) => {
    if (!(k in meta)) throw new ModelError(`the model's file has no ${k}`);
    return meta[k];
  };
  if (need("general.architecture") !== "llama") throw new ModelError("the file is not a Llama model");
  const H = need("llama.attention.head_count"), d = need("llama.embedding_length");
  const cfg = {
    vocab: meta["tokenizer.ggml.tokens"].length, d, H, K: need("llama.attention.head_count_kv"), dh: d / H,
    L: need("llama.block_count"), dm: need("llama.feed_forward_length"), base: need("llama.rope.freq_base"),
    eps: need("llama.attention.layer_norm_rms_epsilon"), nCtx: need("llama.context_length"),
  };
  if (tensors["token_embd.weight"].type !== TYPES.Q8_0) throw new ModelError("the embedding is not Q8_0");
  if (cfg.dm % 4 !== 0) throw new ModelError("the MLP's width must be a multiple of 4 (its product is taken four numbers at a time)");
  if (cfg.dh % 8 !== 0) throw new ModelError("a head's width must be a multiple of 8 (the attention sums eight numbers at a time)");
  if ("output.weight" in tensors) throw new ModelError("the file has its own unembedding; the page ties it");
  return cfg;
}

export class SmolLM2 {
  /** `kernel`: the WebAssembly module (compiled kernel.wasm); `file`: the GGUF file's bytes, whole, or a list
   *  of its parts in order; `classes`: the tokenizer's letter and number ranges ({L, N}). */
  static async create(kernel, file, classes) {
    const parts = Array.isArray(file) ? file : [file];
    const size = parts.reduce((s, p) => s + p.byteLength, 0);
    const header = readHeader(parts[0] instanceof Uint8Array ? parts[0] : new Uint8Array(parts[0]));
    const cfg = configFrom(header.meta, header.tensors);
    const work = workLayout(cfg, FILE + size);
    const pages = Math.ceil(work.end / PAGE);
    if (pages > MEMORY_PAGES_MAX) throw new ModelError(`the model needs ${pages} pages of memory, over ${MEMORY_PAGES_MAX}`);
    const memory = new WebAssembly.Memory({ initial: pages, maximum: MEMORY_PAGES_MAX });
    const instance = await WebAssembly.instantiate(kernel, { env: { memory } });
    const bytes = new Uint8Array(memory.buffer);
    let at = FILE;
    for (const p of parts) {
      const u = p instanceof Uint8Array ? p : new Uint8Array(p);
      bytes.set(u, at);
      at += u.byteLength;
    }
    halfTable(new Float32Array(memory.buffer, LUT, 65536));
    const model = new SmolLM2(instance.exports, memory, header, cfg, work, size, classes);
    model.warm();
    return model;
  }

  /** A few passes of one token before the reader's first: the browser compiles a WebAssembly function
   *  quickly at first and optimises it once it has run for a while, so the reader's first new tokens
   *  would otherwise cost two to three times the later ones. */
  warm(passes = WARM_PASSES) {
    for (let i = 0; i < passes; i++) this.forward([this.eos], this.newCache(1));
  }

  constructor(kernel, memory, header, cfg, work, size, classes) {
    this.kernel = kernel;
    this.memory = memory;
    this.header = header;
    this.cfg = cfg;
    this.work = work;
    this.fileBytes = size;
    const meta = header.meta;
    const types = meta["tokenizer.ggml.token_type"];
    const special = [];
    types.forEach((t, i) => { if (t === 3) special.push(i); });
    this.tokenizer = new ByteBPE(meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.merges"], special, classes);
    this.eos = meta["tokenizer.ggml.eos_token_id"];
    this.maxContext = cfg.nCtx;          // the longest text and continuation (the page sets its own, smaller)
    const t = (name) => {
      const info = header.tensors[name];
      if (!info) throw new ModelError(`the model's file has no tensor ${name}`);
      return { ...info, at: FILE + info.offset };
    };
    this.embed = t("token_embd.weight");
    this.finalNorm = this.f32(t("output_norm.weight"));
    this.blocks = [];
    for (let L = 0; L < cfg.L; L++) {
      const g = `blk.${L}.`;
      this.blocks.push({
        attnNorm: this.f32(t(g + "attn_norm.weight")), ffnNorm: this.f32(t(g + "ffn_norm.weight")),
        q: t(g + "attn_q.weight"), k: t(g + "attn_k.weight"), v: t(g + "attn_v.weight"), o: t(g + "attn_output.weight"),
        gate: t(g + "ffn_gate.weight"), up: t(g + "ffn_up.weight"), down: t(g + "ffn_down.weight"),
      });
    }
    // Rotary angles as the library computes them: float32 frequencies, their product with the position in float32.
    const half = cfg.dh / 2;
    this.invFreq = new Float32Array(half);
    for (let i = 0; i < half; i++) this.invFreq[i] = Math.fround(1 / Math.fround(cfg.base ** Math.fround((2 * i) / cfg.dh)));
    this.views();
  }

  /** Typed views over the kernel's memory (made again if it ever grows). */
  views() {
    const buf = this.memory.buffer, w = this.work;
    this.heap = new Float32Array(buf);
    this.bytes = new Uint8Array(buf);
    const f = (name, n) => new Float32Array(buf, w[name], n);
    const { d, dm, vocab } = this.cfg;
    this.buf = {
      x: f("x", MAX_ROWS * d), xn: f("xn", MAX_ROWS * d), q: f("q", MAX_ROWS * d), k: f("k", MAX_ROWS * d),
      v: f("v", MAX_ROWS * d), z: f("z", MAX_ROWS * d), o: f("o", MAX_ROWS * d),
      g: f("g", MAX_ROWS * dm), u: f("u", MAX_ROWS * dm), logits: f("logits", LOGIT_ROWS * vocab),
    };
  }

  /** Scores of one query against `keys` keys (kept between calls: a token's pass makes 270 of them). */
  scratch(keys) {
    if (!this.scores || this.scores.length < keys) this.scores = new Float64Array(Math.max(keys, 2 * (this.scores?.length || 64)));
    return this.scores;
  }

  f32(info) {
    if (info.type !== TYPES.F32) throw new ModelError(`${info.name} is not float32`);
    return new Float32Array(this.memory.buffer, info.at, info.dims.reduce((a, b) => a * b, 1)).slice();
  }

  /** out[j, r] = W[r] . x[j] for n vectors at the work buffer `x` (addresses in bytes). */
  matmul(w, x, n, out) {
    const rows = w.dims[1], nb = w.dims[0] / 32;
    const fn = w.type === TYPES.Q4_1 ? this.kernel.q4_1 : w.type === TYPES.Q8_0 ? this.kernel.q8_0 : null;
    if (!fn) throw new ModelError(`no kernel for ${w.typeName}`);
    if (n > (this.work.accBytes / 16)) throw new ModelError("too many vectors for one kernel call");
    fn(w.at, rows, nb, x, n, out, LUT, ACC);
  }

  /** A fresh KV cache: each layer's turned keys and values, [kv head][position][d_head]. */
  newCache(capacity) {
    const { L, K, dh } = this.cfg;
    const cache = { length: 0, capacity, k: [], v: [] };
    for (let l = 0; l < L; l++) {
      cache.k.push(new Float32Array(K * capacity * dh));
      cache.v.push(new Float32Array(K * capacity * dh));
    }
    return cache;
  }

  /** A copy of a cache's first `length` positions (to run two continuations from one prompt). */
  copyCache(cache, length = cache.length, capacity = cache.capacity) {
    const out = this.newCache(capacity);
    const { K, dh } = this.cfg;
    for (let l = 0; l < this.cfg.L; l++) {
      for (let g = 0; g < K; g++) {
        out.k[l].set(cache.k[l].subarray(g * cache.capacity * dh, (g * cache.capacity + length) * dh), g * capacity * dh);
        out.v[l].set(cache.v[l].subarray(g * cache.capacity * dh, (g * cache.capacity + length) * dh), g * capacity * dh);
      }
    }
    out.length = length;
    return out;
  }

  rmsnorm(src, dst, n, w) {
    const d = this.cfg.d, eps = this.cfg.eps;
    for (let r = 0; r < n; r++) {
      const o = r * d;
      let ss = 0;
      for (let i = 0; i < d; i++) ss += src[o + i] * src[o + i];
      const scale = Math.fround(Math.sqrt(Math.fround(Math.fround(ss / d) + eps)));
      for (let i = 0; i < d; i++) dst[o + i] = Math.fround(src[o + i] / scale) * w[i];
    }
  }

  /** Turn each adjacent pair of every head's numbers by its position's angles (the file's row order). */
  rotate(buf, n, heads, start) {
    const dh = this.cfg.dh, half = dh / 2, width = heads * dh;
    for (let r = 0; r < n; r++) {
      const pos = Math.fround(start + r);
      for (let i = 0; i < half; i++) {
        const angle = Math.fround(pos * this.invFreq[i]);
        const c = Math.fround(Math.cos(angle)), s = Math.fround(Math.sin(angle));
        for (let h = 0; h < heads; h++) {
          const o = r * width + h * dh + 2 * i;
          const a = buf[o], b = buf[o + 1];
          buf[o] = a * c - b * s;
          buf[o + 1] = b * c + a * s;
        }
      }
    }
  }

  /** The stream of `ids` through every block, appended to `cache`. Options:
   *   hooks  {name: [fn(rows, info)]}  (see the module's note)
   *   keep   fn(name) -> bool: which patterns and streams to copy into the result's `kept`
   *   logits "last" (default), "all" or "none": which positions to read out
   *   from, stream   start at block `from` with `stream` as the residual stream before it [n, d] (patching:
   *          the positions before these are in `cache`, the blocks before `from` are not run)
   * Returns {logits: Float32Array [rows, vocab] (rows: 1, n or 0), kept: {name: Float32Array}}. */
  forward(ids, cache, options = {}) {
    const { d, H, K, dh, L, dm } = this.cfg;
    const n = ids.length, start = cache.length;
    if (n < 1 || n > MAX_ROWS) throw new ModelError(`a pass takes 1 to ${MAX_ROWS} positions, got ${n}`);
    if (start + n > cache.capacity) throw new ModelError(`the cache holds ${cache.capacity} positions`);
    const hooks = options.hooks || {}, keep = options.keep || (() => false), kept = {};
    const info = { start, n };
    const hook = (name, rows) => {
      for (const fn of hooks[name] || []) fn(rows, info);
      if (keep(name)) kept[name] = rows.slice();
    };
    const b = this.buf, w = this.work;
    const x = b.x.subarray(0, n * d);
    const from = options.from || 0;
    if (options.stream) {
      x.set(options.stream);
    } else {
      this.embedRows(ids, x);
      hook("embed", x);
    }
    const group = H / K, scale = 1 / Math.sqrt(dh);
    for (let l = from; l < L; l++) {
      const blk = this.blocks[l], p = `blocks.${l}.`;
      hook(p + "resid_pre", x);
      this.rmsnorm(x, b.xn, n, blk.attnNorm);
      this.matmul(blk.q, w.xn, n, w.q);
      this.matmul(blk.k, w.xn, n, w.k);
      this.matmul(blk.v, w.xn, n, w.v);
      const q = b.q, k = b.k, v = b.v;
      this.rotate(q, n, H, start);
      this.rotate(k, n, K, start);
      const ck = cache.k[l], cv = cache.v[l], cap = cache.capacity;
      for (let r = 0; r < n; r++) {
        for (let g = 0; g < K; g++) {
          ck.set(k.subarray(r * K * dh + g * dh, r * K * dh + (g + 1) * dh), (g * cap + start + r) * dh);
          cv.set(v.subarray(r * K * dh + g * dh, r * K * dh + (g + 1) * dh), (g * cap + start + r) * dh);
        }
      }
      const keys = start + n;
      const wantPattern = keep(p + "attn.pattern");
      const pattern = wantPattern ? new Float32Array(H * n * keys) : null;
      const z = b.z, scores = this.scratch(keys);
      for (let h = 0; h < H; h++) {
        const g = Math.floor(h / group), kb = g * cap * dh;
        for (let r = 0; r < n; r++) {
          const qo = r * H * dh + h * dh, last = start + r;
          let max = -Infinity;
          for (let s = 0; s <= last; s++) {
            // four sums in turn (one would wait on each addition before the next), added as a pair of pairs
            const ko = kb + s * dh;
            let d0 = 0, d1 = 0, d2 = 0, d3 = 0;
            for (let i = 0; i < dh; i += 4) {
              d0 += q[qo + i] * ck[ko + i];
              d1 += q[qo + i + 1] * ck[ko + i + 1];
              d2 += q[qo + i + 2] * ck[ko + i + 2];
              d3 += q[qo + i + 3] * ck[ko + i + 3];
            }
            const sc = Math.fround(Math.fround((d0 + d1) + (d2 + d3)) * scale);
            scores[s] = sc;
            if (sc > max) max = sc;
          }
          let sum = 0;
          for (let s = 0; s <= last; s++) { scores[s] = Math.exp(scores[s] - max); sum += scores[s]; }
          for (let s = 0; s <= last; s++) {
            const pr = Math.fround(scores[s] / sum);
            scores[s] = pr;
            if (pattern) pattern[(h * n + r) * keys + s] = pr;
          }
          // each of the head's numbers summed over the keys, eight numbers at a time
          const zo = r * H * dh + h * dh;
          for (let i = 0; i < dh; i += 8) {
            let a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
            for (let s = 0, vo = kb + i; s <= last; s++, vo += dh) {
              const pr = scores[s];
              a0 += pr * cv[vo]; a1 += pr * cv[vo + 1]; a2 += pr * cv[vo + 2]; a3 += pr * cv[vo + 3];
              a4 += pr * cv[vo + 4]; a5 += pr * cv[vo + 5]; a6 += pr * cv[vo + 6]; a7 += pr * cv[vo + 7];
            }
            z[zo + i] = a0; z[zo + i + 1] = a1; z[zo + i + 2] = a2; z[zo + i + 3] = a3;
            z[zo + i + 4] = a4; z[zo + i + 5] = a5; z[zo + i + 6] = a6; z[zo + i + 7] = a7;
          }
        }
      }
      if (pattern) kept[p + "attn.pattern"] = pattern;
      hook(p + "attn.z", z.subarray(0, n * H * dh));
      this.matmul(blk.o, w.z, n, w.o);
      for (let i = 0; i < n * d; i++) x[i] += b.o[i];
      hook(p + "resid_mid", x);
      this.rmsnorm(x, b.xn, n, blk.ffnNorm);
      this.matmul(blk.gate, w.xn, n, w.g);
      this.matmul(blk.up, w.xn, n, w.u);
      this.kernel.silu_mul(w.g, w.u, n * dm);          // SiLU(gate) * up, in place of the gate
      this.matmul(blk.down, w.g, n, w.o);
      for (let i = 0; i < n * d; i++) x[i] += b.o[i];
      hook(p + "resid_post", x);
    }
    cache.length = start + n;
    const which = options.logits || "last";
    let logits = new Float32Array(0);
    if (which !== "none") {
      const rows = which === "all" ? [...Array(n).keys()] : [n - 1];
      logits = this.readOut(x, rows);
    }
    return { logits, kept, n };
  }

  /** The final norm and the tied read-out of the given rows of a stream [*, d]: Float32Array [rows, vocab]. */
  readOut(stream, rows) {
    const { d, vocab } = this.cfg;
    const out = new Float32Array(rows.length * vocab);
    for (let s = 0; s < rows.length; s += LOGIT_ROWS) {
      const chunk = rows.slice(s, s + LOGIT_ROWS);
      const tmp = new Float32Array(chunk.length * d);
      chunk.forEach((r, j) => tmp.set(stream.subarray(r * d, (r + 1) * d), j * d));
      this.rmsnorm(tmp, this.buf.xn, chunk.length, this.finalNorm);
      this.matmul(this.embed, this.work.xn, chunk.length, this.work.logits);
      out.set(this.buf.logits.subarray(0, chunk.length * vocab), s * vocab);
    }
    return out;
  }

  /** Each id's embedding row, widened from its Q8_0 blocks (d * q, as the library's dequantization). */
  embedRows(ids, out) {
    const { d, vocab } = this.cfg, nb = d / 32, rowBytes = nb * 34;
    const lut = this.heap, bytes = this.bytes;
    for (let r = 0; r < ids.length; r++) {
      const id = ids[r];
      if (!(id >= 0 && id < vocab)) throw new ModelError(`token id ${id} is not in the vocabulary`);
      let at = this.embed.at + id * rowBytes;
      for (let blk = 0; blk < nb; blk++, at += 34) {
        const scale = lut[(bytes[at] | (bytes[at + 1] << 8))];
        for (let i = 0; i < 32; i++) {
          const qv = bytes[at + 2 + i];
          out[r * d + blk * 32 + i] = Math.fround((qv > 127 ? qv - 256 : qv) * scale);
        }
      }
    }
  }

  /** How much of the kernel's memory the model holds, in bytes. */
  memoryBytes() { return this.memory.buffer.byteLength; }
}

/** Where each work buffer sits in the kernel's memory (after the file), and the end. */
function workLayout(cfg, fileEnd) {
  const align = (n) => Math.ceil(n / 64) * 64;
  let at = align(fileEnd);
  const out = { accBytes: FILE - ACC };
  const take = (name, floats) => { out[name] = at; at = align(at + 4 * floats); };
  const { d, dm, vocab } = cfg;
  for (const name of ["x", "xn", "q", "k", "v", "z", "o"]) take(name, MAX_ROWS * d);
  take("g", MAX_ROWS * dm);
  take("u", MAX_ROWS * dm);
  take("logits", LOGIT_ROWS * vocab);
  out.end = at;
  return out;
}
