/* Every explorer's view computed in the page, by name: the twin of each explorer's `compute`.
 *
 * Each function takes the page's context (`viewContext`: {model, points(name), defaultView, defaults},
 * to which the page adds `real` and, for a view computed in steps, `progress` and `stale`), the
 * controls' values and the explorer's fixed arguments, and returns the same view as the library: the
 * same fields, the same numbers (to float rounding: the library runs float32 weights in float32, the
 * page in doubles), the same messages for a bad value, checked in the same order. Each chapter's are in
 * its unit (lib/chapters/PART/UNIT/page.js, beside its explorers.py), assembled when the site is built
 * into units.js (lib/explorers/web.py); what several share is in twins.js. tests/explorers/test_twins.py
 * holds every one to its Python twin in Node (the fast tier), tests/browser/test_site_model.py in the
 * browser.
 */
import { loadModel } from "./model.js";
import { points } from "./twins.js";

export { UNITS, VIEWS } from "./units.js";

const BASE = new URL("./", import.meta.url);

/** The model a declaration names, as the page runs it (the site's shipped weights, fetched once), or null. */
export function pageModel(name) {
  return name ? loadModel(new URL("models/", BASE).href, name) : Promise.resolve(null);
}

/** What an explorer's view computes with, from its declaration (lib.explorers.page.html's JSON): the model the
 *  page runs (`spec.model`), the site's point sets, and the opening values with the picture the build drew for
 *  them (`defaults`, `defaultView`: what an explorer of the real model shows before the reader loads it, real.js
 *  openingView). The page adds `real` (the real model, once loaded) and, on a move, `progress` and `stale`; the
 *  tests' Node contract builds its context here too (tests/twin_contract.mjs). */
export async function viewContext(spec) {
  const defaults = Object.fromEntries((spec.rows || []).flat().map((c) => [c.name, c.default]));
  return { model: await pageModel(spec.model), points, defaultView: spec.default, defaults };
}
