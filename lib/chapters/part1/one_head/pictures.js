/* The one-head chapter's picture: the cat-sat head's pattern and what it writes.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */

export function pictures(k) {
  const { svg, text, fix, words, room, figure, heatmapBody, heatmapFit } = k;
  return {
    cat_sat(v, o) {
      const n = v.words.length, last = v.words[n - 1], vec = (xs) => xs.map((x) => fix(x, 2)).join(", ");
      const how = v.scaled ? "divided by √d_head" : "not divided";
      const alt = `The head on ${words(v.words)}, scores ${how}. ${last} scores ` +
        v.words.map((w, j) => `${w} ${fix(v.scores[n - 1][j])}`).join(", ") + "; so it takes " +
        v.words.map((w, j) => `${w} ${fix(v.pattern[n - 1][j])}`).join(", ") + `. The head writes (${vec(v.write)}) ` +
        `for ${last}; its stream becomes (${vec(v.stream)}).`;
      const [body, w, ht] = heatmapBody(4, 4, v.pattern, v.words, heatmapFit(v.words, Math.min(room(o), 420) - 12, 48),
        { title: `who attends to whom (scores ${how})`, values: true });
      const lines = [`scores of ${last}: ${v.words.map((x, j) => `${x} ${fix(v.scores[n - 1][j], 2)}`).join(", ")}`,
        `head writes for ${last}: (${vec(v.write)})`, `stream of ${last} after: (${vec(v.stream)})`];
      lines.forEach((t, i) => body.push(text(4, ht + 18 + 18 * i, t, { size: 12 })));
      const width = Math.max(w + 12, Math.min(room(o), 7 * Math.max(...lines.map((t) => t.length)) + 12));
      return figure(svg(width, ht + 18 * lines.length + 20, alt, body), alt);
    },
  };
}
