/* The page twins of the why-attention chapter: the window explorer's view (a filter's
 * fixed window beside a trained head's pattern) and its checks' computations (the convolution's).
 */
import { greedy, softmax } from "../../../explorers/js/readout.js";
import { argmax, tokensOf } from "../../../explorers/js/twins.js";

/** lib.chapters.part1.why_attention.explorers.box_filter */
export function boxFilter(n, width) {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (__, j) => (i - width < j && j <= i ? 1 / width : 0)));
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

export const VIEWS = {
  window({ model }, v) {
    const ids = model.encode(v.prompt), n = ids.length;
    const pattern = model.run(ids, {}, "patterns").patterns[v.layer][v.head].map((r) => Array.from(r));
    const last = pattern[n - 1];
    let outside = 0;
    for (let j = 0; j < Math.max(0, n - v.width); j++) outside += last[j];
    return { tokens: tokensOf(model, ids), width: v.width, layer: v.layer, head: v.head, window: boxFilter(n, v.width),
      pattern, head_best: argmax(last), outside };
  },
};

export const COMPUTE = {
  filterAt(a) {
    const at = (name) => convolve(a.image, a.filters[name])[a.stop[0]][a.stop[1]];
    return { expected: at(a.filter), hints: [[a.other, at(a.other)]] };
  },

  ocrClass(a) {
    const classes = Object.keys(a.filters), probs = softmax(ocrScores(a.image, a.filters));
    return { expected: classes[greedy(probs)], options: classes };
  },
};
