/* Python's spelling of values, so that the page's messages are the library's, word for word.
 *
 * The library's messages print values with repr(), str() and the "g" format; a reader who meets
 * a message on the website and the same one in JupyterLab should read the same sentence.
 */

/** Python's str.isspace() characters: what str.split() splits on. */
export const PY_SPACE = /[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

/** str.split() with no argument: runs of white space, none at either end. */
export function pySplit(text) {
  return String(text).split(PY_SPACE).filter((w) => w !== "");
}

/** str.strip() with no argument. */
export function pyStrip(text) {
  return String(text).replace(new RegExp(`^${PY_SPACE.source}|${PY_SPACE.source}$`, "g"), "");
}

// What Python's str.isprintable() calls unprintable: controls, formats, surrogates, private use, unassigned, and
// separators other than the space (the browser's Unicode tables, which may be a version apart from Python's).
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** repr() of a str: single quotes unless the text holds one and no double quote. */
export function pyRepr(text) {
  const s = String(text);
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0);
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += "\\" + quote;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += "\\x" + code.toString(16).padStart(2, "0");
    else if (code >= 0x80 && code <= 0xa0) out += "\\x" + code.toString(16).padStart(2, "0");
    else if (code !== 0x20 && UNPRINTABLE.test(ch)) {
      // str.isprintable() is false: Python writes the code point (\xhh, \uhhhh or \Uhhhhhhhh)
      out += code <= 0xff ? "\\x" + code.toString(16).padStart(2, "0") : code <= 0xffff
        ? "\\u" + code.toString(16).padStart(4, "0") : "\\U" + code.toString(16).padStart(8, "0");
    } else out += ch;
  }
  return out + quote;
}

/** The shortest digits that read back as x, and the decimal exponent of the first one. */
function shortest(x) {
  const [mantissa, exp] = Math.abs(x).toExponential().split("e");
  return { digits: mantissa.replace(".", ""), exp: +exp };
}

/** str() / repr() of a Python float. */
export function pyFloat(x) {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const { digits, exp } = shortest(x);
  if (exp < -4 || exp >= 16) {
    const rest = digits.slice(1);
    const e = exp < 0 ? "-" + String(-exp).padStart(2, "0") : "+" + String(exp).padStart(2, "0");
    return `${sign}${digits[0]}${rest ? "." + rest : ""}e${e}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const frac = digits.slice(exp + 1);
  return `${sign}${whole}.${frac || "0"}`;
}

/** format(x, "g"): six significant digits, trailing zeros dropped. */
export function formatG(x, precision = 6) {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const [m, e] = x.toExponential(precision - 1).split("e");
  const exp = +e;
  if (exp < -4 || exp >= precision) {
    const mant = m.includes(".") ? m.replace(/0+$/, "").replace(/\.$/, "") : m;
    return `${mant}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  const fixed = x.toFixed(Math.max(0, precision - 1 - exp));
  return fixed.includes(".") ? fixed.replace(/0+$/, "").replace(/\.$/, "") : fixed;
}

/** Thousands separators, as "{:,}" writes an integer (a BigInt or a safe integer). */
export function withCommas(n) {
  const s = String(n);
  const neg = s.startsWith("-");
  const digits = neg ? s.slice(1) : s;
  return (neg ? "-" : "") + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

const DIGITS = "\\d(?:_?\\d)*";
const INT_LITERAL = new RegExp(`^[+-]?${DIGITS}$`);
const FLOAT_LITERAL = new RegExp(`^[+-]?(?:(?:${DIGITS})?\\.${DIGITS}|${DIGITS}\\.?)(?:[eE][+-]?${DIGITS})?$`);
const FLOAT_WORDS = /^[+-]?(?:inf|infinity|nan)$/i;

/** int(text) for the text a reader types: a BigInt, or null where Python raises ValueError. */
export function pyInt(text) {
  const s = pyStrip(text);
  if (!INT_LITERAL.test(s)) return null;
  return BigInt(s.replace(/_/g, ""));
}

/** float(text): a number, or null where Python raises ValueError. */
export function pyParseFloat(text) {
  const s = pyStrip(text);
  if (FLOAT_WORDS.test(s)) {
    const neg = s.startsWith("-");
    if (/nan/i.test(s)) return NaN;
    return neg ? -Infinity : Infinity;
  }
  if (!FLOAT_LITERAL.test(s)) return null;
  return Number(s.replace(/_/g, ""));
}
