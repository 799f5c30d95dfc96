/* The course's fixes to the theme's own controls, for readers of assistive technology (axe-core's
 * checks in tests/browser/test_site.py):
 * - a control's accessible name holds the words it shows (WCAG 2.5.3, label in name): the search field
 *   shows "Search Ctrl+K" but was named "Search"; "Toggle hidden content" buttons show "Click to show".
 *   The name is taken from what the control shows;
 * - the theme switch's three icons carry titles a screen reader reads as the button's words: gone
 *   (the button keeps its name, "Color mode", and says which mode is on);
 * - the left sidebar (the course's title and its contents) is a landmark, like the rest of the page;
 * - a scrollable table's container, which takes the keyboard's focus, says what it is.
 */
(function () {
  function visibleWords(el) {
    return (el.innerText || "").replace(/\s+/g, " ").trim();
  }

  function fix() {
    document.querySelectorAll("button[aria-label], a[aria-label]").forEach((el) => {
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
    document.querySelectorAll(".pst-scrollable-table-container[tabindex]").forEach((box) => {
      if (box.getAttribute("role")) return;
      box.setAttribute("role", "region");
      const caption = box.querySelector("caption");
      box.setAttribute("aria-label", caption ? visibleWords(caption) : "a table, scrolls sideways");
    });
  }

  // The theme and sphinx-togglebutton add their buttons when the document is parsed: fixed after them,
  // and again when a toggle or the theme switch rewrites its words.
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => setTimeout(fix));
  else setTimeout(fix);
  window.addEventListener("load", fix);
  document.addEventListener("click", () => setTimeout(fix, 0));
})();
