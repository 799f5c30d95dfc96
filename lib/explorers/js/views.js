/* Every explorer's view computed in the page, by name: the twin of each explorer's `compute`.
 *
 * Each function takes the page's context ({model, points(name)}), the controls' values and the
 * explorer's fixed arguments, and returns the same view as the library: the same fields, the same
 * numbers (to float rounding: the library runs float32 weights in float32, the page in doubles),
 * the same messages for a bad value, checked in the same order. Each chapter's are in its unit
 * (lib/chapters/PART/UNIT/page.js, beside its explorers.py), assembled when the site is built into
 * units.js (lib/explorers/web.py); what several share is in twins.js. tests/browser/test_site_model.py
 * holds every one to its Python twin.
 */
export { VIEWS } from "./units.js";
export { ablationHooks, roleDraws, parsePosition, patchingGrid, patchingSteps, stageLabel, swapPlayers } from "./twins.js";
