/* The many-heads chapter's picture: a layer's heads side by side.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */

export function pictures(k) {
  const { h, fix, words, figure, heatmapRow } = k;
  return {
    heads(v, o) {
      const n = v.tokens.length, where = v.positions ? "with its position embeddings" : "with its position embeddings off";
      const reads = v.heads.map((name, i) => `${name} ${v.tokens[v.best[i]]} (position ${v.best[i]}, ` +
        `${fix(v.patterns[i][n - 1][v.best[i]], 2)})`).join("; ");
      const alt = `Layer ${v.layer}'s heads on ${words(v.tokens)}, the model ${where}. From the last position ` +
        `(${v.tokens[n - 1]}) each reads most: ${reads}. Mean total-variation distance between two heads' rows there: ` +
        `${fix(v.spread, 2)}.`;
      const maps = v.heads.map((name, i) => [`${name} → ${v.tokens[v.best[i]]}`, v.patterns[i],
        `Attention pattern of head ${name} on ${words(v.tokens)}, ${where}; the last position reads most ` +
        `${v.tokens[v.best[i]]} at position ${v.best[i]}.`]);
      const head = h("p", { class: "course-pick" }, `From ${v.tokens[n - 1]}, the heads' rows differ by `,
        h("b", {}, fix(v.spread, 2)), ` on average (0: they read alike; 1: they share nothing)`);
      return figure(heatmapRow(maps, v.tokens, o), alt, head);
    },
  };
}
