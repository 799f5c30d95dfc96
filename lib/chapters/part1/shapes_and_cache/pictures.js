/* The shapes-and-cache chapter's picture: the KV cache calculator's sum.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */

export function pictures(k) {
  const { h, commas } = k;
  /** Two decimals and thousands separators, as en-US writes them. The formatter is made once, on
   *  first use (making one takes a browser longer than drawing a picture). */
  let TWO_PLACES = null;
  const twoPlaces = (x) => (TWO_PLACES ||= new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })).format(x);

  return {
    kv_cache(v) {
      const total = BigInt(Math.round(v.total)).toString();
      const gb = twoPlaces(v.total / 1e9), gib = twoPlaces(v.total / 2 ** 30);
      const words = `2 x ${commas(v.layers)} layers x ${commas(v.context)} tokens x ${commas(v.heads)} heads x ` +
        `${commas(v.d_head)} x ${v.bytes} bytes = ${commas(total)} bytes = ${gb} GB (${gib} GiB)`;
      return h("p", { class: "course-kv-result", role: "status" }, h("strong", {}, words));
    },
  };
}
