// Loaded on pages with widgets, after require.js and before the widget manager.
(function () {
  // 1. Tell require.js where the manager's own files live, so that the fonts it loads come from
  //    this site, not from a path relative to the page (which does not exist) or from a CDN.
  //    Every package embed-amd.js defines by name (html-manager, base, controls; output is loaded
  //    on demand) computes its folder from its own module path, so each is mapped there too:
  //    unmapped, a page in chapters/part3/ asked, now and then, for
  //    chapters/part3/@jupyter-widgets/<font>, which does not exist.
  var root = document.documentElement.dataset.content_root || "";
  var manager = root + "_static/vendor/html-manager";
  require.config({
    paths: {
      "@jupyter-widgets/html-manager/dist": manager,
      "@jupyter-widgets/html-manager": manager + "/html-manager",
      "@jupyter-widgets/base": manager + "/base",
      "@jupyter-widgets/controls": manager + "/controls",
      "@jupyter-widgets/output": manager + "/output",
    },
  });

  // 2. The manager typesets widget labels with the MathJax 2 call MathJax.Hub.Queue; the site
  //    runs MathJax 3. Give it that one call, forwarded to MathJax 3's typesetPromise.
  function addHub() {
    var mj = window.MathJax;
    if (mj && !mj.Hub) {
      mj.Hub = {
        Queue: function (job) {
          var el = job && job[2];
          if (window.MathJax.typesetPromise) {
            window.MathJax.typesetPromise(el ? [el] : undefined).catch(function () {});
          }
        },
      };
    }
  }
  addHub();
  document.addEventListener("DOMContentLoaded", addHub);
})();
