/* The page twins of the ablation chapter: its explorers' views (ablation, activation patching, the
 * real model's attention), its checks' computations, and what only they use: the hooks that switch heads
 * and MLPs off the zero, mean or resample way (the twin of lib.analysis.ablation.ablation_hooks) and the
 * patching grid (lib.analysis.patching.patch). Its exports beyond VIEWS and COMPUTE reach the tests and
 * the benchmark through the site's units.js (`UNITS["part1/ablation"]`).
 *
 * The real model's view reads the patterns the site's build stored (real.js): each weight within 1/510
 * of the library's; a sentence the site did not compute gets a sentence saying so (a kernel runs the
 * model on any).
 */
import { PATCH_MIN_CHANGE } from "../../../explorers/js/constants.js";
import { formatG, pyRepr, pyStrip } from "../../../explorers/js/python.js";
import { readRound, tokenRoles } from "../../../explorers/js/game.js";
import { zeroHooks } from "../../../explorers/js/model.js";
import { realPatterns } from "../../../explorers/js/real.js";
import { CourseError, greedy, order, require, say, softmax, uniform } from "../../../explorers/js/readout.js";
import { asNumber, checkChoice, checkWhole } from "../../../explorers/js/rules.js";
import { allHeads, headName, parsePosition, switchedOff, tokensOf } from "../../../explorers/js/twins.js";

// ----------------------------------------------------------------------------- ablation (the view's and the checks')

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
    const seen = {};
    model.forward(ref.rounds[r], { hooks: recordWrites(model, seen) });      // hooks that only read
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

// ----------------------------------------------------------------------------- the patching grid (the view's and a check's)

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

// ----------------------------------------------------------------------------- a check of many passes

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

// ----------------------------------------------------------------------------- the views

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

const PATCHED = new Map();
const DRAW_EVERY = 50;      // ms of the patching grid's work between two drawings of it in the page

const PRONOUNS = ["it", "he", "she", "they", "him", "her", "them", "its", "his", "their"];

/** The query box (lib.chapters.part1.ablation.explorers.parse_query): a position, a token, or blank for the first pronoun. */
export function parseQuery(text, tokens) {
  const t = pyStrip(text);
  if (t === "") {
    const found = tokens.findIndex((w) => PRONOUNS.includes(w));
    return found >= 0 ? found : Math.min(1, tokens.length - 1);
  }
  if (/^[0-9]+$/.test(t) && Number(t) < tokens.length) return Number(t);
  const at = tokens.indexOf(t.toLowerCase());
  if (at >= 0) return at;
  throw new CourseError(say("query", { last: tokens.length - 1, tokens: tokens.join(" "), got: pyRepr(t) }));
}

/** The real model's attention (VIEWS.real_attention). */
async function realAttention(_, v, a) {
  const data = await realPatterns(a.data);
  const text = pyStrip(v.sentence);
  const s = data.bySentence.get(text);
  if (!s) throw new CourseError(say("not_precomputed", { n: data.meta.sentences.length }));
  const { layers: L, heads: H, scale } = data.meta, T = s.tokens.length;
  const q = parseQuery(v.query, s.tokens);
  const bytes = await data.bytes(s);
  const at = (l, h, i, j) => bytes[((l * H + h) * T + i) * T + j] / scale;
  const layer = Number(v.layer), head = Number(v.head);
  const range = (n) => Array.from({ length: n }, (_, i) => i);
  return {
    sentence: text, tokens: s.tokens, special: s.special, layer, head, query: q,
    pattern: range(T).map((i) => range(T).map((j) => at(layer, head, i, j))),
    rows: range(L).map((l) => range(H).map((h) => range(T).map((j) => at(l, h, q, j)))),
  };
}

export const VIEWS = {
  ablation({ model }, v) {
    const ids = model.encode(v.prompt);
    const off = switchedOff(model, v);
    const mlps = [];
    for (let l = 0; l < model.nLayers; l++) if (v[`MLP${l}`]) mlps.push(l);
    const kind = v.kind === undefined ? "zero" : v.kind, match = v.match === undefined ? "role" : v.match;
    const hooks = off.length || mlps.length ? ablationHooks(model, off, mlps, kind, ids, 0, 0, match) : null;
    const run = model.run(ids, hooks ? { hooks, key: `${kind}|${match}|${JSON.stringify(off)}|${mlps}` } : {}, "patterns");
    const intact = hooks ? softmax(model.promptLogits(ids)) : softmax(run.logitsAt(ids.length - 1));
    const probs = softmax(run.logitsAt(ids.length - 1));
    const track = pyStrip(v.track);
    const trackId = track === "" ? greedy(intact) : model.vocab.id(track);
    const tokens = model.vocab.tokens, heads = [];
    for (let l = 0; l < model.nLayers; l++) for (let h = 0; h < model.nHeads; h++) heads.push([l, h]);
    return {
      tokens: tokensOf(model, ids), off: off.map(([l, h]) => headName(l, h)).concat(mlps.map((l) => `MLP ${l}`)),
      kind, match, page: order(probs).slice(0, 8).map((i) => [tokens[i], probs[i]]),
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
    // The page's start computes each explorer's starting view, not drawn (the build drew it): for the grid that
    // is every cell at once, about 0.7 s in one task that freezes the page. It is left to the first move, which
    // computes the grid a few cells at a time.
    if (context.starting) return null;
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
        position, recovered, page: order(probs).slice(0, 8).map((k) => [tokens[k], probs[k]]),
        // lib.chapters.part1.ablation.explorers.is_legal: a legal prefix of a round, for a calling-game model.
        legal: model.corpus === "calling-game" ? readRound(tokensOf(model, b)).status !== "broken" : null };
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

  real_attention: realAttention,      // the real model's stored patterns (real.js)
};

export const COMPUTE = {
  rankedHead(a, model) {
    // Every head switched off alone, ranked by how low it leaves the token (a stable sort, as Python's).
    const ids = model.encode(a.prompt), t = model.vocab.id(a.token);
    const ranked = allHeads(model)
      .map(([l, h]) => [`L${l}H${h}`, softmax(model.promptLogits(ids, { heads: [[l, h]] }))[t]])
      .sort((x, y) => x[1] - y[1]);
    const [best, drop] = ranked[a.rank - 1];
    return { expected: best, options: allHeads(model).map(([l, h]) => `L${l}H${h}`), hints: [["first", ranked[0][0]]],
      fields: { drop } };
  },

  async lostEachWay(a, model) {
    // lib.chapters.part1.ablation.checks.lost_each_way: lib.analysis.head_survey.ablation_survey's lost count for one
    // head, each way (the page's ablation explorer's hooks; a prompt's place in the set is its resample roll).
    const head = [[+a.head[1], +a.head[3]]], kinds = ["zero", "mean", "resample"];
    const p = (ids, t, off) => softmax(model.promptLogits(ids, off))[t];
    const counts = kinds.map(() => 0);
    await inFrames((function* passes() {       // 160 passes: a few at a time, the page kept answering
      for (let i = 0; i < a.prompts.length; i++) {
        const ids = model.encode(a.prompts[i]), t = model.vocab.id(a.targets[i]);
        if (p(ids, t, {}) < a.holds_at) continue;
        for (let k = 0; k < kinds.length; k++) {
          yield;
          const hooks = ablationHooks(model, head, [], kinds[k], ids, a.seed, i, "position");
          if (p(ids, t, { hooks }) < a.holds_at) counts[k] += 1;
        }
      }
    })());
    return { decide(answer) {
      const values = answer.kind === "tuple" ? answer.value.map(asNumber) : [];
      if (values.length !== kinds.length || values.some((v) => v === null || v !== Math.trunc(v))) return { ok: false, key: "three" };
      if (values.every((v, k) => v === counts[k])) return { ok: true, key: "right", fields: Object.fromEntries(kinds.map((k, i) => [k, counts[i]])) };
      const sorted = (xs) => xs.slice().sort((x, y) => x - y);
      if (sorted(values).every((v, k) => v === sorted(counts)[k])) return { ok: false, key: "order" };
      return { ok: false, key: "count", fields: { wrong: kinds.filter((_, k) => values[k] !== counts[k]).join(" and ") } };
    } };
  },

  async bestPatch(a, model) {
    // lib.chapters.part1.ablation.checks.best_patch: the patching explorer's grid, its head rows' largest cell (the first).
    const { grid } = await inFrames(patchingSteps(model, model.encode(a.clean), model.encode(a.corrupted),
      model.vocab.id(a.target), model.vocab.id(a.against)));
    const names = allHeads(model).map(([l, h]) => `L${l}H${h}`);
    let best = null;
    names.forEach((name, r) => grid[r].forEach((x, p) => { if (best === null || x > best[2]) best = [name, p, x]; }));
    return { decide(answer) {
      if (answer.kind !== "tuple" || answer.value.length !== 2) return { ok: false, key: "pair" };
      const [head, position] = answer.value;
      const r = checkChoice(head, names, best[0], "", a.texts.wrong_head, []);
      return r.ok ? checkWhole(position, best[1], "The position", []) : r;
    } };
  },
};
