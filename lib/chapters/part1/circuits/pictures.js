/* The circuits chapter's picture: one head's attention pattern.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */

export function pictures(k) {
  const { svg, fix, words, room, figure, heatmapBody, heatmapFit } = k;
  function heatmap(matrix, labels, alt, title, room) {
    const [body, w, ht] = heatmapBody(4, 4, matrix, labels, heatmapFit(labels, room - 12, 34), { title, values: true });
    return svg(w + 12, ht + 12, alt, body);
  }

  return {
    pattern(v, o) {
      const last = v.tokens.map((t, j) => `${t} ${fix(v.pattern[v.tokens.length - 1][j], 2)}`).join(", ");
      const alt = `Attention pattern of layer ${v.layer}, head ${v.head} on ${words(v.tokens)}. The last position attends to: ${last}.`;
      return figure(heatmap(v.pattern, v.tokens, alt, `layer ${v.layer}, head ${v.head}`, room(o)), alt);
    },
  };
}
