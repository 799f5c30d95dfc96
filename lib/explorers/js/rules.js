/* The exercises' rules in the page: how an answer box's text is read and judged, the twins of
 * lib/exercises/__init__.py (check_number, check_whole_number, check_choice) and of
 * lib.exercises.site.typed_answer, with the same sentences (lib/messages.py and the twins' texts).
 * checks.js judges every answer box with them; a chapter's open check (its page.js) decides with
 * the same rules.
 */
import { MESSAGES, READING } from "./constants.js";
import { formatG, pyFloat, pyParseFloat, pyRepr, pySplit, pyStrip } from "./python.js";

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

// ----------------------------------------------------------------------------- reading what is typed

// lib.exercises.reading: the one rule for a learner's answer, its lists and patterns generated from Python.
const RE = Object.fromEntries(Object.entries(READING.patterns).map(([k, p]) => [k, new RegExp(p, k === "float_word" ? "i" : "")]));
const AND = /,?\s+and\s+/g;          // lib.exercises.site.AND: "vice and Cefa" as two items

const intOf = (s) => ({ kind: "int", value: BigInt(s.replace(/_/g, "")) });
const floatOf = (v) => ({ kind: "float", value: v });
const numberOf = (a) => Number(a.value);

/** Python's rstrip(chars). */
function rstripChars(s, chars) {
  let end = s.length;
  while (end > 0 && chars.includes(s[end - 1])) end--;
  return s.slice(0, end);
}

/** reading._numeral: a reading ({kind: int|float}), {unread: message}, or null (no number). */
function numeral(s, whole) {
  if (RE.int.test(s)) return intOf(s);
  if (RE.float.test(s) || RE.float_word.test(s)) return floatOf(pyParseFloat(s));
  if (RE.space_groups.test(s)) {
    for (const c of READING.group_spaces) s = s.split(c).join("");
    return numeral(s, whole);
  }
  if (RE.ambiguous.test(s) && !whole) {
    const digits = s.replace(/^[+-]+/, ""), sign = s.slice(0, s.length - digits.length);
    return { unread: say("answer_comma", { got: s, thousands: sign + digits.replace(/,/g, ""), decimal: sign + digits.replace(/,/g, ".") }) };
  }
  if (RE.comma_groups.test(s)) {
    s = s.replace(/,/g, "");
    return RE.int.test(s) ? intOf(s) : floatOf(pyParseFloat(s));
  }
  if (RE.point_groups.test(s)) {
    s = s.replace(/\./g, "").replace(/,/g, ".");
    return RE.int.test(s) ? intOf(s) : floatOf(pyParseFloat(s));
  }
  if (RE.decimal_comma.test(s)) return floatOf(pyParseFloat(s.replace(/,/g, ".")));
  return null;
}

function cutEnd(s, endings) {
  const low = s.toLowerCase();
  for (const e of endings) {
    if (low.endsWith(e.toLowerCase()) && s.length > e.length) return [pyStrip(s.slice(0, s.length - e.length)), true];
  }
  return [s, false];
}

/** lib.exercises.reading.read_number: {kind: int|float, value}, or {kind: "str", value: the stripped text,
 *  unread: the sentence for a comma read two ways (or undefined)}. */
export function readNumber(text, whole = false, units = []) {
  const original = pyStrip(text);
  let s = pyStrip(rstripChars(original, READING.trailing));
  const low = s.toLowerCase();
  for (const a of READING.approx) {
    if (low.startsWith(a) && s.length > a.length) { s = pyStrip(s.slice(a.length)); break; }
  }
  let percent;
  [s, percent] = cutEnd(s, READING.percent);
  if (!percent) [s] = cutEnd(s, [...units].sort((p, q) => q.length - p.length));
  for (const c of READING.minus) s = s.split(c).join("-");
  let value;
  if (s.includes("/")) {
    const at = s.indexOf("/");
    const top = numeral(pyStrip(s.slice(0, at)), true), bottom = numeral(pyStrip(s.slice(at + 1)), true);
    if (!top || !bottom || top.unread || bottom.unread || numberOf(bottom) === 0) return { kind: "str", value: original };
    value = floatOf(numberOf(top) / numberOf(bottom));
  } else {
    value = numeral(s, whole);
    if (value === null) return { kind: "str", value: original };
    if (value.unread) return { kind: "str", value: original, unread: value.unread };
  }
  return percent ? floatOf(numberOf(value) / 100) : value;
}

/** lib.exercises.reading.unquoted: no outer white space or pairs of quotes. */
export function unquoted(text) {
  let s = pyStrip(text), changed = true;
  while (changed && s.length >= 2) {
    changed = false;
    for (const [left, right] of READING.quotes) {
      if (s.startsWith(left) && s.endsWith(right)) { s = pyStrip(s.slice(left.length, s.length - right.length)); changed = true; break; }
    }
  }
  return s;
}

/** lib.exercises.reading.read_text: one space between words; with `words`, a word typed in another case
 *  is the one token so spelled, and punctuation after the last word is left out when what remains is one. */
export function readText(text, words = null) {
  const parts = pySplit(unquoted(text));
  if (!words || parts.length === 0) return parts.join(" ");
  const known = new Set(words), folded = new Map();
  for (const w of words) {
    const k = w.toLowerCase();
    if (!folded.has(k)) folded.set(k, []);
    folded.get(k).push(w);
  }
  const last = parts[parts.length - 1];
  if (!known.has(last)) {
    const bare = rstripChars(last, READING.trailing);
    if (bare && (known.has(bare) || (folded.get(bare.toLowerCase()) || []).length === 1)) parts[parts.length - 1] = bare;
  }
  return parts.map((p) => {
    const same = folded.get(p.toLowerCase()) || [];
    return !known.has(p) && same.length === 1 ? same[0] : p;
  }).join(" ");
}

function tupleItem(i) {
  const bare = unquoted(i);
  if (bare !== i) return { kind: "str", value: bare };
  if (i === "") return { kind: "str", value: "" };
  const r = readNumber(i, true);
  return r.kind === "str" ? { kind: "str", value: i } : r;
}

/** What the reader typed, as the library's check receives it (lib.exercises.site.typed_answer):
 *  {kind: "int" (a BigInt) | "float" | "str" | "tuple" (value: the items, each such a reading), value},
 *  or null for an empty box. `rule`: number, whole, choice, text or tuple; `decl`: the twin's units and words. */
export function typedAnswer(text, rule, decl = {}) {
  let s = pyStrip(text);
  if (s === "") return null;
  if (rule === "choice") return { kind: "str", value: s };
  if (rule === "text") return { kind: "str", value: readText(s, decl.words || null) };
  if (rule === "tuple") {
    if (s.length >= 2 && ((s[0] === "(" && s.endsWith(")")) || (s[0] === "[" && s.endsWith("]")))) s = pyStrip(s.slice(1, -1));
    s = s.replace(AND, ",");
    const items = s.includes(",") ? s.split(",").map(pyStrip) : pySplit(s);
    if (items.length > 1 && items[items.length - 1] === "") items.pop();
    return { kind: "tuple", value: items.map(tupleItem) };
  }
  return readNumber(s, rule === "whole", decl.units || []);
}

/** The line under a box: how it reads what is typed (lib.exercises.reading's rule, in lib.messages' hint_* sentences). */
export function boxHint(decl) {
  const units = decl.units && decl.units.length ? say("hint_units", { units: decl.units.join(", ") }) : "";
  switch (decl.reads || decl.rule) {
    case "number": return say("hint_number", { units });
    case "whole": return say("hint_whole", { units });
    case "choice": return say("hint_choice");
    case "text": return say("hint_text");
    default: return say("hint_tuple");
  }
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
  if (a.kind === "str") a = readNumber(a.value);     // as check_number reads a text (lib.exercises.reading)
  if (a.unread) return verdict(false, a.unread);
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
  if (a.kind === "str") a = readNumber(a.value, true);   // as check_whole_number reads a text
  const value = asNumber(a);
  if (value === null || value !== Math.trunc(value)) return verdict(false, say("answer_whole", { what, got: shown(a) }));
  if (value === expected) return verdict(true, say("answer_is", { what, value: wholeString(value) }));
  for (const [wrong, text] of hints) if (value === wrong) return verdict(false, text);
  const told = Math.abs(value) < 1e15 ? wholeString(value) : formatG(value, 3);
  return verdict(false, say("answer_off", { what, value: told, direction: value > expected ? "too high" : "too low" }));
}

/** lib.exercises.spelled: a word reduced to what identifies it (no outer quotes, full stop, case or spaces). */
export function spelled(text) {
  let s = unquoted(text);
  const bare = rstripChars(s, READING.trailing);
  if (bare) s = unquoted(bare);
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
  const a = typedAnswer(text, decl.reads || decl.rule, decl);
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
