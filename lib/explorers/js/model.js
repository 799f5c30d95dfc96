/* The course's Transformer in the page: the shipped weights, the library's forward pass.
 *
 * The same architecture as lib/model/transformer.py, written out per head: token (and, if the
 * model has them, position) embeddings; blocks of causal self-attention without biases and an
 * MLP (ReLU or GELU) with biases, each optionally behind a LayerNorm; an optional final
 * LayerNorm; an unembedding that is the embedding turned on its side when tied, plus its bias.
 * A model with no blocks (the zero-layer model) goes straight from the embedding to the read-out.
 *
 * Interventions are hooks by name, as in lib/model/hooks.py: `off.hooks` maps a hook point's name
 * to functions `fn(rows, name, info)` that may change the rows in place (or return new ones).
 * The page's hook points: `blocks.L.resid_pre` [T, d_model], `blocks.L.attn.head_out` [R, head,
 * d_model] and `blocks.L.mlp_out` [R, d_model], flat Float64Arrays whose row r is position info.from + r
 * (R = T - info.from: a lastOnly pass works out the last block's last position alone). Heads and MLPs
 * switched off (`off.heads`, `off.mlps`) are zero hooks (`zeroHooks`), exactly as the library's
 * `ablate` and `ablate_mlps`; mean and resample ablation and patching are other hooks (views.js).
 * Weights are float32 as shipped; the arithmetic is in doubles.
 */
import { CourseError, require, say } from "./readout.js";
import { Vocabulary } from "./vocab.js";

/** One IEEE half-precision number (its 16 bits) as a double. */
function half(bits) {
  const sign = bits & 0x8000 ? -1 : 1, exp = (bits >> 10) & 0x1f, frac = bits & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;                       // subnormal (and zero)
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** The tensors of a .safetensors file: an 8-byte header length, a JSON header, raw little-endian data.
 *  Float32 weights, and float16 (the checkpoints over training) widened exactly. */
export function readSafetensors(buffer) {
  const view = new DataView(buffer);
  const headerLength = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, headerLength)));
  const start = 8 + headerLength;
  const tensors = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    require(info.dtype === "F32" || info.dtype === "F16",
      `tensor ${name} is ${info.dtype}; the page reads float32 and float16 weights only`);
    const [from, to] = info.data_offsets;
    const size = info.dtype === "F32" ? 4 : 2;
    const data = new Float32Array((to - from) / size);
    if (size === 4) for (let i = 0; i < data.length; i++) data[i] = view.getFloat32(start + from + 4 * i, true);
    else for (let i = 0; i < data.length; i++) data[i] = half(view.getUint16(start + from + 2 * i, true));
    tensors[name] = { shape: info.shape, data };
  }
  return tensors;
}

/** X [rows, n] times W [n, m], plus a bias [m] if given: a new Float64Array [rows, m] (row-major). */
function matmul(X, rows, n, W, m, bias = null) {
  const out = new Float64Array(rows * m);
  for (let r = 0; r < rows; r++) {
    const o = r * m, xo = r * n;
    if (bias) for (let j = 0; j < m; j++) out[o + j] = bias[j];
    for (let i = 0; i < n; i++) {
      const xi = X[xo + i];
      if (xi === 0) continue;
      // Four columns a step: the same sums in the same order, with a quarter of the loop's overhead
      // (this loop is most of the forward pass).
      const wo = i * m;
      let j = 0;
      for (; j + 3 < m; j += 4) {
        out[o + j] += xi * W[wo + j]; out[o + j + 1] += xi * W[wo + j + 1];
        out[o + j + 2] += xi * W[wo + j + 2]; out[o + j + 3] += xi * W[wo + j + 3];
      }
      for (; j < m; j++) out[o + j] += xi * W[wo + j];
    }
  }
  return out;
}

/** LayerNorm of each row of X [rows, d]: centred, divided by its spread (eps 1e-5), scaled, shifted. */
function layerNorm(X, rows, d, w, b, eps = 1e-5) {
  const out = new Float64Array(rows * d);
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    let mean = 0;
    for (let i = 0; i < d; i++) mean += X[o + i];
    mean /= d;
    let variance = 0;
    for (let i = 0; i < d; i++) variance += (X[o + i] - mean) * (X[o + i] - mean);
    const scale = Math.sqrt(variance / d + eps);
    for (let i = 0; i < d; i++) out[o + i] = ((X[o + i] - mean) / scale) * w[i] + b[i];
  }
  return out;
}

/** erf to about 1e-15 (a series near zero, a continued fraction beyond), for the exact GELU. */
function erf(x) {
  const ax = Math.abs(x);
  if (ax < 2.5) {
    let term = ax, sum = ax;
    for (let n = 1; n < 200; n++) {
      term *= (-ax * ax) / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  // erfc(x) = exp(-x^2) / sqrt(pi) * 1 / (x + 1/2 / (x + 1 / (x + 3/2 / (x + ...))))
  let f = ax;
  for (let n = 60; n >= 1; n--) f = ax + (n / 2) / f;
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / f;
  return Math.sign(x) * (1 - erfc);
}

const ACTIVATIONS = {
  relu: (v) => (v > 0 ? v : 0),
  gelu: (v) => 0.5 * v * (1 + erf(v / Math.SQRT2)),   // torch's exact GELU
};

/** The rows of a [rows, d] buffer, as arrays a chapter's view can read. */
function rowsOf(X, rows, d) {
  return Array.from({ length: rows }, (_, r) => X.subarray(r * d, (r + 1) * d));
}

/** Hooks that make the listed heads ([layer, head]) and MLPs (layers) write zero. */
export function zeroHooks(heads = [], mlps = []) {
  const hooks = {};
  const add = (name, fn) => { (hooks[name] = hooks[name] || []).push(fn); };
  for (const [l, h] of heads) {
    add(`blocks.${l}.attn.head_out`, (rows, name, info) => {
      for (let r = 0; r < info.rows; r++) rows.fill(0, (r * info.heads + h) * info.d, (r * info.heads + h + 1) * info.d);
    });
  }
  for (const l of mlps) add(`blocks.${l}.mlp_out`, (rows) => { rows.fill(0); });
  return hooks;
}

/** Two sets of hooks as one: on a shared name, the first set's functions run first. */
export function joinHooks(a, b) {
  const out = {};
  for (const set of [a, b]) for (const [name, fns] of Object.entries(set || {})) {
    out[name] = (out[name] || []).concat(Array.isArray(fns) ? fns : [fns]);
  }
  return out;
}

function runHooks(hooks, name, rows, info) {
  const fns = hooks[name];
  if (!fns) return rows;
  for (const fn of fns) {
    const out = fn(rows, name, info);
    if (out !== undefined) rows = out;
  }
  return rows;
}

export class Model {
  /** `meta`: {name, config, vocab} as in the model's meta.json; `tensors`: from readSafetensors. */
  constructor(meta, tensors) {
    this.name = meta.name;
    this.corpus = meta.corpus || null;      // the corpus it was trained on (its game's rules apply to its prompts)
    this.cfg = meta.config;
    this.vocab = new Vocabulary(meta.vocab);
    const cfg = this.cfg;
    this.positions = cfg.positions !== false;
    this.hasMlp = cfg.d_mlp > 0;
    this.act = cfg.act || "relu";
    require(this.act in ACTIVATIONS, `unknown activation ${cfg.act}`);
    // Every weight as doubles, once (the loops then see one kind of array), and each head's slices.
    const w = {};
    for (const [name, t] of Object.entries(tensors)) w[name] = Float64Array.from(t.data);
    this.w = w;
    const D = cfg.d_model, V = cfg.vocab_size, Dh = cfg.d_head, H = cfg.n_heads;
    // Each layer's heads side by side: W_Q, W_K, W_V as one [d_model, head * d_head] matrix and W_O
    // as one [head * d_head, d_model]. The arithmetic is the library's per-head arithmetic (a head's
    // columns are its own query, key and value; a switched-off head's z is zero, so its rows of W_O
    // add nothing), done in longer loops.
    this.layers = [];
    for (let l = 0; l < cfg.n_layers; l++) {
      const p = `blocks.${l}.attn.`;
      const side = (W) => {
        const out = new Float64Array(D * H * Dh);
        for (let h = 0; h < H; h++) for (let d = 0; d < D; d++) for (let e = 0; e < Dh; e++) {
          out[d * H * Dh + h * Dh + e] = W[h * D * Dh + d * Dh + e];
        }
        return out;
      };
      this.layers.push({ Q: side(w[p + "W_Q"]), K: side(w[p + "W_K"]), V: side(w[p + "W_V"]), O: w[p + "W_O"] });
    }
    // The unembedding [d_model, vocab]: with tied weights, the embedding turned on its side.
    if (cfg.tied !== false) {
      this.W_U = new Float64Array(D * V);
      for (let v = 0; v < V; v++) for (let d = 0; d < D; d++) this.W_U[d * V + v] = w.W_E[v * D + d];
    } else {
      this.W_U = w.W_U_own;
    }
  }

  get nLayers() { return this.cfg.n_layers; }
  get nHeads() { return this.cfg.n_heads; }

  /** Token ids of a prompt; the library's messages for an empty, unknown or too long prompt. */
  encode(text) {
    const ids = this.vocab.encode(text);
    require(ids.length <= this.cfg.n_ctx,
      say("reads_at_most", { n: ids.length, model: this.name, n_ctx: this.cfg.n_ctx }));
    return ids;
  }

  /** Residual checkpoints in forward order (lib.analysis.lens.stage_names). */
  stageNames() {
    const names = ["embed"];
    for (let l = 0; l < this.nLayers; l++) {
      names.push(`blocks.${l}.attn`);
      if (this.hasMlp) names.push(`blocks.${l}.mlp`);
    }
    return names;
  }

  checkHeads(heads) {
    for (const [l, h] of heads) {
      require(Number.isInteger(l) && Number.isInteger(h) && l >= 0 && l < this.nLayers && h >= 0 && h < this.nHeads,
        say("no_head", { layer: l, head: h, last_layer: this.nLayers - 1, last_head: this.nHeads - 1 }));
    }
  }

  /** The forward pass, remembered: moving a slider that does not change the prompt or the
   *  components switched off (temperature, top-k, a seed) reuses the last passes. */
  run(ids, off = {}, lastOnly = false) {
    // Hooks are functions: a pass with hooks is remembered only under the key its caller names.
    if (off.hooks && off.key === undefined) return this.forward(ids, off, lastOnly);
    const key = `${ids.join(",")}|${JSON.stringify(off.heads || [])}|${JSON.stringify(off.mlps || [])}|${off.key || ""}|${lastOnly}`;
    this.memo = this.memo || new Map();
    if (this.memo.has(key)) {
      const hit = this.memo.get(key);
      this.memo.delete(key);
      this.memo.set(key, hit);            // the most recent last
      return hit;
    }
    const result = this.forward(ids, off, lastOnly);
    this.memo.set(key, result);
    if (this.memo.size > 8) this.memo.delete(this.memo.keys().next().value);
    return result;
  }

  /**
   * The forward pass of one prompt. `off`: {heads: [[layer, head], ...], mlps: [layer, ...], hooks: {name: fn | [fn]}}.
   * Returns {ids, stages: {name: [position] -> residual [d_model]} in forward order,
   * patterns: [layer][head][query] -> [key], logitsAt(position)}.
   *
   * With `lastOnly`, the last block works out the last position alone (the others' keys and values
   * are all it needs from them): every stage is right at the last position, the last block's other
   * rows and patterns are left out. A third less work, for the views that read only the last position.
   * With `lastOnly = "patterns"`, the same, but every pattern of the last block is kept: the views
   * that show patterns and the last position's read-out (a quarter less work than a whole pass).
   */
  forward(ids, off = {}, lastOnly = false) {
    const heads = off.heads || [], mlps = off.mlps || [];
    this.checkHeads(heads);
    for (const l of mlps) require(Number.isInteger(l) && l >= 0 && l < this.nLayers,
      say("no_layer", { layer: l, last_layer: this.nLayers - 1 }));
    const cfg = this.cfg, w = this.w, T = ids.length, D = cfg.d_model, Dh = cfg.d_head, H = cfg.n_heads;
    require(T >= 1, say("empty_ids"));
    require(T <= cfg.n_ctx, say("context_holds", { n: T, n_ctx: cfg.n_ctx }));
    const hooks = joinHooks(zeroHooks(heads, mlps), off.hooks);
    // `off.start` = {layer, resid}: begin at that block's residual stream [T, d_model], given (patching:
    // the blocks before it are what they were in a run already made).
    const first = off.start ? off.start.layer : 0;
    let resid;
    if (off.start) {
      resid = off.start.resid.slice();
    } else {
      resid = new Float64Array(T * D);
      for (let p = 0; p < T; p++) {
        for (let d = 0; d < D; d++) {
          resid[p * D + d] = w.W_E[ids[p] * D + d] + (this.positions ? w.W_pos[p * D + d] : 0);
        }
      }
    }
    const stages = { embed: rowsOf(resid, T, D) };
    const patterns = [];
    const scale = Math.sqrt(Dh);
    for (let l = 0; l < first; l++) patterns.push(null);
    for (let l = first; l < this.nLayers; l++) {
      const p = `blocks.${l}.`;
      if (hooks[p + "resid_pre"]) resid = runHooks(hooks, p + "resid_pre", resid, { from: 0, rows: T, d: D });
      const x = w[p + "ln1.w"] ? layerNorm(resid, T, D, w[p + "ln1.w"], w[p + "ln1.b"]) : resid;
      const W = this.layers[l], HD = H * Dh;
      // The rows this block works out: all, or in the last block of a lastOnly pass the last; the
      // query rows (the patterns) likewise, except that a "patterns" pass keeps every pattern.
      const lastBlock = l === this.nLayers - 1;
      const from = lastOnly && lastBlock ? T - 1 : 0, R = T - from;
      const qFrom = lastOnly === true && lastBlock ? T - 1 : 0, Rq = T - qFrom;
      const q = matmul(x.subarray(qFrom * D), Rq, D, W.Q, HD), k = matmul(x, T, D, W.K, HD), v = matmul(x, T, D, W.V, HD);
      const z = new Float64Array(R * HD);
      const layerPatterns = [];
      for (let h = 0; h < H; h++) {
        // Scores scaled by sqrt(d_head), the future masked, softmax per query row.
        const pattern = new Float64Array(Rq * T), o = h * Dh;
        for (let r = 0; r < Rq; r++) {
          const i = qFrom + r;
          let max = -Infinity;
          for (let j = 0; j <= i; j++) {
            let s = 0;
            for (let e = 0; e < Dh; e++) s += q[r * HD + o + e] * k[j * HD + o + e];
            s /= scale;
            pattern[r * T + j] = s;
            if (s > max) max = s;
          }
          let sum = 0;
          for (let j = 0; j <= i; j++) { const a = Math.exp(pattern[r * T + j] - max); pattern[r * T + j] = a; sum += a; }
          for (let j = 0; j <= i; j++) pattern[r * T + j] /= sum;
        }
        layerPatterns.push(qFrom ? null : rowsOf(pattern, T, T));
        for (let r = 0; r < R; r++) {
          const pr = (from - qFrom + r) * T;          // this row's place among the pattern's rows
          for (let j = 0; j <= from + r; j++) {
            const a = pattern[pr + j];
            for (let e = 0; e < Dh; e++) z[r * HD + o + e] += a * v[j * HD + o + e];
          }
        }
      }
      let attnOut;
      if (hooks[p + "attn.head_out"]) {
        // Each head's write on its own (z_h @ W_O[h]), a hook point; the layer's write is their sum.
        let perHead = new Float64Array(R * H * D);
        for (let r = 0; r < R; r++) for (let h = 0; h < H; h++) {
          const o = (r * H + h) * D;
          for (let e = 0; e < Dh; e++) {
            const ze = z[r * HD + h * Dh + e];
            if (ze === 0) continue;
            const wo = (h * Dh + e) * D;
            for (let d = 0; d < D; d++) perHead[o + d] += ze * W.O[wo + d];
          }
        }
        perHead = runHooks(hooks, p + "attn.head_out", perHead, { from, rows: R, heads: H, d: D });
        attnOut = new Float64Array(R * D);
        for (let r = 0; r < R; r++) for (let h = 0; h < H; h++) {
          const o = (r * H + h) * D;
          for (let d = 0; d < D; d++) attnOut[r * D + d] += perHead[o + d];
        }
      } else {
        attnOut = matmul(z, R, HD, W.O, D);
      }
      const next = resid.slice();
      for (let i = 0; i < R * D; i++) next[from * D + i] += attnOut[i];
      patterns.push(layerPatterns);
      resid = next;
      stages[p + "attn"] = rowsOf(resid, T, D);
      if (this.hasMlp) {
        {
          let out = this.mlpOut(l, resid.subarray(from * D), R);
          out = runHooks(hooks, p + "mlp_out", out, { from, rows: R, d: D });
          const next2 = resid.slice();
          for (let i = 0; i < R * D; i++) next2[from * D + i] += out[i];
          resid = next2;
        }
        stages[p + "mlp"] = rowsOf(resid, T, D);
      }
    }
    const last = resid, firstRight = lastOnly && this.nLayers ? T - 1 : 0;
    return { ids, stages, patterns, logitsAt: (position) => {
      require(position >= firstRight, "this pass worked out the last position alone");
      return this.readOut(last.subarray(position * D, (position + 1) * D));
    } };
  }

  /** Block l's MLP (behind its LayerNorm, if any) on R rows of the residual stream [R, d_model]: its write. */
  mlpOut(l, rows, R) {
    const w = this.w, D = this.cfg.d_model, p = `blocks.${l}.`;
    const xin = w[p + "ln2.w"] ? layerNorm(rows, R, D, w[p + "ln2.w"], w[p + "ln2.b"]) : rows;
    const post = matmul(xin, R, D, w[p + "mlp.W_in"], this.cfg.d_mlp, w[p + "mlp.b_in"]);
    if (this.act === "relu") { for (let i = 0; i < post.length; i++) if (post[i] < 0) post[i] = 0; }
    else for (let i = 0; i < post.length; i++) post[i] = ACTIVATIONS.gelu(post[i]);
    return matmul(post, R, this.cfg.d_mlp, w[p + "mlp.W_out"], D, w[p + "mlp.b_out"]);
  }

  /** The model's own last step on any residual vector: final LayerNorm (if any), unembedding, bias. */
  readOut(residual) {
    const w = this.w, D = this.cfg.d_model;
    const x = w["ln_final.w"] ? layerNorm(residual, 1, D, w["ln_final.w"], w["ln_final.b"]) : residual;
    return matmul(x, 1, D, this.W_U, this.cfg.vocab_size, w.b_U);
  }

  /** The logits for the token after `ids` (lib.model.readout.prompt_logits). */
  promptLogits(ids, off = {}) {
    return this.run(ids, off, true).logitsAt(ids.length - 1);
  }
}

/** A float32 matrix shipped as base64 of its little-endian bytes (lib.explorers.page._float32), as doubles. */
export function float32Of({ shape, float32 }) {
  const bytes = Uint8Array.from(atob(float32), (c) => c.charCodeAt(0));
  const dv = new DataView(bytes.buffer), out = new Float64Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = dv.getFloat32(4 * i, true);
  return { shape, data: out };
}

/** The reference set of mean and resample ablation as the library computed it at build time
 *  (lib.analysis.ablation.reference_set): {label, longest, rounds, means: {hook point: {shape, data}}},
 *  and roleMeans: {hook point: {role: data}} where the corpus names its tokens' roles (else null). */
function readReference(json) {
  const roleMeans = json.role_means ? Object.fromEntries(Object.entries(json.role_means).map(([k, byRole]) =>
    [k, Object.fromEntries(Object.entries(byRole).map(([role, v]) => [role, float32Of(v).data]))])) : null;
  return { label: json.label, longest: json.longest, rounds: json.rounds, roleMeans,
    means: Object.fromEntries(Object.entries(json.means).map(([k, v]) => [k, float32Of(v)])) };
}

const LOADED = new Map();

/** A shipped model, fetched once per page from the site's models folder (`base` ends with "/"), with its
 *  reference set of mean and resample ablation where it has one. */
export function loadModel(base, name) {
  if (!LOADED.has(name)) {
    LOADED.set(name, (async () => {
      const weighed = fetch(`${base}${name}.safetensors`).then((r) => r.arrayBuffer());
      weighed.catch(() => {});         // met again below
      const meta = await fetch(`${base}${name}.json`)
        .then((r) => { if (!r.ok) throw new CourseError(`model ${name} not found`); return r.json(); });
      // Only a model the site ships a reference set for asks for one (no request the server must refuse).
      const [weights, reference] = await Promise.all([weighed, meta.reference
        ? fetch(`${base}${name}.reference.json`).then((r) => (r.ok ? r.json() : null)).catch(() => null) : null]);
      const model = new Model(meta, readSafetensors(weights));
      model.reference = reference ? readReference(reference) : null;
      return model;
    })());
  }
  return LOADED.get(name);
}

export { CourseError };
