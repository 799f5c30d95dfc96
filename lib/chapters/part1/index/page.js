/* The page twin of Part 1's map (the part's index page): the whole machine at once
 * (lib/chapters/part1/index/explorers.py). It runs the model with the parts switched off (zero hooks,
 * as the library's `ablate=` and `ablate_mlps=`) and hooks that read each head's and MLP's write, then
 * measures every write along the answer's unembedding: the same fields and numbers as the library's
 * view (tests/browser/test_site_model.py).
 */
import { order, softmax } from "../../../explorers/js/readout.js";
import { parsePosition, tokensOf } from "../../../explorers/js/twins.js";

/** Every part in the order the residual stream meets it (machine.machine_parts): [name, label]. */
function machineParts(model) {
  const parts = [["embed", "embedding + positions"]];
  for (let l = 0; l < model.nLayers; l++) {
    for (let h = 0; h < model.nHeads; h++) parts.push([`L${l}H${h}`, `L${l}H${h}`]);
    if (model.hasMlp) parts.push([`MLP${l}`, `MLP ${l}`]);
  }
  return parts.concat([["readout", "read-out"]]);
}

const RUNS = new Map();

/** One pass with `heads` and `mlps` switched off, each part's write [T][d_model] read by hooks. */
function machineRun(model, ids, heads, mlps) {
  const key = `${model.name}|${ids}|${JSON.stringify(heads)}|${mlps}`;
  if (RUNS.has(key)) return RUNS.get(key);
  const T = ids.length, D = model.cfg.d_model, H = model.nHeads, writes = {};
  const hooks = {};
  for (let l = 0; l < model.nLayers; l++) {
    hooks[`blocks.${l}.attn.head_out`] = [(rows) => {
      for (let h = 0; h < H; h++) writes[`L${l}H${h}`] = Array.from({ length: T }, (_, p) => rows.slice((p * H + h) * D, (p * H + h + 1) * D));
    }];
    if (model.hasMlp) hooks[`blocks.${l}.mlp_out`] = [(rows) => {
      writes[`MLP${l}`] = Array.from({ length: T }, (_, p) => rows.slice(p * D, (p + 1) * D));
    }];
  }
  const run = model.forward(ids, { heads, mlps, hooks }, false);
  writes.embed = run.stages.embed.map((r) => Float64Array.from(r));
  const out = { run, writes };
  RUNS.set(key, out);
  if (RUNS.size > 8) RUNS.delete(RUNS.keys().next().value);
  return out;
}

function dot(a, U, V, t) {
  let s = 0;
  for (let d = 0; d < a.length; d++) s += a[d] * U[d * V + t];
  return s;
}

export const VIEWS = {
  machine({ model }, v, a = {}) {
    const ids = model.encode(v.prompt), T = ids.length;
    const p = parsePosition(v.position, T);
    const heads = [], mlps = [];
    for (let l = 0; l < model.nLayers; l++) {
      for (let h = 0; h < model.nHeads; h++) if (v[`L${l}H${h}`]) heads.push([l, h]);
      if (v[`MLP${l}`]) mlps.push(l);
    }
    const { run, writes } = machineRun(model, ids, heads, mlps);
    const V = model.cfg.vocab_size, U = model.W_U, tokens = model.vocab.tokens, bias = model.w.b_U;
    const probs = softmax(run.logitsAt(p));
    const ranked = order(probs), answer = ranked[0];
    const names = machineParts(model).map(([n]) => n).slice(0, -1);
    const dla = (n) => writes[n].map((w) => dot(w, U, V, answer));
    const norm = (n) => writes[n].map((w) => Math.sqrt(w.reduce((s, x) => s + x * x, 0)));
    const lens = (resid) => {
      const q = softmax(model.readOut(resid));
      return order(q).slice(0, 5).map((i) => [tokens[i], q[i]]);
    };
    const part = v.part;
    const detail = { part, pattern: null, dla: null, norm: null, lens: null, stage: null };
    if (part === "embed") {
      Object.assign(detail, { dla: dla(part), norm: norm(part), lens: lens(writes.embed[p]), stage: "embedding" });
    } else if (part.startsWith("L")) {
      const l = +part[1], h = +part.slice(3);
      Object.assign(detail, { pattern: run.patterns[l][h].map((r) => Array.from(r)), dla: dla(part), norm: norm(part),
        lens: lens(run.stages[`blocks.${l}.attn`][p]), stage: `attention ${l}` });
    } else if (part.startsWith("MLP")) {
      const l = +part.slice(3);
      Object.assign(detail, { dla: dla(part), norm: norm(part), lens: lens(run.stages[`blocks.${l}.mlp`][p]), stage: `MLP ${l}` });
    }
    const off = heads.map(([l, h]) => `L${l}H${h}`).concat(mlps.map((l) => `MLP${l}`));
    return { tokens: tokensOf(model, ids), position: p, parts: names, off, answer: tokens[answer],
      logit: run.logitsAt(p)[answer], bias: bias ? bias[answer] : 0,
      dla: names.map((n) => dla(n)[p]), norm: names.map((n) => norm(n)[p]),
      page: ranked.slice(0, a.k || 8).map((i) => [tokens[i], probs[i]]), detail };
  },
};
