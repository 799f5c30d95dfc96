/* What the chapters' page twins share: the helpers of the explorers' views and of the exercises'
 * page checks that more than one chapter uses, and the check computations several chapters declare.
 *
 * Each chapter's own twins live in its unit (lib/chapters/PART/UNIT/page.js: its explorers' views,
 * its checks' computations); the build assembles them into one table (units.js, written by
 * lib/explorers/web.py), which views.js and checks.js read. This module imports no unit.
 */
import { pyInt, pyRepr, pySplit, pyStrip } from "./python.js";
import { tokenRoles } from "./game.js";
import { zeroHooks } from "./model.js";
import { CourseError, greedy, require, say, softmax, uniform } from "./readout.js";

export const headName = (l, h) => `L${l}H${h}`;
export const tokensOf = (model, ids) => ids.map((i) => model.vocab.tokens[i]);
export const argmax = (row) => { let b = 0; for (let j = 1; j < row.length; j++) if (row[j] > row[b]) b = j; return b; };

/** A residual checkpoint's name for a reader (lib.analysis.lens.stage_label). */
export function stageLabel(stage) {
  if (stage === "embed") return "embedding";
  const [, layer, kind] = stage.split(".");
  return `${kind === "mlp" ? "MLP" : "attention"} ${layer}`;
}

/** The heads whose switches are on, as [layer, head], in the library's order. */
export function switchedOff(model, v) {
  const out = [];
  for (let l = 0; l < model.nLayers; l++) for (let h = 0; h < model.nHeads; h++) if (v[headName(l, h)]) out.push([l, h]);
  return out;
}

// ----------------------------------------------------------------------------- ablation (a view's and a check's)

const ABLATION_KINDS = ["zero", "mean", "resample"], MATCHES = ["role", "position"];

/** The round a resample takes its writes from, for a prompt of n tokens (lib.analysis.ablation.resample_picks):
 *  the seed's roll number `roll` (the prompt's place in a batch; the first for one prompt) picks among the
 *  reference rounds at least n long, in their order. */
function resamplePick(reference, n, seed = 0, roll = 0) {
  const candidates = [];
  reference.rounds.forEach((r, i) => { if (r.length >= n) candidates.push(i); });
  return candidates[Math.floor(uniform(BigInt(seed), roll) * candidates.length)];
}

/** Each hook point's writes at every position of reference round `r`, from the round's own pass (kept on
 *  the reference: a role-matched resample reads a few rounds again and again). */
function roundWrites(model, ref, r) {
  ref.writesOf = ref.writesOf || new Map();
  if (!ref.writesOf.has(r)) {
    const seen = {}, record = {};
    const keep = (rows, name) => { seen[name] = rows.slice(); };
    for (let l = 0; l < model.nLayers; l++) { record[`blocks.${l}.attn.head_out`] = [keep]; if (model.hasMlp) record[`blocks.${l}.mlp_out`] = [keep]; }
    model.forward(ref.rounds[r], { hooks: record });      // hooks that only read
    ref.writesOf.set(r, seen);
  }
  return ref.writesOf.get(r);
}

/** The reference rounds' positions by role, in round order (lib.analysis.ablation.Reference.role_slots). */
function roleSlots(model, ref) {
  if (!ref.slots) {
    ref.slots = new Map();
    ref.rounds.forEach((round, r) => tokenRoles(round.map((i) => model.vocab.tokens[i])).forEach((role, p) => {
      if (!ref.slots.has(role)) ref.slots.set(role, []);
      ref.slots.get(role).push([r, p]);
    }));
  }
  return ref.slots;
}

/** Hooks that switch heads and MLPs off the `kind` way, for the prompt `ids`
 *  (lib.analysis.ablation.ablation_hooks): zero writes nothing; mean the reference set's average write;
 *  resample what one reference round wrote. `match` "role" (the course's default, where the model's corpus
 *  names its tokens' roles): at each position, the mean over the reference positions of that token's role,
 *  or the write at one of them drawn from the seeded stream, position by position, from its `roll`-th number
 *  on (a role the reference never shows takes the position-matched mean). `match` "position": the average at
 *  the same position, or one whole reference round (`roll`: the prompt's place in a batch). */
export function ablationHooks(model, heads, mlps, kind, ids, seed = 0, roll = 0, match = "role") {
  require(ABLATION_KINDS.includes(kind), say("ablation_kind", { kind: pyRepr(kind), kinds: ABLATION_KINDS.join(", ") }));
  require(MATCHES.includes(match), `a reference is matched by one of: ${MATCHES.join(", ")}; got ${pyRepr(match)}`);
  if (kind === "zero") return zeroHooks(heads, mlps);
  const ref = model.reference, n = ids.length;
  require(ref, `${model.name} has no reference set for ${kind} ablation`);
  const H = model.nHeads, D = model.cfg.d_model;
  const slice = (data, p, h) => (h < 0 ? data.subarray(p * D, (p + 1) * D) : data.subarray((p * H + h) * D, (p * H + h + 1) * D));
  const positionMean = (name, p, h) => slice(ref.means[name].data, p, h);
  let source;       // hook point -> (position, head or -1) -> the value written there
  if (match === "role" && ref.roleMeans) {
    const slots = roleSlots(model, ref);
    let k = roll;
    const from = tokenRoles(ids.map((i) => model.vocab.tokens[i])).map((role, p) => {
      const where = slots.get(role);
      if (!where) {
        require(p < ref.longest, say("reference_too_short", { kind, longest: ref.longest, n: p + 1 }));
        return { p };
      }
      if (kind === "mean") return { role };
      return { slot: where[Math.floor(uniform(BigInt(seed), k++) * where.length)] };
    });
    source = (name, p, h) => {
      const f = from[p];
      if (f.role !== undefined) return slice(ref.roleMeans[name][f.role], 0, h);
      if (f.slot !== undefined) return slice(roundWrites(model, ref, f.slot[0])[name], f.slot[1], h);
      return positionMean(name, p, h);
    };
  } else {
    require(n <= ref.longest, say("reference_too_short", { kind, longest: ref.longest, n }));
    if (kind === "mean") source = positionMean;
    else {
      const seen = roundWrites(model, ref, resamplePick(ref, n, seed, roll));
      source = (name, p, h) => slice(seen[name], p, h);
    }
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

/** How many numbers of the seeded stream a role-matched resample of the prompt `ids` draws (one per position
 *  whose role the reference shows): the next prompt of a batch starts its draws after them. */
export function roleDraws(model, ids) {
  const ref = model.reference;
  if (!ref || !ref.roleMeans) return 0;
  const slots = roleSlots(model, ref);
  return tokenRoles(ids.map((i) => model.vocab.tokens[i])).filter((role) => slots.has(role)).length;
}

// ----------------------------------------------------------------------------- vectors
export const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
export const norm = (a) => Math.sqrt(dot(a, a));
export const cosine = (u, v) => { const n = norm(u) * norm(v); return n > 0 ? dot(u, v) / n : 0; };

/** Orthonormal axes from directions, in order (lib.analysis.maps.gram_schmidt). */
export function gramSchmidt(directions, tol = 1e-10) {
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
export function conceptPlane(x, d1, d2) {
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

export function embeddingRow(model, id) {
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

// ----------------------------------------------------------------------------- the patching grid (a view's and a check's)

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

// ----------------------------------------------------------------------------- the checks' computations
// Each is the twin of a check's `values` in Python: {expected, hints: [[text key, wrong value], ...]
// in the library's order, options (a choice's), fields (what the texts print)}.

const BASE = new URL("./", import.meta.url);

export function entropyBits(p) {
  let h = 0;
  for (const x of p) if (x > 0) h -= x * Math.log2(x);
  return h;
}

export function blockHeads(model, block) {
  return Array.from({ length: model.nHeads }, (_, h) => [block, h]);
}

export function allHeads(model) {
  return Array.from({ length: model.nLayers }, (_, l) => blockHeads(model, l)).flat();
}

/** A point set the site serves (lib.explorers.page.export_site): {labels, groups, vectors as doubles}. */
const POINTS = new Map();
export function points(name) {
  if (!POINTS.has(name)) {
    POINTS.set(name, fetch(new URL(`points/${name}.json`, BASE)).then((r) => r.json()).then((p) => {
      const bytes = Uint8Array.from(atob(p.vectors.float32), (c) => c.charCodeAt(0));
      const view = new DataView(bytes.buffer), [n, d] = p.vectors.shape;
      const vectors = Array.from({ length: n }, (_, i) => Array.from({ length: d }, (_, j) => view.getFloat32(4 * (i * d + j), true)));
      return { labels: p.labels, groups: p.groups, vectors };
    }));
  }
  return POINTS.get(name);
}

/** The best of `pool` by cosine with `target`; ties keep the pool's order (lib.analysis.maps.analogy). */
export function bestByCosine(target, pool, vectorOf) {
  let best = null, score = -Infinity;
  for (const w of pool) { const s = cosine(target, vectorOf(w)); if (s > score) { best = w; score = s; } }
  return best;
}

/** The eigenvalues of a symmetric matrix (cyclic Jacobi rotations), largest first. */
export function eigenvalues(A) {
  const n = A.length, a = A.map((r) => Float64Array.from(r));
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p][q] * a[p][q];
    if (off < 1e-30) break;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) {
      if (a[p][q] === 0) continue;
      const theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
      const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
      const c = 1 / Math.sqrt(t * t + 1), s = t * c;
      for (let k = 0; k < n; k++) {
        const akp = a[k][p], akq = a[k][q];
        a[k][p] = c * akp - s * akq; a[k][q] = s * akp + c * akq;
      }
      for (let k = 0; k < n; k++) {
        const apk = a[p][k], aqk = a[q][k];
        a[p][k] = c * apk - s * aqk; a[q][k] = s * apk + c * aqk;
      }
    }
  }
  return Array.from({ length: n }, (_, i) => a[i][i]).sort((x, y) => y - x);
}

/** Each principal component's share of the variance of the rows (lib.analysis.maps.pca's
 *  explained_variance_ratio_), from the centred rows' Gram matrix. */
export function varianceShares(rows) {
  const n = rows.length, d = rows[0].length;
  const mean = Array.from({ length: d }, (_, j) => rows.reduce((s, r) => s + r[j], 0) / n);
  const c = rows.map((r) => r.map((v, j) => v - mean[j]));
  const gram = c.map((u) => c.map((v) => dot(u, v)));
  const eig = eigenvalues(gram).slice(0, Math.min(n, d)).map((x) => Math.max(x, 0));
  const total = eig.reduce((s, x) => s + x, 0);
  return eig.map((x) => x / total);
}

const FRAME_MS = 4;

/** Runs `steps` (a generator) to its end, handing the browser its thread back after every FRAME_MS of
 *  work, so that a check of many passes never holds a frame; returns the generator's value. */
export async function inFrames(steps) {
  let step, start = performance.now();
  while (!(step = steps.next()).done) {
    if (performance.now() - start > FRAME_MS) {
      await new Promise((go) => setTimeout(go, 0));
      start = performance.now();
    }
  }
  return step.value;
}

/** lib.exercises.prompt_signs and lib.analysis.signs.read_signs for a typed prompt: the model's top word
 *  and its probability, and why the rules forbid the prompt (null where they allow it); or, where the model
 *  cannot read it, the open check's verdict saying so. */
export function promptSigns(model, text, whyNotAPrefix) {
  let probs;
  try {
    probs = softmax(model.promptLogits(model.encode(text)));
  } catch (e) {
    if (e instanceof CourseError) return { ok: false, key: "unreadable", fields: { error: e.message } };
    throw e;
  }
  const top = greedy(probs);
  return { top: model.vocab.tokens[top], top_prob: probs[top], why: whyNotAPrefix(pySplit(text)) };
}

/** The computations of checks that several chapters declare (each chapter's own are in its page.js). */
export const COMPUTE = {
  topWithHeadsOff(a, model) {
    const heads = a.block === undefined ? allHeads(model) : blockHeads(model, a.block);
    const expected = model.vocab.tokens[greedy(model.promptLogits(model.encode(a.prompt), { heads }))];
    return { expected, options: model.vocab.tokens, hints: Object.entries(a.wrong_tokens || {}) };
  },
};
