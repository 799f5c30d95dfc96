/* The course's explorers on the static site: swap precomputed figures as the reader moves a control.
 *
 * Each explorer is a <div class="course-static"> holding its controls, a message line, the figure and
 * a JSON script with the tables computed at build time by the same functions a kernel runs
 * (lib/static_explorers.py). No request leaves the page: everything is in it.
 */
(function () {
  "use strict";

  function init(root) {
    var data = JSON.parse(root.querySelector("script.course-explorer-data").textContent);
    var figure = root.querySelector(".course-figure");
    var message = root.querySelector(".course-message");
    var controls = root.querySelectorAll("[data-control]");

    // A control's value as the position of its option (the tables are keyed by positions).
    function position(el) {
      if (el.type === "range") return +el.value;
      if (el.tagName === "BUTTON") return el.getAttribute("aria-pressed") === "true" ? 1 : 0;
      return el.selectedIndex;
    }

    function value(el) {
      return data.controls[el.getAttribute("data-control")][position(el)];
    }

    function update() {
      var state = {};
      controls.forEach(function (el) { state[el.getAttribute("data-control")] = position(el); });
      var html = [];
      for (var i = 0; i < data.parts.length; i++) {
        var part = data.parts[i];
        if (!part.table) { html.push(part.html); continue; }
        var key = part.keys.map(function (k) { return state[k]; }).join("|");
        var entry = data.tables[part.table][key];
        if (entry === undefined || typeof entry !== "number") {
          // The live explorer shows a message and keeps the last good figure: so does this one.
          message.textContent = entry ? entry.error : data.missing;
          return;
        }
        html.push(data.strings[entry]);
      }
      message.textContent = "";
      figure.innerHTML = html.join("");
    }

    controls.forEach(function (el) {
      if (el.tagName === "BUTTON") {
        el.addEventListener("click", function () {
          el.setAttribute("aria-pressed", el.getAttribute("aria-pressed") === "true" ? "false" : "true");
          update();
        });
      } else if (el.type === "range") {
        el.addEventListener("input", function () {
          var shown = value(el);
          el.setAttribute("aria-valuetext", shown);
          var out = root.querySelector('output[for="' + el.id + '"]');
          if (out) out.textContent = shown;
          update();
        });
      } else {
        el.addEventListener("change", update);
      }
    });
    root.classList.add("course-static-live");
  }

  function start() {
    document.querySelectorAll(".course-static").forEach(function (root) {
      try { init(root); } catch (e) { console.warn("course explorer not started:", e); }
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
