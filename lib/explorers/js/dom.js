// The page's one helper for building HTML elements (page.js's explorers, checks.js's answer boxes).

/** An element with attributes (`text` sets its text; false, null and undefined are left out) and children. */
export function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) node.append(c);
  return node;
}
