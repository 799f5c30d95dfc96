/* Answer boxes under the exercises on the website: a predict or investigate exercise is checked in
 * the page, without a kernel.
 *
 * Each exercise whose check has a page twin (lib/exercises/site.py, generated into
 * exercise_checks.js) gets a box and a Check button. The page computes what the check compares with
 * (COMPUTE below: the twin of the check's `values`, with the shipped models running in the page, as
 * the explorers do), then applies the same rule as the library (lib/exercises/__init__.py:
 * check_number, check_whole_number, check_choice) with the same sentences (lib/messages.py and the
 * twin's texts). Nothing the check compares against is shipped: the class site's boxes work too.
 * A write exercise, or one whose check has no twin, says how to run it live.
 */
import { MESSAGES } from "./constants.js";
import { el } from "./dom.js";
import { EXERCISE_CHECKS, SOLUTIONS } from "./exercise_checks.js";
import { loadModel } from "./model.js";
import { CourseError, MIN_TEMPERATURE, greedy, softmax, truncationMask } from "./readout.js";
import { formatG, pyFloat, pyInt, pyParseFloat, pyRepr, pySplit, pyStrip } from "./python.js";

const BASE = new URL("./", import.meta.url);

// ----------------------------------------------------------------------------- Python's spelling

/** str.format for the twins' texts: {name} and {name:spec}, spec one of .Nf, .Ng, g or ",". */
export function pyFormat(template, fields) {
  return template.replace(/\{\{|\}\}|\{(\w+)(?::([^}]*))?\}/g, (whole, name, spec) => {
    if (whole === "{{") return "{";
    if (whole === "}}") return "}";
    const v = fields[name];
    if (v === undefined) throw new Error(`no field ${name} for the text ${template}`);
    if (!spec) return typeof v === "number" && !Number.isInteger(v) ? pyFloat(v) : String(v);
    let m;
    if ((m = /^\.(\d+)f$/.exec(spec))) return v.toFixed(+m[1]);
    if ((m = /^\.(\d+)g$/.exec(spec))) return formatG(v, +m[1]);
    if ((m = /^\.(\d+)e$/.exec(spec))) {
      const [mant, exp] = v.toExponential(+m[1]).split("e");
      return `${mant}e${exp[0] === "-" ? "-" : "+"}${exp.replace(/^[-+]/, "").padStart(2, "0")}`;
    }
    if (spec === "g") return formatG(v);
    if (spec === ",") return String(v).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    throw new Error(`format spec ${spec} is not supported in the page`);
  });
}

function say(name, fields) {
  return MESSAGES[name].replace(/\{(\w+)\}/g, (_, key) => String(fields[key]));
}

/** What the reader typed, as the library's check receives it (lib.exercises.site.typed_answer):
 *  {kind: "int" (a BigInt) | "float" | "str" | "tuple" (value: the items, each such a reading), value},
 *  or null for an empty box. `rule`: number, whole, choice, text or tuple. */
export function typedAnswer(text, rule) {
  let s = pyStrip(text);
  if (s === "") return null;
  if (rule === "choice" || rule === "text") return { kind: "str", value: s };
  if (rule === "tuple") {
    if (s.length >= 2 && ((s[0] === "(" && s.endsWith(")")) || (s[0] === "[" && s.endsWith("]")))) s = pyStrip(s.slice(1, -1));
    const items = s.includes(",") ? s.split(",").map(pyStrip) : pySplit(s);
    if (items.length > 1 && items[items.length - 1] === "") items.pop();
    return { kind: "tuple", value: items.map((i) => (i.length >= 2 && i[0] === i[i.length - 1] && (i[0] === "'" || i[0] === '"')
      ? { kind: "str", value: i.slice(1, -1) } : i === "" ? { kind: "str", value: "" } : typedAnswer(i, "number"))) };
  }
  const i = pyInt(s);
  if (i !== null) return { kind: "int", value: i };
  const f = pyParseFloat(s);
  if (f !== null) return { kind: "float", value: f };
  return { kind: "str", value: s };
}

function reprOf(a) {
  if (a.kind === "tuple") return `(${a.value.map(reprOf).join(", ")}${a.value.length === 1 ? "," : ""})`;
  if (a.kind === "int") return a.value.toString();
  if (a.kind === "float") return pyFloat(a.value);
  return pyRepr(a.value);
}

/** lib.exercises.shown: the answer's repr, its white space runs as one space, cut at 60 characters. */
function shown(a, limit = 60) {
  const text = pySplit(reprOf(a)).join(" ");
  const chars = Array.from(text);
  return chars.length <= limit ? text : chars.slice(0, limit - 3).join("") + "...";
}

/** lib.exercises.as_number: a finite number, or null. */
function asNumber(a) {
  if (a.kind === "str" || a.kind === "tuple") return null;
  const v = Number(a.value);
  return Number.isFinite(v) ? v : null;
}

// ----------------------------------------------------------------------------- the rules

const verdict = (ok, message) => ({ ok, verdict: ok ? "correct" : "not yet", message });

function checkNumber(a, expected, tol, what, hints) {
  const value = asNumber(a);
  if (value === null) return verdict(false, say("answer_number", { what, got: shown(a) }));
  if (Math.abs(value - expected) <= tol) return verdict(true, say("answer_is", { what, value: formatG(value, 4) }));
  for (const [wrong, text] of hints) if (Math.abs(value - wrong) <= tol) return verdict(false, text);
  return verdict(false, say("answer_off", { what, value: formatG(value, 4), direction: value > expected ? "too high" : "too low" }));
}

function wholeString(value) {
  return BigInt(value).toString();
}

function checkWhole(a, expected, what, hints) {
  const value = asNumber(a);
  if (value === null || value !== Math.trunc(value)) return verdict(false, say("answer_whole", { what, got: shown(a) }));
  if (value === expected) return verdict(true, say("answer_is", { what, value: wholeString(value) }));
  for (const [wrong, text] of hints) if (value === wrong) return verdict(false, text);
  const told = Math.abs(value) < 1e15 ? wholeString(value) : formatG(value, 3);
  return verdict(false, say("answer_off", { what, value: told, direction: value > expected ? "too high" : "too low" }));
}

function checkChoice(a, options, expected, right, wrong, hints) {
  const chosen = options.find((o) => o === a.value);
  if (chosen === undefined) {
    const listed = options.slice(0, 12).map(pyRepr).join(", ") + (options.length > 12 ? ", ..." : "");
    return verdict(false, say("answer_one_of", { listed, got: shown(a) }));
  }
  if (chosen === expected) return verdict(true, right);
  const hint = hints.find(([option]) => option === chosen);
  return verdict(false, hint ? hint[1] : wrong);
}

/** The verdict on `text` for the exercise declared by `decl`, given what COMPUTE found (`v`). An open
 *  check's computation gives `decide(a)`: {ok, key, fields} (the declared text `key`), or a rule's
 *  verdict ({ok, verdict, message}). */
export function judge(decl, text, v) {
  const a = typedAnswer(text, decl.reads || decl.rule);
  if (a === null) return { ok: false, verdict: "not answered", message: say("answer_empty", {}) };
  if (decl.rule === "open") {
    const r = v.decide(a);
    return r.message !== undefined ? r : verdict(r.ok, pyFormat(decl.texts[r.key], { ...(r.fields || {}), shown: shown(a) }));
  }
  const fields = { ...(v.fields || {}), answer: a.value, shown: shown(a) };
  const fill = (key) => pyFormat(decl.texts[key], fields);
  // A value the library gives two texts keeps the last text at the first place (a Python dict).
  const hints = [];
  for (const [key, value] of v.hints || []) {
    const at = hints.findIndex(([w]) => w === value);
    if (at >= 0) hints[at][1] = fill(key); else hints.push([value, fill(key)]);
  }
  if (decl.rule === "number") {
    const tol = decl.tol !== null && decl.tol !== undefined ? decl.tol : decl.rel_tol * v.expected;
    return checkNumber(a, v.expected, tol, decl.what, hints);
  }
  if (decl.rule === "whole") return checkWhole(a, v.expected, decl.what, hints);
  return checkChoice(a, v.options, v.expected, fill("right"), fill("wrong"), hints);
}

// ----------------------------------------------------------------------------- the computations
// Each is the twin of a check's `values` in Python: {expected, hints: [[text key, wrong value], ...]
// in the library's order, options (a choice's), fields (what the texts print)}.

const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);

function entropyBits(p) {
  let h = 0;
  for (const x of p) if (x > 0) h -= x * Math.log2(x);
  return h;
}

function blockHeads(model, block) {
  return Array.from({ length: model.nHeads }, (_, h) => [block, h]);
}

function allHeads(model) {
  return Array.from({ length: model.nLayers }, (_, l) => blockHeads(model, l)).flat();
}

/** lib.content.convolution.convolve: valid cross-correlation of a grid with a square filter. */
function convolve(image, kernel) {
  const k = kernel.length, rows = image.length - k + 1, cols = image[0].length - k + 1;
  return Array.from({ length: rows }, (_, r) => Array.from({ length: cols }, (_, c) => {
    let s = 0;
    for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) s += image[r + i][c + j] * kernel[i][j];
    return s;
  }));
}

/** lib.content.convolution.ocr_pass's scores: each map through ReLU and 2x2 max pooling (stride 1), summed. */
function ocrScores(image, filters) {
  return Object.values(filters).map((f) => {
    const m = convolve(image, f).map((row) => row.map((x) => Math.max(x, 0)));
    let s = 0;
    for (let r = 0; r + 1 < m.length; r++) for (let c = 0; c + 1 < m[0].length; c++) {
      s += Math.max(m[r][c], m[r][c + 1], m[r + 1][c], m[r + 1][c + 1]);
    }
    return s;
  });
}

/** A point set the site serves (lib.explorers.page.export_site): {labels, groups, vectors as doubles}. */
const POINTS = new Map();
function points(name) {
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

const norm = (v) => Math.sqrt(dot(v, v));
const embeddingRow = (model, id) => Array.from(model.w.W_E.subarray(id * model.cfg.d_model, (id + 1) * model.cfg.d_model));
const cosine = (u, v) => { const n = norm(u) * norm(v); return n > 0 ? dot(u, v) / n : 0; };

/** The best of `pool` by cosine with `target`; ties keep the pool's order (lib.analysis.maps.analogy). */
function bestByCosine(target, pool, vectorOf) {
  let best = null, score = -Infinity;
  for (const w of pool) { const s = cosine(target, vectorOf(w)); if (s > score) { best = w; score = s; } }
  return best;
}

/** The eigenvalues of a symmetric matrix (cyclic Jacobi rotations), largest first. */
function eigenvalues(A) {
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
function varianceShares(rows) {
  const n = rows.length, d = rows[0].length;
  const mean = Array.from({ length: d }, (_, j) => rows.reduce((s, r) => s + r[j], 0) / n);
  const c = rows.map((r) => r.map((v, j) => v - mean[j]));
  const gram = c.map((u) => c.map((v) => dot(u, v)));
  const eig = eigenvalues(gram).slice(0, Math.min(n, d)).map((x) => Math.max(x, 0));
  const total = eig.reduce((s, x) => s + x, 0);
  return eig.map((x) => x / total);
}

const sub = (x, y) => x.map((v, i) => v - y[i]);

/** The chapter's axes (lib.exercises.gram_schmidt_by_hand._axes): e1 from king - queen, e2 from king - man
 *  (`raw`) made orthogonal to e1, both of length 1. */
function gsAxes(w) {
  const unit = (x) => x.map((v) => v / norm(x));
  const e1 = unit(sub(w.king, w.queen)), raw = sub(w.king, w.man);
  const along = dot(raw, e1);
  return { e1, e2: unit(raw.map((v, i) => v - along * e1[i])), raw };
}

const cumulative = (shares, k) => shares.slice(0, k).reduce((s, x) => s + x, 0);

function componentsFor(rows, share) {
  let sum = 0;
  const shares = varianceShares(rows);
  for (let i = 0; i < shares.length; i++) { sum += shares[i]; if (sum >= share - 1e-12) return i + 1; }
  return shares.length;
}

const FRAME_MS = 4;

/** Runs `steps` (a generator) to its end, handing the browser its thread back after every FRAME_MS of
 *  work, so that a check of many passes never holds a frame; returns the generator's value. */
async function inFrames(steps) {
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
function promptSigns(model, text, whyNotAPrefix) {
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

export const COMPUTE = {
  async pcaShare(a) {
    const { groups, vectors } = await points(a.points);
    const content = vectors.filter((_, i) => groups[i] !== a.leave_out);
    const shares = varianceShares(content), top4 = cumulative(shares, 4);
    return { expected: top4, hints: [["all", cumulative(varianceShares(vectors), 4)], ["top2", cumulative(shares, 2)],
      ["percent", top4 * 100]] };
  },

  ovRank(a, model) {
    const D = model.cfg.d_model, Dh = model.cfg.d_head;
    const M = Array.from({ length: D }, () => new Float64Array(D));
    for (const [l, h] of a.pair) {
      const V = model.w[`blocks.${l}.attn.W_V`], O = model.w[`blocks.${l}.attn.W_O`];
      for (let i = 0; i < D; i++) for (let e = 0; e < Dh; e++) {
        const v = V[h * D * Dh + i * Dh + e];
        for (let j = 0; j < D; j++) M[i][j] += v * O[h * Dh * D + e * D + j];
      }
    }
    const gram = Array.from({ length: D }, (_, i) => Array.from({ length: D }, (_, j) => {
      let s = 0;
      for (let k = 0; k < D; k++) s += M[k][i] * M[k][j];
      return s;
    }));
    const sv = eigenvalues(gram).map((x) => Math.sqrt(Math.max(x, 0)));
    return { expected: sv.filter((s) => s > sv[0] * a.tol).length, hints: [["one_head", Dh], ["d_model", D]] };
  },

  componentsForShare(a, model) {
    const D = model.cfg.d_model;
    const rows = a.words.map((w) => Array.from(model.w.W_E.subarray(model.vocab.id(w) * D, (model.vocab.id(w) + 1) * D)));
    return { expected: componentsFor(rows, a.share), hints: [["designed", componentsFor(a.designed, a.share)]] };
  },

  async offsetAnalogy(a) {
    const { labels, vectors } = await points(a.points);
    const row = (w) => vectors[labels.indexOf(w)];
    const [x, y, z] = a.inputs;
    const target = row(x).map((v, i) => v - row(y)[i] + row(z)[i]);
    const expected = bestByCosine(target, labels.filter((w) => !a.inputs.includes(w)), row);
    const baseline = bestByCosine(row(x), labels.filter((w) => w !== x && w !== y && w !== z), row);
    return { expected, options: labels,
      hints: [["input_a", x], ["input_b", y], ["input_c", z], ["baseline", baseline]] };
  },

  cacheTokens(a) {
    const perToken = (factor, bytes) => 2 * a.layers * a.heads * a.d_head * bytes * factor;
    const fit = (factor = 1, bytes = a.bytes) => Math.floor(a.budget / perToken(factor, bytes));
    return { expected: fit(), hints: [["keys_only", fit(0.5)], ["float32", fit(1, 4)],
      ["rounded_up", Math.ceil(a.budget / perToken(1, a.bytes))]] };
  },

  embeddingShare(a) {
    const share = (s) => s.vocab * s.d_model / s.total;
    const expected = share(a.seven_b);
    return { expected, hints: [["both", 2 * expected], ["gpt2", share(a.gpt2)], ["percent", 100 * expected]] };
  },

  filterAt(a) {
    const at = (name) => convolve(a.image, a.filters[name])[a.stop[0]][a.stop[1]];
    return { expected: at(a.filter), hints: [[a.other, at(a.other)]] };
  },

  ocrClass(a) {
    const classes = Object.keys(a.filters), probs = softmax(ocrScores(a.image, a.filters));
    return { expected: classes[greedy(probs)], options: classes };
  },

  mlpWeights(a) {
    const d = a.d_model, m = a.d_mlp;
    return { expected: 2 * d * m, hints: [["one", d * m], ["biases", 2 * d * m + d + m], ["square", d * d + m * m]] };
  },

  abcSelfWeight(a) {
    const e = a.dots.map((s) => Math.exp(s / Math.sqrt(a.d_head)));
    return { expected: e[2] / e.reduce((x, y) => x + y, 0) };
  },

  multiplyAdds(a) {
    const [vocab, d] = a.shape;
    return { expected: vocab * d, hints: [["added", vocab + d], ["bytes", vocab * d * 4], ["per_word", vocab], ["one_dot", d]] };
  },

  dictionaryGigabytes(a) {
    const [vocab, d] = a.shape;
    const expected = vocab * d * a.bytes / 1e9;
    return { expected, hints: [["float32", expected * 2], ["gib", expected * 1e9 / 2 ** 30], ["own", a.own_vocab * d * a.bytes / 1e9]] };
  },

  searchScore(a) {
    return { expected: dot(a.query, a.dictionary[a.word]), hints: [["chapter", dot(a.chapter_query, a.dictionary[a.word])]] };
  },

  searchWinner(a) {
    const words = Object.keys(a.dictionary);
    const best = (q) => words.reduce((b, w) => (dot(q, a.dictionary[w]) > dot(q, a.dictionary[b]) ? w : b), words[0]);
    const expected = best(a.query), before = best(a.chapter_query);
    return { expected, options: words, hints: before !== expected ? [["before", before]] : [] };
  },

  pageEntropy(a, model) {
    const expected = entropyBits(softmax(model.promptLogits(model.encode(a.prompt))));
    return { expected, hints: [["nats", expected * Math.log(2)]] };
  },

  surePageEntropy(a, model) {
    const rest = model.vocab.size - 1;
    const bits = (p) => -p * Math.log2(p);
    const expected = bits(a.top) + rest * bits((1 - a.top) / rest);
    return { expected, fields: { rest },
      hints: [["nats", expected * Math.log(2)], ["top_only", bits(a.top)], ["two_words", bits(a.top) + bits(1 - a.top)]] };
  },

  topProbAt(a, model) {
    const logits = model.promptLogits(model.encode(a.prompt));
    const top = greedy(logits);
    return { expected: softmax(logits, a.temperature)[top],
      hints: [["times", softmax(Float64Array.from(logits, (x) => x * a.temperature))[top]]] };
  },

  topWithHeadsOff(a, model) {
    const heads = a.block === undefined ? allHeads(model) : blockHeads(model, a.block);
    const expected = model.vocab.tokens[greedy(model.promptLogits(model.encode(a.prompt), { heads }))];
    return { expected, options: model.vocab.tokens, hints: Object.entries(a.wrong_tokens || {}) };
  },

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

  mostNecessary(a, model) {
    const effects = (prompt) => {
      const ids = model.encode(prompt), t = model.vocab.id(a.target);
      const p = (off) => softmax(model.promptLogits(ids, off))[t];
      const out = allHeads(model).map(([l, h]) => [`L${l}H${h}`, p({ heads: [[l, h]] })]);
      for (let m = 0; m < model.nLayers; m++) out.push([`MLP ${m}`, p({ mlps: [m] })]);
      return out;
    };
    const least = (pairs) => pairs.reduce((b, x) => (x[1] < b[1] ? x : b))[0];
    const later = effects(a.prompt);
    return { expected: least(later), options: later.map(([n]) => n),
      hints: [["first", least(effects(a.first))], ["mlp1", "MLP 1"]] };
  },

  logitOf(a, model) {
    const i = model.vocab.id(a.word);
    const logit = model.promptLogits(model.encode(a.prompt))[i];
    return { expected: logit, hints: [["no_bias", logit - model.w.b_U[i]]] };
  },

  stretchedLogit(a, model) {
    const i = model.vocab.id(a.word), bias = model.w.b_U[i];
    const logit = model.promptLogits(model.encode(a.prompt))[i];
    return { expected: a.scale * (logit - bias) + bias,
      hints: [["bias_too", a.scale * logit], ["unstretched", logit], ["no_bias", a.scale * (logit - bias)]] };
  },

  cosineWinner(a, model) {
    const ids = model.encode(a.prompt);
    const run = model.run(ids, {}, true);
    const names = model.stageNames();
    const q = run.stages[names[names.length - 1]][ids.length - 1];
    const D = model.cfg.d_model, V = model.cfg.vocab_size;
    let best = 0, score = -Infinity;
    for (let v = 0; v < V; v++) {
      const col = Array.from({ length: D }, (_, d) => model.W_U[d * V + v]);
      const s = cosine(Array.from(q), col);
      if (s > score) { best = v; score = s; }
    }
    return { expected: model.vocab.tokens[best], options: model.vocab.tokens,
      hints: [["by_dot", model.vocab.tokens[greedy(run.logitsAt(ids.length - 1))]]] };
  },

  survivors(a, model) {
    const probs = softmax(model.promptLogits(model.encode(a.prompt)));
    const count = (mask) => mask.filter(Boolean).length;
    const wholePage = count(truncationMask(probs, null, a.top_p));
    return { expected: count(truncationMask(probs, a.top_k, a.top_p)), hints: [["whole_page", wholePage]],
      fields: { whole_page: wholePage } };
  },

  leadsAfterStage(a, model) {
    const t = model.vocab.id(a.word), names = model.stageNames();
    const counts = names.map(() => 0);
    for (const prompt of a.prompts) {
      const ids = model.encode(prompt), run = model.run(ids, {}, true);
      names.forEach((name, i) => { if (greedy(model.readOut(run.stages[name][ids.length - 1])) === t) counts[i]++; });
    }
    const at = names.indexOf(a.stage);
    return { expected: counts[at], hints: [["before", counts[at - 1]], ["final", counts[names.length - 1]]] };
  },

  topWithoutMlp(a, model) {
    const ids = model.encode(a.prompt), tokens = model.vocab.tokens;
    const intact = tokens[greedy(model.promptLogits(ids))];
    const expected = tokens[greedy(model.promptLogits(ids, { mlps: [a.mlp] }))];
    return { expected, options: tokens,
      fields: { others: expected === intact ? "it keeps its place" : `${intact} loses its place` } };
  },

  flattestPage(a, model) {
    const entropy = a.prompts.map((p) => entropyBits(softmax(model.promptLogits(model.encode(p)))));
    const expected = a.prompts[entropy.indexOf(Math.max(...entropy))];
    // The rules' one word after a prompt (computed by the library's rules, a property of the game).
    return { expected, options: a.prompts,
      hints: a.prompts.map((p, i) => [`want${i}`, p]).filter(([key]) => key in a.texts) };
  },

  async analogyAgrees(a) {
    const { labels, vectors } = await points(a.points);
    const row = (w) => vectors[labels.indexOf(w)];
    const [x, y, z] = a.inputs;
    const target = row(x).map((v, i) => v - row(y)[i] + row(z)[i]);
    const offset = bestByCosine(target, labels.filter((w) => !a.inputs.includes(w)), row);
    const baseline = bestByCosine(row(x), labels.filter((w) => w !== x && w !== y && w !== z), row);
    const same = offset === baseline;
    return { expected: same ? "same" : "different", options: ["same", "different"],
      fields: { outcome: same ? "the same word" : "different words" } };
  },

  rowCosine(a, model) {
    const D = model.cfg.d_model, row = (w) => Array.from(model.w.W_E.subarray(model.vocab.id(w) * D, (model.vocab.id(w) + 1) * D));
    const [u, v] = a.pair.map(row);
    return { expected: cosine(u, v), hints: [["dot", dot(u, v)], ["distance", norm(u.map((x, i) => x - v[i]))]] };
  },

  princeRoyalty(a) {
    const { e1, e2, raw } = gsAxes(a.words);
    return { expected: dot(a.prince, e2), hints: [["e1", dot(a.prince, e1)], ["raw", dot(a.prince, raw)]] };
  },

  overlapBefore(a) {
    // lib.exercises.gram_schmidt_by_hand.overlap_before: a whole number, then the known wrong values' texts.
    const w = a.words, { e1, e2, raw } = gsAxes(w), other = sub(w.king, w.woman);
    const expected = dot(other, e1), wrong = [["man", dot(raw, e1)], ["e2", dot(other, e2)]];
    return { decide(answer) {
      const r = checkWhole(answer, Math.round(expected), a.what, []), value = asNumber(answer);
      if (r.ok || value === null) return r;
      const hit = wrong.find(([, x]) => Math.abs(value - x) < 1e-3);
      return hit ? { ok: false, key: hit[0] } : r;
    } };
  },

  unscaledWeight(a) {
    return { expected: softmax(a.scores)[1], hints: [["scaled", softmax(a.scores.map((s) => s / Math.sqrt(a.d_head)))[1]]] };
  },

  twoStepsAhead(a, model) {
    const ids = model.encode(a.prefix), t = model.vocab.id(a.target);
    const first = softmax(model.promptLogits(ids));
    const paths = Array.from(first, (p, x) => p * softmax(model.promptLogits([...ids, x]))[t]);
    let top = 0;
    paths.forEach((p, x) => { if (p > paths[top]) top = x; });
    return { expected: paths.reduce((s, p) => s + p, 0), fields: { first: model.vocab.tokens[top] },
      hints: [["next", first[t]], ["first", paths[top]], ["rules", paths[model.vocab.id(a.rules)]], ["certain", 1]] };
  },

  unseenRange(a, model) {
    const p = softmax(model.promptLogits(model.encode(a.prompt)))[model.vocab.id(a.token)];
    const r = a.ranges, expected = p === 0 ? r[0] : p < 0.001 ? r[1] : p <= 0.1 ? r[2] : r[3];
    return { expected, options: r, hints: [["zero", r[0]]], fields: { p } };
  },

  dotDisagreements(a, model) {
    const D = model.cfg.d_model, V = model.vocab.size;
    const rows = Array.from({ length: V }, (_, v) => Array.from(model.w.W_E.subarray(v * D, (v + 1) * D)));
    const nearest = (i, score) => {
      let best = -1, s = -Infinity;
      for (let j = 0; j < V; j++) if (j !== i) { const x = score(rows[i], rows[j]); if (x > s) { best = j; s = x; } }
      return best;
    };
    let n = 0;
    for (let i = 0; i < V; i++) if (nearest(i, cosine) !== nearest(i, dot)) n++;
    const at = a.upper.findIndex((top) => n <= top);
    return { expected: a.ranges[at < 0 ? a.ranges.length - 1 : at], options: a.ranges, hints: [["none", a.ranges[0]]],
      fields: { n, tokens: V } };
  },

  analogyLeftIn(a, model) {
    const D = model.cfg.d_model;
    const row = (w) => Array.from(model.w.W_E.subarray(model.vocab.id(w) * D, (model.vocab.id(w) + 1) * D));
    const [x, y, z] = a.inputs;
    const target = row(x).map((v, i) => v - row(y)[i] + row(z)[i]);
    return { expected: bestByCosine(target, a.words, row), options: a.words,
      hints: [["excluded", bestByCosine(target, a.words.filter((w) => !a.inputs.includes(w)), row)]] };
  },

  nearestRow(a, models) {
    const [lm, zl] = models;
    // lib.analysis.maps.nearest with k=1: the other rows ranked by cosine, ties in vocabulary order.
    const nearest = (model) => {
      const row = (w) => embeddingRow(model, model.vocab.id(w));
      return bestByCosine(row(a.word), model.vocab.tokens.filter((w) => w !== a.word), row);
    };
    const best = nearest(zl), other = nearest(lm);
    return { expected: best, options: zl.vocab.tokens, fields: { word: a.word },
      hints: [["self", a.word], ...(other !== best ? [["other_model", other]] : [])] };
  },

  selfAttention(a, model) {
    // lib.exercises.circuits: each head's mean attention from the last position to itself over the
    // prompts (lib.analysis.circuits.head_habits, "the callee itself"); the first head with the most.
    const heads = allHeads(model), share = heads.map(() => 0);
    for (const text of a.prompts) {
      const ids = model.encode(text), T = ids.length, run = model.run(ids, {}, "patterns");
      heads.forEach(([l, h], k) => { share[k] += run.patterns[l][h][T - 1][T - 1] / a.prompts.length; });
    }
    let best = 0;
    share.forEach((x, k) => { if (x > share[best]) best = k; });
    const names = heads.map(([l, h]) => `L${l}H${h}`);
    return { expected: names[best], options: names };
  },

  pushShare(a, model) {
    // lib.exercises.lever: lib.analysis.trajectory.residual_trajectory's push of a block (its write at
    // the last position along the first axis, the toward word's unit row) over where the path ends.
    const along = (prompt, toward) => {
      const ids = model.encode(prompt), run = model.run(ids, {}, true), names = model.stageNames();
      const row = embeddingRow(model, model.vocab.id(toward)), n = norm(row), e1 = row.map((x) => x / n);
      const x = names.map((name) => dot(Array.from(run.stages[name][ids.length - 1]), e1));
      const at = names.indexOf(a.component);
      return { push: x[at] - x[at - 1], end: x[x.length - 1] };
    };
    const mine = along(a.prompt, a.toward), chapter = along(a.chapter_prompt, a.chapter_toward);
    const expected = mine.push / mine.end;
    return { expected, hints: [["chapter", chapter.push / chapter.end], ["percent", expected * 100], ["push", mine.push]] };
  },

  wordAfterTool(a, model) {
    // lib.exercises.tools: lib.content.conveyor.run_belt from <BOS>, greedy, a tool stuck on one word: after
    // the model's first trigger the tool writes its word, and the model's next word is the answer.
    const ids = model.encode("<BOS>"), trigger = model.vocab.id(a.trigger), eos = model.vocab.id("<EOS>");
    let expected = null;
    for (let toolAt = -1; ids.length < model.cfg.n_ctx;) {
      const next = greedy(model.promptLogits(ids));
      if (toolAt >= 0) { expected = model.vocab.tokens[next]; break; }
      ids.push(next);
      if (next === eos) break;
      if (next === trigger && ids.length < model.cfg.n_ctx) { ids.push(model.vocab.id(a.tool_word)); toolAt = ids.length - 1; }
    }
    if (expected === null) throw new CourseError("the belt ended before the tool wrote");
    return { expected, options: model.vocab.tokens,
      hints: [["tool", a.tool_word], ...a.epithets.map((e) => [`epithet_${e}`, e])] };
  },

  async widestPlane(a) {
    // lib.exercises.three_ways: each plane's share by the concept-plane explorer's view
    // (lib.analysis.maps.views.plane_view); the first of the widest, as max() picks it.
    const { VIEWS } = await import("./views.js");
    let best = null, share = -Infinity;
    for (const name of a.planes) {
      const [axis_1, axis_2] = name.split(" and ");
      const view = await VIEWS.plane({ points }, { points: a.points, axis_1, axis_2 }, { labels: {} });
      if (view.spread > share) { best = name; share = view.spread; }
    }
    return { expected: best, options: a.planes, fields: { share } };
  },

  // ---- open checks: `decide(a)` is the check's own decision, step for step (see judge)

  smallestScale(a) {
    // lib.exercises.search_by_hand.smallest_scale: the chapter's query times k, searched as by search().
    const words = Object.keys(a.dictionary), t = words.indexOf(a.word);
    const p = (k) => softmax(words.map((w) => dot(a.chapter_query.map((x) => x * k), a.dictionary[w])))[t];
    return { decide(answer) {
      const value = asNumber(answer);
      if (value === null || value !== Math.trunc(value) || value < 1) return { ok: false, key: "invalid" };
      const fields = { k: wholeString(value), word: a.word, target: a.target };
      if (p(value) < a.target) return { ok: false, key: "low", fields };
      if (value > 1 && p(value - 1) >= a.target) return { ok: false, key: "high", fields };
      return { ok: true, key: "right", fields };
    } };
  },

  temperatureForHalf(a, model) {
    // lib.exercises.search_by_hand.temperature_for_half: the model's page after the prompt at the
    // temperature (model_search's scores are the logits).
    const logits = model.promptLogits(model.encode(a.prompt));
    return { decide(answer) {
      const value = asNumber(answer);
      if (value === null || value < MIN_TEMPERATURE) return { ok: false, key: "invalid", fields: { minimum: formatG(MIN_TEMPERATURE) } };
      const top = Math.max(...softmax(logits, value)), fields = { value, top };
      if (Math.abs(top - 0.5) <= a.tol) return { ok: true, key: "right", fields };
      return { ok: false, key: "wrong", fields: { ...fields, direction: top > 0.5 ? "raise" : "lower" } };
    } };
  },

  async lostEachWay(a, model) {
    // lib.exercises.ablation.lost_each_way: lib.analysis.head_survey.ablation_survey's lost count for one
    // head, each way (the page's ablation explorer's hooks; a prompt's place in the set is its resample roll).
    const { ablationHooks } = await import("./views.js");
    const head = [[+a.head[1], +a.head[3]]], kinds = ["zero", "mean", "resample"];
    const p = (ids, t, off) => softmax(model.promptLogits(ids, off))[t];
    const counts = kinds.map(() => 0);
    await inFrames((function* passes() {       // 160 passes: a few at a time, the page kept answering
      for (let i = 0; i < a.prompts.length; i++) {
        const ids = model.encode(a.prompts[i]), t = model.vocab.id(a.targets[i]);
        if (p(ids, t, {}) < a.holds_at) continue;
        for (let k = 0; k < kinds.length; k++) {
          yield;
          const hooks = ablationHooks(model, head, [], kinds[k], ids.length, a.seed, i);
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
    const { patchingSteps, swapPlayers } = await import("./views.js");
    const { grid } = await inFrames(patchingSteps(model, model.encode(a.clean), model.encode(swapPlayers(a.clean)),
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

  async restOfRound(a) {
    // lib.exercises.the_game.rest_of_round: the rules' one way on from the prefix (round_ending), then
    // the check's diagnosis, in its order.
    const { readRound } = await import("./game.js");
    const prefix = pySplit(a.prefix), ending = [];
    for (;;) {
      const v = readRound(prefix.concat(ending));
      if (v.status === "valid") break;
      if (v.status !== "unfinished" || v.allowed.length !== 1) throw new CourseError(`${a.prefix} does not go on one way only`);
      ending.push(v.allowed[0]);
    }
    return { decide(answer) {
      const got = pySplit(answer.value);
      if (got.length === 0) return { ok: false, key: "not_tokens" };
      if (got.length === ending.length && got.every((t, i) => t === ending[i])) return { ok: true, key: "right", fields: { answer: answer.value } };
      if (got[0] === "<SEP>") return { ok: false, key: "sep_first" };
      if (got[0] !== ending[0]) return { ok: false, key: "first_word", fields: { first: got[0] } };
      if (got.slice(1).includes("perde") && got.at(got.indexOf("perde") - 1) !== a.erred) return { ok: false, key: "loser" };
      if (got[1] === "<SEP>" && got[2] === a.called_back) return { ok: false, key: "goes_on" };
      return { ok: false, key: "other", fields: { reading: readRound(prefix.concat(got)).message } };
    } };
  },

  async confidentImpossible(a, model) {
    // lib.exercises.hallucination.confident_impossible
    const { whyNotAPrefix } = await import("./game.js");
    return { decide(answer) {
      const signs = promptSigns(model, answer.value, whyNotAPrefix);
      if (signs.key) return signs;
      if (signs.why === null) return { ok: false, key: "possible" };
      if (signs.top_prob <= a.threshold) return { ok: false, key: "unsure", fields: { top_prob: signs.top_prob, threshold: a.threshold } };
      return { ok: true, key: "right", fields: signs };
    } };
  },

  async steerTo(a, model) {
    // lib.exercises.practice.steer_to
    const { whyNotAPrefix } = await import("./game.js");
    return { decide(answer) {
      const signs = promptSigns(model, answer.value, whyNotAPrefix);
      if (signs.key) return signs;
      if (signs.why !== null) return { ok: false, key: "forbidden", fields: { why: signs.why } };
      const fields = { ...signs, word: a.word };
      if (signs.top !== a.word || signs.top_prob <= a.threshold) return { ok: false, key: "wrong", fields };
      return { ok: true, key: "right", fields };
    } };
  },

  blockOff(a, model) {
    // P(target) averaged over the prompts (lib.exercises.residual_path.mean_target).
    const target = model.vocab.id(a.target), all = a.prompts.map((q) => model.encode(q));
    const p = (off, ids = all) => ids.reduce((s, x) => s + softmax(model.promptLogits(x, off))[target], 0) / ids.length;
    const heads = blockHeads(model, a.block), mlps = [a.block];
    return { expected: p({ heads, mlps }), hints: [["intact", p({})], ["heads", p({ heads })], ["mlp", p({ mlps })],
      ["one", p({ heads, mlps }, all.slice(0, 1))]] };
  },
};

const COMPUTED = new Map();

/** What the check of `decl` compares with, computed in the page (once: the models do not change). A
 *  check that reads several models gets them as a list, in its order. */
export function compute(decl) {
  if (decl.values) return Promise.resolve(decl.values);   // shipped by the default site: the page cannot compute them
  if (!COMPUTED.has(decl.check)) {
    const load = (name) => loadModel(new URL("models/", BASE).href, name);
    const work = (async () => {
      const model = decl.model === null || decl.model === undefined ? null
        : Array.isArray(decl.model) ? await Promise.all(decl.model.map(load)) : await load(decl.model);
      return await COMPUTE[decl.compute]({ ...decl.args, texts: decl.texts }, model);
    })();
    work.catch(() => COMPUTED.delete(decl.check));      // a failure is tried again at the next click
    COMPUTED.set(decl.check, work);
  }
  return COMPUTED.get(decl.check);
}

// ----------------------------------------------------------------------------- the page

const LIVE = SOLUTIONS === "hide"
  ? "Run it live: open this page's notebook in JupyterLab or on Binder (the rocket icon at the top of the page); its check runs there."
  : "Run it live: download this page's notebook (the download icon at the top of the page) and open it in JupyterLab, or open it on Binder (the rocket icon); its check runs there.";

function answerBox(exercise, label, decl) {
  const id = `course-answer-${label}`;
  const input = el("input", { type: "text", id, class: "course-answer", spellcheck: "false", autocomplete: "off",
    autocapitalize: "off", size: 16, "data-exercise": label });
  const button = el("button", { type: "button", class: "course-check-button", text: "Check" });
  const out = el("p", { class: "course-verdict", role: "status", "aria-live": "polite", "data-verdict": "" });
  const run = async () => {
    try {
      if (!decl.values && !COMPUTED.has(decl.check)) { out.dataset.verdict = ""; out.textContent = "Checking in the page…"; }
      const v = await compute(decl);
      const result = judge(decl, input.value, v);
      out.dataset.verdict = result.verdict;
      out.textContent = "";
      out.append(el("strong", { text: result.ok ? "Correct" : result.verdict === "not answered" ? "Not answered yet" : "Not yet" }),
        `: ${result.message}`);
    } catch (e) {
      if (!(e instanceof CourseError)) console.error(e);
      out.dataset.verdict = "failed";
      out.textContent = `The check failed in this page: ${e.message}. ${LIVE}`;
    }
  };
  button.addEventListener("click", run);
  input.addEventListener("keydown", (e) => { if (e.key === "Enter") run(); });
  const box = el("div", { class: "course-check", "data-exercise": label }, [
    el("label", { for: id, text: "Your answer " }), input, button, out]);
  exercise.after(box);
  return box;
}

function liveNote(exercise, label, text) {
  const note = el("p", { class: "course-check course-live-note", "data-exercise": label, text });
  exercise.after(note);
}

export function startChecks(root = document) {
  const boxes = [];
  for (const exercise of root.querySelectorAll("div.exercise[id]")) {
    const label = exercise.id, classes = exercise.classList;
    const decl = EXERCISE_CHECKS[label];
    if (decl && decl.live) liveNote(exercise, label, `This site is a class's copy and ships no answer for this exercise. ${LIVE}`);
    else if (decl) boxes.push(answerBox(exercise, label, decl));
    else if (classes.contains("write")) liveNote(exercise, label, `Write it live. ${LIVE}`);
    else if (classes.contains("predict") || classes.contains("investigate")) {
      liveNote(exercise, label, `This answer is checked live, not in this page yet. ${LIVE}`);
    }
  }
  window.courseChecks = { ready: true, boxes, declarations: EXERCISE_CHECKS, judge, compute, solutions: SOLUTIONS };
  return boxes;
}

if (typeof document !== "undefined") {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => startChecks());
  else startChecks();
}
