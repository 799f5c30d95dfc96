/* The page twins of the one-head chapter: the cat-sat head's view (its embeddings typed in
 * boxes) and its checks' computations.
 */
import { formatG, pyParseFloat, pyRepr, pySplit, pyStrip } from "../../../explorers/js/python.js";
import { require, say, softmax } from "../../../explorers/js/readout.js";

/** lib.chapters.part1.one_head.explorers.parse_vector */
export function parseVector(text, name, n, limit) {
  const s = pyStrip(text);
  const problem = say("vector_numbers", { name, n, limit: formatG(limit), got: pyRepr(s) });
  const pieces = pySplit(s.replace(/,/g, " "));
  require(pieces.length === n, problem);
  const values = pieces.map(pyParseFloat);
  require(values.every((x) => x !== null && Number.isFinite(x) && x >= -limit && x <= limit), problem);
  return values;
}

const matmul = (A, B) => A.map((row) => B[0].map((_, j) => row.reduce((s, x, k) => s + x * B[k][j], 0)));
const transpose = (A) => A[0].map((_, j) => A.map((row) => row[j]));

export const VIEWS = {
  cat_sat(_, v, a) {
    const d = a.W_Q.length;
    const embed = {};
    for (const w of a.words) embed[w] = parseVector(v[`embed_${w}`], `the embedding of ${w}`, d, a.limit);
    const words = pySplit(v.order), n = words.length;
    const X = words.map((w) => embed[w]);
    const Q = matmul(X, a.W_Q), K = matmul(X, a.W_K), V = matmul(X, a.W_V);
    const raw = matmul(Q, transpose(K)), divide = v.scaled ? Math.sqrt(a.d_head) : 1;
    const scores = raw.map((row, i) => row.map((s, j) => (j > i ? null : s / divide)));
    const pattern = scores.map((row, i) => {
      const live = Array.from(softmax(row.slice(0, i + 1)));
      return row.map((_, j) => (j > i ? 0 : live[j]));
    });
    const write = matmul(matmul(pattern, V), a.W_O)[n - 1];
    return { words, scaled: Boolean(v.scaled), scores, pattern, write, stream: X[n - 1].map((x, j) => x + write[j]) };
  },
};

export const COMPUTE = {
  abcSelfWeight(a) {
    const e = a.dots.map((s) => Math.exp(s / Math.sqrt(a.d_head)));
    return { expected: e[2] / e.reduce((x, y) => x + y, 0) };
  },

  unscaledWeight(a) {
    return { expected: softmax(a.scores)[1], hints: [["scaled", softmax(a.scores.map((s) => s / Math.sqrt(a.d_head)))[1]]] };
  },
};
