/* The search-by-hand chapter's picture: the temperature explorer's results page.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */

export function pictures(k) {
  const { shownT, words, top, figure, barChart } = k;
  return {
    temperature(v, o) {
      const alt = `Bar chart of the most probable next tokens after ${words(v.tokens)} at temperature ` +
        `${shownT(v.temperature)}: ${top(v.page)}.`;
      return figure(barChart(v.page, alt, { title: `${words(v.tokens)} → (temperature ${shownT(v.temperature)})`, width: o.width }), alt);
    },
  };
}
