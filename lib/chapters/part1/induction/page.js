/* The page twins of the induction chapter: the training explorer's view (one slider over the
 * checkpoints, each run in the page on a repeated sequence). The checkpoints are one float16 file the
 * site serves (`models/induction.checkpoints.safetensors`), fetched once, after the page is ready
 * (the page's start asks for it `later`): the page is ready without it.
 *
 * SmolLM2's induction heads (`smol_induction`, lib/chapters/part1/induction/smol.py): before the reader loads the
 * real model, the picture the build drew; then the model runs the reader's text in the page's worker
 * (lib/explorers/js/smollm2/ops.js `induction`), and the view is assembled here as `smol.run` assembles it.
 */
import { Model, readSafetensors } from "../../../explorers/js/model.js";
import { pyRepr, pyStrip } from "../../../explorers/js/python.js";
import { CourseError, require, say } from "../../../explorers/js/readout.js";
import { openingView } from "../../../explorers/js/real.js";

/** lib.chapters.part1.induction.explorers.mulberry32: floats in [0, 1) from a seed. */
export function mulberry32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6D2B79F5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1) >>> 0;
    t = (t ^ ((t + (Math.imul(t ^ (t >>> 7), t | 61) >>> 0)) >>> 0)) >>> 0;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LETTERS = "abcdefghijklmnopqrstuvwxyz".split("");

/** explorers.drawn_sequence: a period of 4 to 12 distinct letters, twice. */
export function drawnSequence(seed) {
  const rand = mulberry32(seed);
  const period = 4 + Math.floor(rand() * 9);
  const letters = LETTERS.slice();
  for (let i = letters.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [letters[i], letters[j]] = [letters[j], letters[i]];
  }
  const seg = letters.slice(0, period);
  return [...seg, ...seg];
}

function sequenceOf(v, a) {
  const typed = String(v.sequence).split(/\s+/).filter((x) => x !== "");
  const bad = typed.filter((x) => !LETTERS.includes(x));
  if (bad.length) throw new CourseError(`the sequence is lower-case letters a to z separated by spaces; ${pyRepr(bad[0])} is not one`);
  require(typed.length <= a.max_letters, `the model reads at most ${a.max_letters} letters, got ${typed.length}`);
  if (typed.length) return typed;
  const s = pyStrip(String(v.seed));
  require(/^[0-9]+$/.test(s) && Number(s) < a.seed_limit,
    `the seed is a whole number from 0 to ${a.seed_limit - 1}, got ${pyRepr(s)}`);
  return drawnSequence(Number(s));
}

/** explorers.previous_token_score and lib.analysis.induction.prefix_matching_score, on one pattern. */
function previousToken(p) {
  if (p.length < 2) return 0;
  let s = 0;
  for (let i = 1; i < p.length; i++) s += p[i][i - 1];
  return s / (p.length - 1);
}

function prefixMatching(p, tokens) {
  const shares = [];
  for (let i = 0; i < tokens.length; i++) {
    let s = 0, any = false;
    for (let j = 0; j < i; j++) if (tokens[j] === tokens[i]) { s += p[i][j + 1]; any = true; }
    if (any) shares.push(s);
  }
  return shares.length ? shares.reduce((x, y) => x + y, 0) / shares.length : 0;
}

const CHECKPOINTS = new Map();

/** Every checkpoint of `model` as a Model, fetched and built once. */
function checkpoints(model) {
  if (!CHECKPOINTS.has(model.name)) {
    const url = new URL(`models/${model.name}.checkpoints.safetensors`, import.meta.url);
    CHECKPOINTS.set(model.name, fetch(url).then((r) => {
      if (!r.ok) throw new CourseError(`the checkpoints of ${model.name} are not on this site`);
      return r.arrayBuffer();
    }).then((buffer) => {
      const tensors = readSafetensors(buffer), byStep = new Map();
      for (const [key, t] of Object.entries(tensors)) {
        const [step, name] = [key.slice(0, key.indexOf("/")), key.slice(key.indexOf("/") + 1)];
        if (!byStep.has(step)) byStep.set(step, {});
        byStep.get(step)[name] = t;
      }
      const meta = { name: model.name, config: model.cfg, vocab: model.vocab.tokens };
      return new Map([...byStep].map(([step, t]) => [Number(step), new Model(meta, t)]));
    }));
    CHECKPOINTS.get(model.name).catch(() => CHECKPOINTS.delete(model.name));
  }
  return CHECKPOINTS.get(model.name);
}

function mean(xs) {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

export const VIEWS = {
  async training({ model, starting, later }, v, a) {
    // At the page's start the build's picture is on show and the checkpoints are not needed yet: they
    // are fetched once the page is ready, and a move made before they arrive waits for them.
    if (starting) { later(() => checkpoints(model)); return null; }
    const index = a.steps.indexOf(Number(v.step));
    require(index >= 0, `step must be one of the checkpoints' steps: ${a.steps.join(", ")}`);
    const letters = sequenceOf(v, a);
    const words = ["<BOS>", ...letters];
    const ids = model.encode(words.join(" "));
    const m = (await checkpoints(model)).get(a.steps[index]);
    const run = m.run(ids);
    const patterns = run.patterns.map((layer) => layer.map((p) => p.map((r) => Array.from(r))));
    const nll = [];
    for (let i = 0; i < ids.length - 1; i++) {
      const z = Array.from(run.logitsAt(i)), top = Math.max(...z);
      const lse = top + Math.log(z.reduce((s, x) => s + Math.exp(x - top), 0));
      nll.push(lse - z[ids[i + 1]]);
    }
    const half = Math.floor(letters.length / 2);
    const repeated = letters.length >= 4 && letters.length % 2 === 0 &&
      letters.slice(0, half).every((x, i) => x === letters[half + i]);
    return { step: a.steps[index], index, tokens: words, curve: a.curve, floor: a.floor, patterns,
      previous: patterns.map((layer) => layer.map(previousToken)),
      prefix: patterns.map((layer) => layer.map((p) => prefixMatching(p, words))),
      copying: a.copying[index],
      loss: { first: repeated ? mean(nll.slice(1, half)) : null, second: repeated ? mean(nll.slice(half + 1)) : null } };
  },
};

/** checks.copies_without_heads: on the learner's text read twice, with the induction heads found switched off. */
function percent(x) {
  // Python's f"{x:.0%}": the nearest whole percent, a tie to the even one
  const v = 100 * x, f = Math.floor(v), r = v - f;
  return `${r > 0.5 ? f + 1 : r < 0.5 ? f : f % 2 === 0 ? f : f + 1}%`;
}

export const COMPUTE = {
  async smolCopiesWithout(a, _, real) {
    const r = await real.run("induction", { text: a.text, repeat: true, group: "induction", kind: "zero", layer: 0, head: 0,
      most: a.most });
    if (r.error) throw new CourseError(say(r.error, r.fields || {}));
    const after = r.copyOff || r.copy, expected = after.accuracy > 0.5 ? "yes" : "no";
    return { expected, options: ["yes", "no"], hints: [],
      fields: { n: r.off.length, before: percent(r.copy.accuracy), after: percent(after.accuracy), expected } };
  },
};

VIEWS.smol_induction = async (context, v, a) => {
  if (!context.real) return openingView(context, v);
  const layer = Number(v.layer), head = Number(v.head);
  const r = await context.real.run("induction", { text: String(v.text), repeat: v.repeat === true, group: String(v.group),
    kind: String(v.kind), layer, head, most: a.most });
  if (r === null) return null;
  if (r.error) throw new CourseError(say(r.error, r.fields || {}));
  return { tokens: r.tokens, period: r.period, layer, head, pattern: r.pattern, prev: r.prev, ind: r.ind,
    formed: a.formed, formed_previous: a.formed_previous, group: String(v.group), kind: String(v.kind), off: r.off,
    clean: r.clean, ablated: r.ablated, copy: r.copy, copy_off: r.copyOff };
};
