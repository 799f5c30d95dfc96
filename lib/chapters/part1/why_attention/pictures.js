/* The why-attention chapter's picture: a filter's window beside a trained head's pattern.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */

export function pictures(k) {
  const { fix, words, figure, heatmapRow } = k;
  return {
    window(v, o) {
      const n = v.tokens.length, first = Math.max(0, n - v.width), name = `L${v.layer}H${v.head}`;
      const reads = v.pattern[n - 1][v.head_best];
      const alt = `On ${words(v.tokens)}: at the last position (${v.tokens[n - 1]}) a box filter of width ${v.width} ` +
        `reads positions ${first} to ${n - 1} (${words(v.tokens.slice(first))}), ${fix(1 / v.width)} each, whatever the ` +
        `words are; head ${name} puts most weight on position ${v.head_best} (${v.tokens[v.head_best]}, ` +
        `${fix(reads)}), and ${fix(v.outside)} of its weight falls before the filter's window.`;
      return figure(heatmapRow([[`filter, width ${v.width}`, v.window, `Box filter of width ${v.width}. ${alt}`],
        [`head ${name}`, v.pattern, `Attention pattern of head ${name}. ${alt}`]], v.tokens, o, 34), alt);
    },
  };
}
