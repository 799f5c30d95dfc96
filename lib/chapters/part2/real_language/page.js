/* The page twins of the real-language chapter: its checks' computations (its t-SNE explorer's
 * view is the three-ways chapter's), and SmolLM2's rows on the reader's words (`smol_rows`: the picture the
 * build drew, until the reader loads the real model; then the page's model reads the rows,
 * lib/explorers/js/smollm2/ops.js `rows`, and the view is smol_map.rows_view's).
 */
import { pyRepr, pyStrip } from "../../../explorers/js/python.js";
import { CourseError, say } from "../../../explorers/js/readout.js";
import { openingView } from "../../../explorers/js/real.js";
import { bestByCosine, points, varianceShares } from "../../../explorers/js/twins.js";

/** smol_map.read_words: the words of the box, separated by commas. */
function readWords(text, most) {
  const words = String(text).split(",").map((w) => pyStrip(w)).filter((w) => w);
  if (!words.length) throw new CourseError(say("rows_none"));
  if (words.length > most) throw new CourseError(say("rows_many", { most, n: words.length }));
  return words;
}

export const VIEWS = {
  async smol_rows(context, v, a) {
    const words = readWords(v.words, a.most);
    if (!context.real) return openingView(context, v);
    const r = await context.real.run("rows", { words, k: a.k });
    if (r === null) return null;
    return { words: r.words, tokens: r.tokens, cos: r.cos, k: a.k };
  },
};

const cumulative = (shares, k) => shares.slice(0, k).reduce((s, x) => s + x, 0);

export const COMPUTE = {
  // checks.nearest_is_same_word: the learner's word's nearest token, the same word written another way or not.
  async smolNearestSame(a, _, real) {
    const words = readWords(a.text, 1);
    const [entry] = (await real.run("rows", { words, k: 1 })).words;
    if (!entry.one) throw new CourseError(say("rows_not_one", { word: pyRepr(entry.word), pieces: entry.pieces.map(pyRepr).join(" + ") }));
    const [token, cos] = entry.neighbours[0];
    const expected = pyStrip(token).toLowerCase() === entry.word.toLowerCase() ? "yes" : "no";
    return { expected, options: ["yes", "no"], hints: [], fields: { token: pyRepr(token), cos: cos.toFixed(2), expected } };
  },
  async pcaShare(a) {
    const { groups, vectors } = await points(a.points);
    const content = vectors.filter((_, i) => groups[i] !== a.leave_out);
    const shares = varianceShares(content), top4 = cumulative(shares, 4);
    return { expected: top4, hints: [["all", cumulative(varianceShares(vectors), 4)], ["top2", cumulative(shares, 2)],
      ["percent", top4 * 100]] };
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
};
