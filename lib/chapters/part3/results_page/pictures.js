/* The results-page chapter's picture: the sampling explorer's reshaped page and its pick.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */
import { PALETTE } from "../../../explorers/js/constants.js";

export function pictures(k) {
  const { h, fix, shownT, words, top, figure, barChart } = k;
  return {
    sampling(v, o) {
      const kept = v.rows.filter((r) => r.final > 0).map((r) => [r.token, r.final]);
      const how = v.greedy ? "Greedy decoding" : `The roll with seed ${v.seed}`;
      const pick = `${how} picks ${v.chosen} (p = ${fix(v.chosen_prob)})`;
      // Truncation cuts only when top-k or top-p (below 1) is set; a probability that is 0 after the
      // temperature alone underflowed (too small for a number to hold), it was not cut.
      const truncating = v.top_k !== null || (v.top_p !== null && v.top_p < 1);
      const n = `${v.survivors} ${v.survivors === 1 ? "token" : "tokens"}`;
      const kept_words = truncating ? `${n} ${v.survivors === 1 ? "survives" : "survive"} truncation`
        : `${n} ${v.survivors === 1 ? "has" : "have"} a probability above 0`;
      const alt = `${pick}. Bar chart of the next-token page after ${words(v.tokens)} at temperature ${shownT(v.temperature)}` +
        `${v.top_k !== null ? `, top-k ${v.top_k}` : ""}${v.top_p !== null ? `, top-p ${v.top_p}${truncating ? "" : " (off)"}` : ""}. ` +
        `${kept_words}. Distribution rolled on: ${top(kept)}.`;
      const chart = barChart(v.rows.map((r) => [r.token, r.final]), alt, {
        title: `${words(v.tokens)}: ${kept_words}`, width: o.width,
        ghost: v.rows.map((r) => r.heated),
        labels: v.rows.map((r) => (r.final > 0 ? fix(r.final) : r.heated > 0 ? "cut" : "0 (underflow)")),
        legend: [[PALETTE.muted, "after temperature"], [PALETTE.main, "rolled on (after truncation)"]],
        highlight: v.chosen,
      });
      const pickLine = h("p", { class: "course-pick", role: "status" }, `${how} picks `, h("b", {}, v.chosen),
        ` (p = ${fix(v.chosen_prob)})`);
      return figure(chart, alt, pickLine);
    },
  };
}
