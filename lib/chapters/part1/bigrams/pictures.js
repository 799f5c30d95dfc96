/* The bigrams chapter's picture: the counted table's followers beside the zero-layer model's page.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */
import { PALETTE } from "../../../explorers/js/constants.js";

export function pictures(k) {
  const { fix, words, figure, row, barChart } = k;
  return {
    bigram(v, o) {
      const seen = v.pairs > 0;
      const rows = v.rows.map((r) => `${r.token} ${fix(r.model)} (table ${fix(r.table)})`).join(", ");
      const alt = `After ${v.last} (position ${v.position} of ${words(v.tokens)}), ` + (seen
        ? `the counted table's followers and the zero-layer model's probabilities: ${rows}. Largest gap over the ` +
          `whole row: ${fix(v.gap)}.`
        : `the counted rounds never show ${v.last} followed by anything; the zero-layer model's best next tokens: ${rows}.`);
      const title = `after ${v.last} (position ${v.position}): ` + (seen ? `largest gap ${fix(v.gap)}` : "never followed in the rounds");
      return figure(barChart(v.rows.map((r) => [r.token, r.model]), alt, { title, width: o.width,
        ghost: v.rows.map((r) => r.table), labels: v.rows.map((r) => `${fix(r.model)} (${fix(r.table)})`),
        legend: [[PALETTE.muted, "counted table"], [PALETTE.main, "zero-layer model"]] }), alt);
    },
  };
}
