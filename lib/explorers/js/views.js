/* The explorers' views computed in the page: the twin of each `compute` in lib/explorers/catalogue.py.
 *
 * Each function takes the page's context ({model, points(name)}), the controls' values and the
 * explorer's fixed arguments, and returns the same view as the library: the same fields, the same
 * numbers (to float rounding: the library runs float32 weights in float32, the page in doubles),
 * the same messages for a bad value, checked in the same order. tests/browser/test_site_model.py
 * holds every function here to its Python twin.
 */
import { MAX_COUNT, PATCH_MIN_CHANGE } from "./constants.js";
import { formatG, pyFloat, pyInt, pyParseFloat, pyRepr, pyStrip } from "./python.js";
import { zeroHooks } from "./model.js";
import { MACHINE_VIEWS } from "./machine.js";
import { HAND_VIEWS } from "./views_hand.js";
import { realAttention } from "./real.js";
import {
  CourseError, checkTemperature, checkTopK, greedy, order, parseSeed, parseTopK, parseTopP, require, reshape, sample, say, softmax, uniform,
} from "./readout.js";

const headName = (l, h) => `L${l}H${h}`;

/** A residual checkpoint's name for a reader (lib.analysis.lens.stage_label). */
export function stageLabel(stage) {
  if (stage === "embed") return "embedding";
  const [, layer, kind] = stage.split(".");
  return `${kind === "mlp" ? "MLP" : "attention"} ${layer}`;
}

/** The heads whose switches are on, as [layer, head], in the library's order. */
function switchedOff(model, v) {
  const out = [];
  for (let l = 0; l < model.nLayers; l++) for (let h = 0; h < model.nHeads; h++) if (v[headName(l, h)]) out.push([l, h]);
  return out;
}

const ABLATION_KINDS = ["zero", "mean", "resample"];

/** The round a resample takes its writes from, for a prompt of n tokens (lib.analysis.ablation.resample_picks):
 *  the seed's roll number `roll` (the prompt's place in a batch; the first for one prompt) picks among the
 *  reference rounds at least n long, in their order. */
function resamplePick(reference, n, seed = 0, roll = 0) {
  const candidates = [];
  reference.rounds.forEach((r, i) => { if (r.length >= n) candidates.push(i); });
  return candidates[Math.floor(uniform(BigInt(seed), roll) * candidates.length)];
}

/** Hooks that switch heads and MLPs off the `kind` way, for a prompt of n tokens
 *  (lib.analysis.ablation.ablation_hooks): zero writes nothing; mean the reference set's average write at
 *  each position; resample what one reference round wrote there (`roll`: the prompt's place in a batch). */
export function ablationHooks(model, heads, mlps, kind, n, seed = 0, roll = 0) {
  require(ABLATION_KINDS.includes(kind), say("ablation_kind", { kind: pyRepr(kind), kinds: ABLATION_KINDS.join(", ") }));
  if (kind === "zero") return zeroHooks(heads, mlps);
  const ref = model.reference;
  require(ref, `${model.name} has no reference set for ${kind} ablation`);
  require(n <= ref.longest, say("reference_too_short", { kind, longest: ref.longest, n }));
  const H = model.nHeads, D = model.cfg.d_model;
  let source;       // hook point -> (position, head or -1) -> the value written there
  if (kind === "mean") {
    source = (name, p, h) => { const m = ref.means[name].data; return h < 0 ? m.subarray(p * D, (p + 1) * D) : m.subarray((p * H + h) * D, (p * H + h + 1) * D); };
  } else {
    const round = ref.rounds[resamplePick(ref, n, seed, roll)].slice(0, n);
    const seen = {};
    const keep = (rows, name) => { seen[name] = rows.slice(); };
    const record = {};
    for (let l = 0; l < model.nLayers; l++) { record[`blocks.${l}.attn.head_out`] = [keep]; if (model.hasMlp) record[`blocks.${l}.mlp_out`] = [keep]; }
    // Hooks that only read: the round's own pass, each head's write and each MLP's output kept.
    model.forward(round, { hooks: record });
    source = (name, p, h) => (h < 0 ? seen[name].subarray(p * D, (p + 1) * D) : seen[name].subarray((p * H + h) * D, (p * H + h + 1) * D));
  }
  const hooks = {};
  const add = (name, fn) => { (hooks[name] = hooks[name] || []).push(fn); };
  for (const [l, h] of heads) {
    add(`blocks.${l}.attn.head_out`, (rows, name, info) => {
      for (let r = 0; r < info.rows; r++) rows.set(source(name, info.from + r, h), (r * H + h) * D);
    });
  }
  for (const l of mlps) {
    add(`blocks.${l}.mlp_out`, (rows, name, info) => {
      for (let r = 0; r < info.rows; r++) rows.set(source(name, info.from + r, -1), r * D);
    });
  }
  return hooks;
}

const tokensOf = (model, ids) => ids.map((i) => model.vocab.tokens[i]);
const best = (probs, k, tokens) => order(probs).filter((i) => probs[i] > 0).slice(0, k).map((i) => [tokens[i], probs[i]]);

// ----------------------------------------------------------------------------- vectors
const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
const norm = (a) => Math.sqrt(dot(a, a));

/** Orthonormal axes from directions, in order (lib.analysis.maps.gram_schmidt). */
function gramSchmidt(directions, tol = 1e-10) {
  const axes = [];
  directions.forEach((d, i) => {
    let v = Array.from(d);
    for (const e of axes) {
      const c = dot(v, e);
      v = v.map((x, j) => x - c * e[j]);
    }
    const n = norm(v);
    require(n > tol, say("direction_in_span", { i: i + 1 }));
    axes.push(v.map((x) => x / n));
  });
  return axes;
}

/** The rows of x on the plane of d1 and (d2 made orthogonal to d1) (lib.analysis.maps.concept_plane). */
function conceptPlane(x, d1, d2) {
  const axes = gramSchmidt([d1, d2]);
  const coords = x.map((row) => axes.map((a) => dot(row, a)));
  const dim = d1.length, mean = new Array(dim).fill(0);
  for (const row of x) row.forEach((val, j) => { mean[j] += val / x.length; });
  let total = 0, inPlane = 0;
  for (const row of x) {
    const c = Array.from(row, (val, j) => val - mean[j]);
    total += dot(c, c);
    for (const a of axes) inPlane += dot(c, a) ** 2;
  }
  return { coords, spread: total > 0 ? inPlane / total : 0, rawOverlap: dot(d1, d2) / (norm(d1) * norm(d2)) };
}

function embeddingRow(model, id) {
  const D = model.cfg.d_model;
  return Array.from(model.w.W_E.subarray(id * D, (id + 1) * D));
}

// ----------------------------------------------------------------------------- parsers shared with the library

/** lib.explorers.boxes.parse_position */
export function parsePosition(text, n) {
  const s = pyStrip(text);
  if (["", "last"].includes(s.toLowerCase())) return n - 1;
  const value = pyInt(s);
  const p = value === null ? -1 : Number(value);
  require(p >= 0 && p < n, say("position", { last: n - 1, n, got: pyRepr(s) }));
  return p;
}

/** lib.analysis.maps.views.parse_axis: "Paolo - Pietro" -> [plus words, minus words]. */
function parseAxis(text, labels) {
  const pieces = String(text || "").match(/[+-]|[^\s+-]+/g) || [];
  const plus = [], minus = [];
  let sign = "+";
  for (const piece of pieces) {
    if (piece === "+" || piece === "-") { sign = piece; continue; }
    require(labels.includes(piece), say("not_a_label", { piece: pyRepr(piece), labels: labels.join(" ") }));
    (sign === "+" ? plus : minus).push(piece);
    sign = "+";
  }
  require(plus.length || minus.length, say("empty_axis"));
  return [plus, minus];
}

function axisVector(points, text) {
  const [plus, minus] = parseAxis(text, points.labels);
  const dim = points.vectors[0].length;
  const mean = (ws) => {
    const m = new Array(dim).fill(0);
    for (const w of ws) points.vectors[points.labels.indexOf(w)].forEach((x, j) => { m[j] += x; });
    return m.map((x) => x / ws.length);
  };
  let v = new Array(dim).fill(0);
  if (plus.length) v = mean(plus);
  if (minus.length) { const m = mean(minus); v = v.map((x, j) => x - m[j]); }
  const tidy = (plus.join(" + ") + minus.map((w) => ` - ${w}`).join("")).trim();
  require(norm(v) > 1e-9, say("zero_axis", { axis: tidy }));
  return [v, tidy];
}

// lib.analysis.inventory's _shown: a long value cut to 20 characters and "...".
const shown = (text) => (text.length <= 24 ? text : `${text.slice(0, 20)}...`);
const KV_SIZES = [["layers", "layers"], ["context", "context (tokens)"], ["heads", "heads"], ["d_head", "d_head"]];

// ----------------------------------------------------------------------------- the views

const NAMED = ["Pietro", "Paolo"], NUMBERS = ["1", "2", "3", "4", "5", "6", "7", "8"];

/** lib.analysis.patching.swap_players with its default pair: the last call's caller swaps, everywhere,
 *  with the first player of the other kind that is not the callee. */
export function swapPlayers(text) {
  const tokens = pyStrip(text).split(/\s+/).filter((t) => t !== "");
  const calls = [];
  tokens.forEach((t, i) => { if (t === "chiama" && i > 0 && i < tokens.length - 1) calls.push(i); });
  require(calls.length > 0, say("no_call"));
  const last = calls[calls.length - 1], a = tokens[last - 1], callee = tokens[last + 1];
  require(NAMED.includes(a) || NUMBERS.includes(a), say("not_a_player", { caller: a }));
  const b = (NAMED.includes(a) ? NUMBERS : NAMED).find((p) => p !== callee);
  return tokens.map((t) => (t === a ? b : t === b ? a : t)).join(" ");
}

/** Reads every head's write and MLP output of a pass: hooks that keep copies in `into`. */
function recordWrites(model, into) {
  const hooks = {}, keep = (rows, name) => { into[name] = rows.slice(); };
  for (let l = 0; l < model.nLayers; l++) {
    hooks[`blocks.${l}.attn.head_out`] = [keep];
    if (model.hasMlp) hooks[`blocks.${l}.mlp_out`] = [keep];
  }
  return hooks;
}

/** A hook that puts the clean run's value of one head's write (head >= 0) or MLP output at one position. */
function patchHook(model, source, position, head) {
  const H = model.nHeads, D = model.cfg.d_model;
  return (rows, name, info) => {
    const r = position - info.from;
    if (r < 0) return;          // a lastOnly pass's last block: rows before the last reach nothing
    if (head < 0) rows.set(source[name].subarray(position * D, (position + 1) * D), r * D);
    else rows.set(source[name].subarray((position * H + head) * D, (position * H + head + 1) * D), (r * H + head) * D);
  };
}

/** The patching grid (lib.analysis.patching.patch): rows are heads, then MLPs, then the residual stream
 *  before each block and after the last; a cell the fraction of the
 *  logit difference its patch brings back. `onRow(i, row)`, if given, hears each row as it is done.
 *
 *  The same runs as the library's, made cheaper by where a patch can reach: a write patched into block l
 *  at position p changes block l's output at p alone (attention reads the stream before the block's
 *  writes; the MLP works row by row), so a patched run is the corrupted run's stream after block l with
 *  that one row worked out again, carried through the later blocks; in the last block only the last
 *  position reaches the answer. */
export function patchingGrid(model, cleanIds, corruptedIds, target, against, onRow = null) {
  const steps = patchingSteps(model, cleanIds, corruptedIds, target, against);
  let step, heard = 0;
  while (!(step = steps.next()).done) {
    const { grid } = step.value;
    for (; onRow && heard < grid.length - 1; heard++) onRow(heard, grid[heard]);
  }
  for (; onRow && heard < step.value.grid.length; heard++) onRow(heard, step.value.grid[heard]);
  return step.value;
}

/** The grid's work in steps, for a page that draws it as it comes: yields {grid, cleanDiff,
 *  corruptedDiff, source, components} once after the clean and corrupted runs, then after each cell
 *  (the rows begun so far; a cell not computed yet is null); returns the whole. */
export function* patchingSteps(model, cleanIds, corruptedIds, target, against) {
  const T = cleanIds.length, H = model.nHeads, L = model.nLayers, D = model.cfg.d_model;
  const source = {}, seen = {};
  // Each run's head writes, MLP outputs and residual stream before each block, kept.
  const record = (into) => {
    const hooks = recordWrites(model, into), keep = (rows, name) => { into[name] = rows.slice(); };
    for (let l = 0; l < L; l++) hooks[`blocks.${l}.resid_pre`] = [keep];
    return hooks;
  };
  const clean = model.forward(cleanIds, { hooks: record(source) });
  const corrupted = model.forward(corruptedIds, { hooks: record(seen) });
  const lc = clean.logitsAt(T - 1), lk = corrupted.logitsAt(T - 1);
  const cleanDiff = lc[target] - lc[against], corruptedDiff = lk[target] - lk[against];
  // The corrupted run's stream after each block's attention: before the block plus every head's write.
  const mid = [];
  for (let l = 0; l < L; l++) {
    const m = seen[`blocks.${l}.resid_pre`].slice(), heads = seen[`blocks.${l}.attn.head_out`];
    for (let p = 0; p < T; p++) for (let h = 0; h < H; h++) for (let d = 0; d < D; d++) m[p * D + d] += heads[(p * H + h) * D + d];
    mid.push(m);
  }
  const after = (l) => (l + 1 < L ? seen[`blocks.${l + 1}.resid_pre`] : null);
  /** The logit difference when block l's output at position p is `row` (the rest as in the corrupted run). */
  const diffWith = (l, p, row) => {
    let logits;
    if (l === L - 1) {
      logits = model.readOut(row);
    } else {
      const resid = after(l).slice();
      resid.set(row, p * D);
      logits = model.forward(corruptedIds, { start: { layer: l + 1, resid } }, true).logitsAt(T - 1);
    }
    return (logits[target] - logits[against] - corruptedDiff) / (cleanDiff - corruptedDiff);
  };
  const components = [];
  for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) components.push([`blocks.${l}.attn.head_out`, h, l]);
  if (model.hasMlp) for (let l = 0; l < L; l++) components.push([`blocks.${l}.mlp_out`, -1, l]);
  // The residual stream before each block, and after the last (head -2: the whole stream at a position).
  for (let l = 0; l <= L; l++) components.push([l < L ? `blocks.${l}.resid_pre` : "resid_final", -2, l]);
  const grid = [], done = { grid, cleanDiff, corruptedDiff, source, components: components.length };
  yield done;
  for (const [name, head, l] of components) {
    const row = new Array(T).fill(null);
    grid.push(row);
    if (head === -2) {
      if (l === L) {
        // The stream after the last block, patched at the last position, is the clean run's: all of
        // the difference comes back; at any other position nothing reaches the answer.
        row.fill(0, 0, T - 1);
        row[T - 1] = 1;
        yield done;
        continue;
      }
      for (let p = 0; p < T; p++) {
        // The corrupted run from block l on, its stream at p the clean one.
        const resid = seen[name].slice();
        resid.set(source[name].subarray(p * D, (p + 1) * D), p * D);
        const logits = model.forward(corruptedIds, { start: { layer: l, resid } }, true).logitsAt(T - 1);
        row[p] = (logits[target] - logits[against] - corruptedDiff) / (cleanDiff - corruptedDiff);
        yield done;
      }
      continue;
    }
    if (l === L - 1) row.fill(0, 0, T - 1);     // in the last block only the last position reaches the answer
    for (let p = l === L - 1 ? T - 1 : 0; p < T; p++) {
      const m = mid[l].slice(p * D, (p + 1) * D);
      if (head >= 0) {
        // Block l's stream at p after attention, with head h's write the clean one, then its MLP.
        const o = (p * H + head) * D;
        for (let d = 0; d < D; d++) m[d] += source[name][o + d] - seen[name][o + d];
        if (model.hasMlp) { const out = model.mlpOut(l, m, 1); for (let d = 0; d < D; d++) m[d] += out[d]; }
      } else {
        for (let d = 0; d < D; d++) m[d] += source[name][p * D + d];
      }
      row[p] = diffWith(l, p, m);
      yield done;
    }
  }
  return done;
}


const PATCHED = new Map();
const DRAW_EVERY = 50;      // ms of the patching grid's work between two drawings of it in the page

export const VIEWS = {
  temperature({ model }, v, a) {
    const ids = model.encode(v.prompt);
    const probs = reshape(model.promptLogits(ids), v.temperature);
    return { tokens: tokensOf(model, ids), temperature: v.temperature, page: best(probs, a.k, model.vocab.tokens) };
  },

  sampling({ model }, v, a) {
    const topK = parseTopK(v.top_k), topP = parseTopP(v.top_p), seed = parseSeed(v.seed);
    checkTemperature(v.temperature);             // before the prompt, as sampling_view checks it
    const ids = model.encode(v.prompt);
    const logits = model.promptLogits(ids);
    const base = softmax(logits), heated = softmax(logits, v.temperature);
    const final = reshape(logits, v.temperature, topK, topP);
    const tokens = model.vocab.tokens;
    const rows = order(base).slice(0, a.k).map((i) => ({ token: tokens[i], base: base[i], heated: heated[i], final: final[i] }));
    const chosen = v.greedy ? greedy(logits) : sample(logits, v.temperature, topK, topP, seed);
    return {
      tokens: tokensOf(model, ids), temperature: v.temperature, top_k: checkTopK(topK, tokens.length), top_p: topP,
      greedy: Boolean(v.greedy), seed: String(seed), rows, chosen: tokens[chosen], chosen_prob: final[chosen],
      survivors: final.filter((p) => p > 0).length,
    };
  },

  lens({ model }, v, a) {
    const ids = model.encode(v.prompt);
    const position = parsePosition(v.position, ids.length);
    // The model reads causally: what sits at `position` depends on the tokens up to it alone.
    const run = model.run(ids.slice(0, position + 1), {}, true);
    const stages = model.stageNames().map((name) => softmax(model.readOut(run.stages[name][position])));
    const track = pyStrip(v.track);
    const tokens = model.vocab.tokens;
    const trackId = track === "" ? greedy(stages[stages.length - 1]) : model.vocab.id(track);
    return {
      tokens: tokensOf(model, ids), position, stages: model.stageNames().map(stageLabel),
      top: stages.map((p) => order(p).slice(0, a.k).map((i) => [tokens[i], p[i]])),
      track: tokens[trackId], track_probs: stages.map((p) => p[trackId]),
      track_ranks: stages.map((p) => order(p).indexOf(trackId) + 1),
    };
  },

  pattern({ model }, v) {
    const ids = model.encode(v.prompt);
    const run = model.run(ids, {}, "patterns");
    return { tokens: tokensOf(model, ids), layer: v.layer, head: v.head,
      pattern: run.patterns[v.layer][v.head].map((r) => Array.from(r)) };
  },

  ablation({ model }, v) {
    const ids = model.encode(v.prompt);
    const off = switchedOff(model, v);
    const mlps = [];
    for (let l = 0; l < model.nLayers; l++) if (v[`MLP${l}`]) mlps.push(l);
    const kind = v.kind === undefined ? "zero" : v.kind;
    const hooks = off.length || mlps.length ? ablationHooks(model, off, mlps, kind, ids.length) : null;
    const run = model.run(ids, hooks ? { hooks, key: `${kind}|${JSON.stringify(off)}|${mlps}` } : {}, "patterns");
    const intact = hooks ? softmax(model.promptLogits(ids)) : softmax(run.logitsAt(ids.length - 1));
    const probs = softmax(run.logitsAt(ids.length - 1));
    const track = pyStrip(v.track);
    const trackId = track === "" ? greedy(intact) : model.vocab.id(track);
    const tokens = model.vocab.tokens, heads = [];
    for (let l = 0; l < model.nLayers; l++) for (let h = 0; h < model.nHeads; h++) heads.push([l, h]);
    return {
      tokens: tokensOf(model, ids), off: off.map(([l, h]) => headName(l, h)).concat(mlps.map((l) => `MLP ${l}`)),
      kind, page: order(probs).slice(0, 8).map((i) => [tokens[i], probs[i]]),
      heads: heads.map(([l, h]) => headName(l, h)), patterns: heads.map(([l, h]) => run.patterns[l][h].map((r) => Array.from(r))),
      track: tokens[trackId], track_prob: probs[trackId], track_prob_intact: intact[trackId],
    };
  },

  /** With `progress` in the context (the page), a grid not computed before is computed a row at a
   *  few cells at a time, yielding to the browser between: `progress(view)` hears each partial view (the
   *  cells not computed yet are null, the rows not begun null) and `stale()`, when true, stops the work
   *  (a control moved since). Without it
   *  (the tests, a pick of another cell), the whole view at once. */
  patching(context, v) {
    const { model } = context;
    const corruptedText = v.swap ? swapPlayers(v.corrupted) : v.corrupted;
    const a = model.encode(v.clean), b = model.encode(corruptedText);
    require(a.length === b.length, say("patch_lengths", { clean: a.length, corrupted: b.length }));
    const lc = model.run(a, {}, true).logitsAt(a.length - 1), lk = model.run(b, {}, true).logitsAt(b.length - 1);
    const target = pyStrip(v.target), against = pyStrip(v.against);
    const t = target ? model.vocab.id(target) : greedy(lc), u = against ? model.vocab.id(against) : greedy(lk);
    const tokens = model.vocab.tokens;
    if (t === u) {
      const said = !(target || against) ? "the clean run's top token and the corrupted run's are both"
        : "the target and the rival are both";
      throw new CourseError(say("patch_same_token", { said, token: pyRepr(tokens[t]) }));
    }
    const cd = lc[t] - lc[u], kd = lk[t] - lk[u];
    require(Math.abs(cd - kd) > PATCH_MIN_CHANGE, say("patch_no_change", { target: tokens[t], against: tokens[u], diff: formatG(cd, 6) }));
    const T = a.length, position = parsePosition(v.position, T);
    const rows = [], L = model.nLayers;
    for (let l = 0; l < L; l++) for (let h = 0; h < model.nHeads; h++) rows.push(headName(l, h));
    if (model.hasMlp) for (let l = 0; l < L; l++) rows.push(`MLP${l}`);
    for (let l = 0; l <= L; l++) rows.push(`resid ${l}`);
    const i = rows.indexOf(v.cell);
    const [name, head] = i < L * model.nHeads ? [`blocks.${Math.floor(i / model.nHeads)}.attn.head_out`, i % model.nHeads]
      : v.cell.startsWith("MLP") ? [`blocks.${v.cell.slice(3)}.mlp_out`, -1]
        : +v.cell.slice(6) < L ? [`blocks.${v.cell.slice(6)}.resid_pre`, -1] : ["resid_final", -1];
    let picked = null;      // the picked cell's patched run: one per call (its source is the clean run's)
    const pickedRun = (source) => (name === "resid_final"
      // The stream after the last block: the clean run's answer at the last position, else the corrupted one's.
      ? (position === T - 1 ? lc : lk)
      : model.forward(b, { hooks: { [name]: [patchHook(model, source, position, head)] } }, true).logitsAt(T - 1));
    const view = ({ grid, cleanDiff, corruptedDiff, source }) => {
      const logits = picked ||= pickedRun(source);
      const probs = softmax(logits);
      // Until its row is done, the picked cell's fraction is read from its own run (the same number).
      const recovered = grid[i] && grid[i][position] !== null ? grid[i][position]
        : (logits[t] - logits[u] - corruptedDiff) / (cleanDiff - corruptedDiff);
      return { clean: tokensOf(model, a), corrupted: tokensOf(model, b), target: tokens[t], against: tokens[u],
        clean_diff: cleanDiff, corrupted_diff: corruptedDiff, rows, grid: rows.map((_, k) => grid[k] || null), cell: v.cell,
        position, recovered, page: order(probs).slice(0, 8).map((k) => [tokens[k], probs[k]]) };
    };
    // Picking another cell reuses the grid: only the picked run's results page is new.
    const key = `${model.name}|${a}|${b}|${t}|${u}`;
    const keep = (done) => {
      PATCHED.set(key, done);
      if (PATCHED.size > 4) PATCHED.delete(PATCHED.keys().next().value);
      return done;
    };
    if (PATCHED.has(key)) return view(PATCHED.get(key));
    if (!context.progress) return view(keep(patchingGrid(model, a, b, t, u)));
    return (async () => {
      const steps = patchingSteps(model, a, b, t, u);
      // Drawn at its first cell, then every DRAW_EVERY ms of work: each drawing lets the browser paint
      // and hear the reader (a move makes this grid stale and stops it there).
      let step = steps.next(), drawn = null;
      while (!(step = steps.next()).done) {
        if (drawn !== null && performance.now() - drawn < DRAW_EVERY) continue;
        context.progress(view(step.value));
        await new Promise((go) => setTimeout(go, 0));
        if (context.stale && context.stale()) return null;
        drawn = performance.now();
      }
      return view(keep(step.value));
    })();
  },

  kv_cache(_, v) {
    const sizes = KV_SIZES.map(([name, label]) => {
      const n = pyInt(v[name]);
      require(n !== null, say("box_whole", { label, got: pyRepr(pyStrip(v[name])) }));
      return n;
    });
    const text = pyStrip(v.bytes);
    const per = pyParseFloat(text);
    require(per !== null, say("box_number", { got: pyRepr(text) }));
    // lib.analysis.inventory.kv_cache_bytes: its checks (counts and bytes up to MAX_COUNT, values
    // shown as Python's repr, cut like its _shown), then 2 x the sizes x the bytes per number.
    const maximum = MAX_COUNT.toLocaleString("en-US");
    KV_SIZES.forEach(([name], i) => require(sizes[i] >= 1n && sizes[i] <= BigInt(MAX_COUNT),
      say("whole_count", { name, maximum, got: shown(String(sizes[i])) })));
    require(per > 0 && per <= MAX_COUNT, say("bytes_per_element", { maximum, got: shown(pyFloat(per)) }));
    const total = Number(sizes.reduce((a, b) => a * b, 2n)) * per;
    require(Number.isFinite(total), say("cache_overflow"));
    return { layers: String(sizes[0]), context: String(sizes[1]), heads: String(sizes[2]), d_head: String(sizes[3]),
      bytes: per, total };
  },

  tsne(_, v, a) {
    // Every layout was computed in advance (lib.explorers.map_views.tsne_grid): a step looks one up.
    const stops = a.stops, steps = v.steps === undefined ? stops[stops.length - 1] : v.steps;
    require(stops.includes(steps), say("not_a_stop", { name: "iterations", value: steps, stops: stops.join(", ") }));
    const cells = ["left", "right"].map((side) => a.grid[`${v.perplexity}|${v[side]}|${steps}`]);
    return { points: a.points, points_label: a.points_label, labels: a.labels, labelled: a.labelled, groups: a.groups,
      perplexity: v.perplexity, seeds: [v.left, v.right], steps, layouts: cells.map((c) => c.layout),
      kept: cells.map((c) => c.kept), iterations: cells.map((c) => c.n_iter), kl: cells.map((c) => c.kl),
      converged: cells.map((c) => c.converged) };
  },

  async plane({ points }, v, a) {
    const ps = await points(v.points);
    const [d1, t1] = axisVector(ps, v.axis_1);
    const [d2, t2] = axisVector(ps, v.axis_2);
    try {
      gramSchmidt([d1, d2], 1e-9 * norm(d2));
    } catch (e) {
      if (!(e instanceof CourseError)) throw e;
      throw new CourseError(say("parallel_axes", { second: t2, first: t1 }));
    }
    const plane = conceptPlane(ps.vectors, d1, d2);
    return { points: v.points, points_label: a.labels[v.points], axes: [t1, t2], labels: ps.labels, groups: ps.groups,
      coords: plane.coords, spread: plane.spread, raw_overlap: plane.rawOverlap };
  },

  real_attention: realAttention,      // the real model's stored patterns (real.js)

  path({ model }, v) {
    const ids = model.encode(v.prompt);
    const toward = pyStrip(v.toward), against = pyStrip(v.against);
    const d1 = embeddingRow(model, model.vocab.id(toward)), d2 = embeddingRow(model, model.vocab.id(against));
    const heads = switchedOff(model, v);
    const mlps = [];
    for (let l = 0; l < model.nLayers; l++) if (v[`MLP${l}`]) mlps.push(l);
    const last = ids.length - 1, towardId = model.vocab.id(toward);
    const trajectory = (off) => {
      const run = model.run(ids, off, true);
      const points = model.stageNames().map((name) => Array.from(run.stages[name][last]));
      return { coords: conceptPlane(points, d1, d2).coords, prob: softmax(run.logitsAt(last))[towardId] };
    };
    const intact = trajectory({});
    const ablated = trajectory({ heads, mlps });
    const off = heads.map(([l, h]) => headName(l, h)).concat(mlps.map((m) => `MLP ${m}`));
    return {
      tokens: tokensOf(model, ids), toward, against, stages: model.stageNames().map(stageLabel),
      intact: intact.coords, ablated: off.length ? ablated.coords : null, off, prob: ablated.prob, prob_intact: intact.prob,
    };
  },
};

// Part 1's map (the rules checker, the whole machine): their twins live in machine.js.
Object.assign(VIEWS, MACHINE_VIEWS);
// The hand-worked chapters' views (views_hand.js).
Object.assign(VIEWS, HAND_VIEWS);
