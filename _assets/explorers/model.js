/* The course's Transformer in the page: the shipped weights, the library's forward pass.
 *
 * The same architecture as lib/model/transformer.py, written out per head: token (and, if the
 * model has them, position) embeddings; blocks of causal self-attention without biases and an
 * MLP (ReLU or GELU) with biases, each optionally behind a LayerNorm; an optional final
 * LayerNorm; an unembedding that is the embedding turned on its side when tied, plus its bias.
 * A model with no blocks (the zero-layer model) goes straight from the embedding to the read-out.
 *
 * Heads and MLPs switched off write zero into the residual stream (a switched-off head still
 * looks: its pattern is kept), exactly as the library's `ablate` and `ablate_mlps` do.
 * Weights are float32 as shipped; the arithmetic is in doubles.
 */
import { CourseError, require } from "./readout.js";
import { Vocabulary } from "./vocab.js";

/** The tensors of a .safetensors file: an 8-byte header length, a JSON header, raw little-endian data. */
export function readSafetensors(buffer) {
  const view = new DataView(buffer);
  const headerLength = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, headerLength)));
  const start = 8 + headerLength;
  const tensors = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    require(info.dtype === "F32", `tensor ${name} is ${info.dtype}; the page reads float32 weights only`);
    const [from, to] = info.data_offsets;
    const data = new Float32Array((to - from) / 4);
    for (let i = 0; i < data.length; i++) data[i] = view.getFloat32(start + from + 4 * i, true);
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
      const wo = i * m;
      for (let j = 0; j < m; j++) out[o + j] += xi * W[wo + j];
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

export class Model {
  /** `meta`: {name, config, vocab} as in the model's meta.json; `tensors`: from readSafetensors. */
  constructor(meta, tensors) {
    this.name = meta.name;
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
    const D = cfg.d_model, V = cfg.vocab_size, Dh = cfg.d_head;
    this.heads = [];
    for (let l = 0; l < cfg.n_layers; l++) {
      const p = `blocks.${l}.attn.`;
      this.heads.push(Array.from({ length: cfg.n_heads }, (_, h) => ({
        Q: w[p + "W_Q"].subarray(h * D * Dh, (h + 1) * D * Dh),
        K: w[p + "W_K"].subarray(h * D * Dh, (h + 1) * D * Dh),
        V: w[p + "W_V"].subarray(h * D * Dh, (h + 1) * D * Dh),
        O: w[p + "W_O"].subarray(h * Dh * D, (h + 1) * Dh * D),
      })));
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
      `the prompt has ${ids.length} tokens but ${this.name} reads at most ${this.cfg.n_ctx}`);
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
        `head (${l}, ${h}) does not exist: layers run 0 to ${this.nLayers - 1}, heads 0 to ${this.nHeads - 1}`);
    }
  }

  /**
   * The forward pass of one prompt. `off`: {heads: [[layer, head], ...], mlps: [layer, ...]}.
   * Returns {ids, stages: {name: [position] -> residual [d_model]} in forward order,
   * patterns: [layer][head][query] -> [key], logitsAt(position)}.
   */
  run(ids, off = {}) {
    const heads = off.heads || [], mlps = off.mlps || [];
    this.checkHeads(heads);
    for (const l of mlps) require(Number.isInteger(l) && l >= 0 && l < this.nLayers,
      `layer ${l} does not exist: layers run 0 to ${this.nLayers - 1}`);
    const cfg = this.cfg, w = this.w, T = ids.length, D = cfg.d_model, Dh = cfg.d_head;
    require(T >= 1, "the prompt is empty: give at least one token");
    require(T <= cfg.n_ctx, `the prompt has ${T} tokens but the model's context holds at most ${cfg.n_ctx}`);
    const silenced = new Set(heads.map(([l, h]) => `${l},${h}`));
    let resid = new Float64Array(T * D);
    for (let p = 0; p < T; p++) {
      for (let d = 0; d < D; d++) {
        resid[p * D + d] = w.W_E[ids[p] * D + d] + (this.positions ? w.W_pos[p * D + d] : 0);
      }
    }
    const stages = { embed: rowsOf(resid, T, D) };
    const patterns = [];
    const scale = Math.sqrt(Dh);
    for (let l = 0; l < this.nLayers; l++) {
      const p = `blocks.${l}.`;
      const x = w[p + "ln1.w"] ? layerNorm(resid, T, D, w[p + "ln1.w"], w[p + "ln1.b"]) : resid;
      const next = resid.slice();
      const layerPatterns = [];
      this.heads[l].forEach((W, h) => {
        const q = matmul(x, T, D, W.Q, Dh), k = matmul(x, T, D, W.K, Dh), v = matmul(x, T, D, W.V, Dh);
        // Scores scaled by sqrt(d_head), the future masked, softmax per query row.
        const pattern = new Float64Array(T * T);
        for (let i = 0; i < T; i++) {
          let max = -Infinity;
          for (let j = 0; j <= i; j++) {
            let s = 0;
            for (let e = 0; e < Dh; e++) s += q[i * Dh + e] * k[j * Dh + e];
            s /= scale;
            pattern[i * T + j] = s;
            if (s > max) max = s;
          }
          let sum = 0;
          for (let j = 0; j <= i; j++) { const a = Math.exp(pattern[i * T + j] - max); pattern[i * T + j] = a; sum += a; }
          for (let j = 0; j <= i; j++) pattern[i * T + j] /= sum;
        }
        layerPatterns.push(rowsOf(pattern, T, T));
        if (silenced.has(`${l},${h}`)) return;      // it looks, but writes nothing
        const z = matmul(pattern, T, T, v, Dh);
        const out = matmul(z, T, Dh, W.O, D);
        for (let i = 0; i < T * D; i++) next[i] += out[i];
      });
      patterns.push(layerPatterns);
      resid = next;
      stages[p + "attn"] = rowsOf(resid, T, D);
      if (this.hasMlp) {
        if (!mlps.includes(l)) {
          const xin = w[p + "ln2.w"] ? layerNorm(resid, T, D, w[p + "ln2.w"], w[p + "ln2.b"]) : resid;
          const post = matmul(xin, T, D, w[p + "mlp.W_in"], cfg.d_mlp, w[p + "mlp.b_in"]);
          if (this.act === "relu") { for (let i = 0; i < post.length; i++) if (post[i] < 0) post[i] = 0; }
          else for (let i = 0; i < post.length; i++) post[i] = ACTIVATIONS.gelu(post[i]);
          const out = matmul(post, T, cfg.d_mlp, w[p + "mlp.W_out"], D, w[p + "mlp.b_out"]);
          const next2 = resid.slice();
          for (let i = 0; i < T * D; i++) next2[i] += out[i];
          resid = next2;
        }
        stages[p + "mlp"] = rowsOf(resid, T, D);
      }
    }
    const last = resid;
    return { ids, stages, patterns, logitsAt: (position) => this.readOut(last.subarray(position * D, (position + 1) * D)) };
  }

  /** The model's own last step on any residual vector: final LayerNorm (if any), unembedding, bias. */
  readOut(residual) {
    const w = this.w, D = this.cfg.d_model;
    const x = w["ln_final.w"] ? layerNorm(residual, 1, D, w["ln_final.w"], w["ln_final.b"]) : residual;
    return matmul(x, 1, D, this.W_U, this.cfg.vocab_size, w.b_U);
  }

  /** The logits for the token after `ids` (lib.model.readout.prompt_logits). */
  promptLogits(ids, off = {}) {
    return this.run(ids, off).logitsAt(ids.length - 1);
  }
}

const LOADED = new Map();

/** A shipped model, fetched once per page from the site's models folder (`base` ends with "/"). */
export function loadModel(base, name) {
  if (!LOADED.has(name)) {
    LOADED.set(name, (async () => {
      const [meta, weights] = await Promise.all([
        fetch(`${base}${name}.json`).then((r) => { if (!r.ok) throw new CourseError(`model ${name} not found`); return r.json(); }),
        fetch(`${base}${name}.safetensors`).then((r) => r.arrayBuffer()),
      ]);
      return new Model(meta, readSafetensors(weights));
    })());
  }
  return LOADED.get(name);
}

export { CourseError };
