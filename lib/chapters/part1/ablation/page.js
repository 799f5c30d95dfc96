/* The page twins of the ablation chapter: its explorers' views (ablation, activation patching, the
 * real model's attention) and its checks' computations.
 *
 * The real model's view reads the patterns the site's build stored (real.js): each weight within 1/510
 * of the library's; a sentence the site did not compute gets a sentence saying so (a kernel runs the
 * model on any).
 */
import { PATCH_MIN_CHANGE } from "../../../explorers/js/constants.js";
import { formatG, pyRepr, pyStrip } from "../../../explorers/js/python.js";
import { readRound } from "../../../explorers/js/game.js";
import { realPatterns } from "../../../explorers/js/real.js";
import { CourseError, greedy, order, require, say, softmax } from "../../../explorers/js/readout.js";
import { asNumber, checkChoice, checkWhole } from "../../../explorers/js/rules.js";
import {
  ablationHooks,
  allHeads,
  headName,
  inFrames,
  parsePosition,
  patchingGrid,
  patchingSteps,
  swapPlayers,
  switchedOff,
  tokensOf,
} from "../../../explorers/js/twins.js";

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

/** The query box (lib.explorers.real_attention.parse_query): a position, a token, or blank for the first pronoun. */
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
    // lib.exercises.ablation.lost_each_way: lib.analysis.head_survey.ablation_survey's lost count for one
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
    // lib.exercises.ablation.best_patch: the patching explorer's grid, its head rows' largest cell (the first).
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
