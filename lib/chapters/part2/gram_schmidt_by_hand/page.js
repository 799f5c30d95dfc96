/* The page twins of the Gram-Schmidt-by-hand chapter: its checks' computations.
 */
import { asNumber, checkWhole } from "../../../explorers/js/rules.js";
import { dot, norm } from "../../../explorers/js/twins.js";

const sub = (x, y) => x.map((v, i) => v - y[i]);

/** The chapter's axes (lib.chapters.part2.gram_schmidt_by_hand.checks._axes): e1 from king - queen, e2 from king - man
 *  (`raw`) made orthogonal to e1, both of length 1. */
function gsAxes(w) {
  const unit = (x) => x.map((v) => v / norm(x));
  const e1 = unit(sub(w.king, w.queen)), raw = sub(w.king, w.man);
  const along = dot(raw, e1);
  return { e1, e2: unit(raw.map((v, i) => v - along * e1[i])), raw };
}

export const COMPUTE = {
  princeRoyalty(a) {
    const { e1, e2, raw } = gsAxes(a.words);
    return { expected: dot(a.prince, e2), hints: [["e1", dot(a.prince, e1)], ["raw", dot(a.prince, raw)]] };
  },

  overlapBefore(a) {
    // lib.chapters.part2.gram_schmidt_by_hand.checks.overlap_before: a whole number, then the known wrong values' texts.
    const w = a.words, { e1, e2, raw } = gsAxes(w), other = sub(w.king, w.woman);
    const expected = dot(other, e1), wrong = [["man", dot(raw, e1)], ["e2", dot(other, e2)]];
    return { decide(answer) {
      const r = checkWhole(answer, Math.round(expected), a.what, []), value = asNumber(answer);
      if (r.ok || value === null) return r;
      const hit = wrong.find(([, x]) => Math.abs(value - x) < 1e-3);
      return hit ? { ok: false, key: hit[0] } : r;
    } };
  },
};
