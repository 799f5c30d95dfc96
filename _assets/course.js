/* The course's fixes to the theme's own controls, for readers of assistive technology (axe-core's
 * checks in tests/browser/test_site.py):
 * - a control's accessible name holds the words it shows (WCAG 2.5.3, label in name): the search field
 *   shows "Search Ctrl+K" but was named "Search"; "Toggle hidden content" buttons show "Click to show".
 *   The name is taken from what the control shows;
 * - the theme switch's three icons carry titles a screen reader reads as the button's words: gone
 *   (the button keeps its name, "Color mode", and says which mode is on);
 * - the left sidebar (the course's title and its contents) is a landmark, like the rest of the page;
 * - a scrollable table's or output's box, which takes the keyboard's focus, says what it is (a region,
 *   numbered: two may not share a name); an empty corner of a table's header is named "row";
 * - a figure's output that scrolls sideways (a phone: course.css never shrinks a figure) takes the
 *   keyboard's focus, so that it can be scrolled without a pointer, and says so.
 */
(function () {
  function visibleWords(el) {
    return (el.innerText || "").replace(/\s+/g, " ").trim();
  }

  function fix() {
    document.querySelectorAll("button[aria-label], a[aria-label], summary[aria-label]").forEach((el) => {
      const shown = visibleWords(el), name = el.getAttribute("aria-label");
      if (shown && !name.toLowerCase().includes(shown.toLowerCase())) el.removeAttribute("aria-label");
    });
    document.querySelectorAll(".theme-switch-button").forEach((button) => {
      button.querySelectorAll("i[title]").forEach((icon) => {
        icon.removeAttribute("title");
        icon.setAttribute("aria-hidden", "true");
      });
      const mode = document.documentElement.dataset.mode || "auto";
      button.setAttribute("aria-label", `Color mode (now ${mode === "auto" ? "the system's" : mode})`);
    });
    const sidebar = document.querySelector(".bd-sidebar-primary");
    if (sidebar && !sidebar.getAttribute("role")) {
      sidebar.setAttribute("role", "navigation");
      sidebar.setAttribute("aria-label", "The course");
    }
    // Set only what changes: a write of the same value is a mutation too, and would wake the observer below.
    const put = (el, name, value) => { if (el.getAttribute(name) !== value) el.setAttribute(name, value); };
    // A box the keyboard can focus (to scroll it) is a region with a name of its own on the page.
    let n = 0;
    document.querySelectorAll(".pst-scrollable-table-container[tabindex], .cell_output .output[tabindex]").forEach((box) => {
      if (box.getAttribute("role")) return;
      const table = box.matches(".pst-scrollable-table-container");
      const caption = table && box.querySelector("caption");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", `${caption ? visibleWords(caption) : table ? "table" : "output"} ${++n}, scrolls sideways`);
    });
    // A figure wider than a phone's screen keeps its size and scrolls sideways in its output (course.css):
    // that output is then a region the keyboard reaches, to scroll it, and says so.
    // (The box that scrolls is the output's own where the theme's style makes it one, else the cell's output.)
    let f = 0;
    const scrolls = (e) => ["auto", "scroll"].includes(getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth + 1;
    document.querySelectorAll("div.cell_output img, div.cell_output svg.course-heatmap").forEach((figure) => {
      let box = figure.parentElement;
      while (!scrolls(box) && !box.matches("div.cell_output")) box = box.parentElement;
      const ours = (box.getAttribute("aria-label") || "").startsWith("figure ");
      if (scrolls(box) && (ours || !box.hasAttribute("tabindex"))) {
        put(box, "tabindex", "0");
        put(box, "role", "region");
        put(box, "aria-label", `figure ${++f}, scrolls sideways`);
      } else if (ours && !scrolls(box)) {
        ["tabindex", "role", "aria-label"].forEach((name) => box.removeAttribute(name));
      }
    });
    // A table's empty corner cell (the column of the rows' names) is named for a screen reader.
    document.querySelectorAll("thead th").forEach((th) => {
      if (visibleWords(th) || th.querySelector(".course-hidden")) return;
      th.append(Object.assign(document.createElement("span"), { className: "course-hidden", textContent: "row" }));
    });
  }

  // The theme and myst-nb add their buttons when the document is parsed: fixed after them,
  // and again when a toggle or the theme switch rewrites its words.
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => setTimeout(fix));
  else setTimeout(fix);
  window.addEventListener("load", fix);
  window.addEventListener("resize", () => setTimeout(fix, 100));
  document.addEventListener("click", () => setTimeout(fix, 0));
  // The theme makes a box that scrolls focusable when it finds it overflowing (at load, on a resize): fixed
  // in the same turn (a microtask), so no reader or checker ever meets a focusable box without its role.
  let queued = false;
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => { fix(); queued = false; });
  }).observe(document.documentElement, { subtree: true, attributes: true, attributeFilter: ["tabindex"] });
})();
