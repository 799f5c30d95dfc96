/* The page twins of the scale chapter: its checks' computations.
 */

export const COMPUTE = {
  multiplyAdds(a) {
    const [vocab, d] = a.shape;
    return { expected: vocab * d, hints: [["added", vocab + d], ["bytes", vocab * d * 4], ["per_word", vocab], ["one_dot", d]] };
  },

  dictionaryGigabytes(a) {
    const [vocab, d] = a.shape;
    const expected = vocab * d * a.bytes / 1e9;
    return { expected, hints: [["float32", expected * 2], ["gib", expected * 1e9 / 2 ** 30], ["own", a.own_vocab * d * a.bytes / 1e9]] };
  },
};
