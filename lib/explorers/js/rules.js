/* The exercises' rules in the page: how an answer box's text is read and judged, the twins of
 * lib/exercises/__init__.py (check_number, check_whole_number, check_choice) and of
 * lib.exercises.site.typed_answer, with the same sentences (lib/messages.py and the twins' texts).
 * checks.js judges every answer box with them; a chapter's open check (its page.js) decides with
 * the same rules.
 */
import { MESSAGES } from "./constants.js";
import { formatG, pyFloat, pyInt, pyParseFloat, pyRepr, pySplit, pyStrip } from "./python.js";

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

// lib.exercises.site.THOUSANDS and AND: 27,126 as a number; "vice and Cefa" as two items.
const THOUSANDS = /^[+-]?[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?$/;
const AND = /,?\s+and\s+/g;

/** What the reader typed, as the library's check receives it (lib.exercises.site.typed_answer):
 *  {kind: "int" (a BigInt) | "float" | "str" | "tuple" (value: the items, each such a reading), value},
 *  or null for an empty box. `rule`: number, whole, choice, text or tuple. */
export function typedAnswer(text, rule) {
  let s = pyStrip(text);
  if (s === "") return null;
  if (rule === "choice" || rule === "text") return { kind: "str", value: s };
  if (rule === "tuple") {
    if (s.length >= 2 && ((s[0] === "(" && s.endsWith(")")) || (s[0] === "[" && s.endsWith("]")))) s = pyStrip(s.slice(1, -1));
    s = s.replace(AND, ",");
    const items = s.includes(",") ? s.split(",").map(pyStrip) : pySplit(s);
    if (items.length > 1 && items[items.length - 1] === "") items.pop();
    return { kind: "tuple", value: items.map((i) => (i.length >= 2 && i[0] === i[i.length - 1] && (i[0] === "'" || i[0] === '"')
      ? { kind: "str", value: i.slice(1, -1) } : i === "" ? { kind: "str", value: "" } : typedAnswer(i, "number"))) };
  }
  if (THOUSANDS.test(s)) s = s.replace(/,/g, "");
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
export function asNumber(a) {
  if (a.kind === "str" || a.kind === "tuple") return null;
  const v = Number(a.value);
  return Number.isFinite(v) ? v : null;
}

// ----------------------------------------------------------------------------- the rules

const verdict = (ok, message) => ({ ok, verdict: ok ? "correct" : "not yet", message });

export function checkNumber(a, expected, tol, what, hints) {
  const value = asNumber(a);
  if (value === null) return verdict(false, say("answer_number", { what, got: shown(a) }));
  if (Math.abs(value - expected) <= tol) return verdict(true, say("answer_is", { what, value: formatG(value, 4) }));
  for (const [wrong, text] of hints) if (Math.abs(value - wrong) <= tol) return verdict(false, text);
  return verdict(false, say("answer_off", { what, value: formatG(value, 4), direction: value > expected ? "too high" : "too low" }));
}

export function wholeString(value) {
  return BigInt(value).toString();
}

export function checkWhole(a, expected, what, hints) {
  const value = asNumber(a);
  if (value === null || value !== Math.trunc(value)) return verdict(false, say("answer_whole", { what, got: shown(a) }));
  if (value === expected) return verdict(true, say("answer_is", { what, value: wholeString(value) }));
  for (const [wrong, text] of hints) if (value === wrong) return verdict(false, text);
  const told = Math.abs(value) < 1e15 ? wholeString(value) : formatG(value, 3);
  return verdict(false, say("answer_off", { what, value: told, direction: value > expected ? "too high" : "too low" }));
}

/** lib.exercises.spelled: a word reduced to what identifies it (no outer quotes, case or spaces). */
export function spelled(text) {
  let s = pyStrip(text);
  while (s.length >= 2 && s[0] === s[s.length - 1] && "'\"`".includes(s[0])) s = pyStrip(s.slice(1, -1));
  return pySplit(s).join("").toLowerCase();
}

/** lib.exercises.edit_distance (Levenshtein), over code points as Python counts them. */
export function editDistance(a, b) {
  const x = Array.from(a), y = Array.from(b);
  const row = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= y.length; j++) {
      const here = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (x[i - 1] !== y[j - 1] ? 1 : 0));
      prev = here;
    }
  }
  return row[y.length];
}

/** lib.exercises.closest_first: the options spelled closest to the typed text first (a stable sort). */
export function closestFirst(typed, options) {
  const t = spelled(typed);
  return options.map((o, i) => [editDistance(t, spelled(o)), i, o]).sort((p, q) => p[0] - q[0] || p[1] - q[1]).map((r) => r[2]);
}

/** lib.exercises.read_option: the option equal to the answer, else the one option spelled alike. */
function readOption(value, options) {
  if (options.includes(value)) return value;
  const alike = options.filter((o) => spelled(o) === spelled(value));
  return alike.length === 1 ? alike[0] : undefined;
}

export function checkChoice(a, options, expected, right, wrong, hints) {
  const chosen = a.kind === "str" ? readOption(a.value, options) : options.find((o) => o === a.value);
  if (chosen === undefined) {
    const order = a.kind === "str" ? closestFirst(a.value, options) : options;
    const listed = order.slice(0, 12).map(pyRepr).join(", ") + (options.length > 12 ? ", ..." : "");
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
