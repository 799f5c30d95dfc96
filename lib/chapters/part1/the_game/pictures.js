/* The game chapter's picture: a round read by the rules checker, each token coloured by its role.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */
import { GROUP_COLOURS, PALETTE } from "../../../explorers/js/constants.js";

const ROLES = ["special", "player", "epithet", "verb", "absurd"];
// Each kind of word's colour: the group colours, leaving out the accent (which marks a broken token).
const ROLE_COLOURS = [6, 0, 2, 3, 4];

export function pictures(k) {
  const { h, svg, text, rect, words, room, figure, SOFT } = k;
  const roleColour = (role) => GROUP_COLOURS[ROLE_COLOURS[Math.max(0, ROLES.indexOf(role))] % GROUP_COLOURS.length];
  const charW = 7.2;
  const f = (x) => x.toFixed(1);

  function rules(v, o) {
    const W = Math.max(300, Math.min(room(o), 640));
    const body = [], rowH = 54, chipH = 22, gap = 5;
    const chips = v.tokens.map((t) => Math.max(26, 10 + charW * t.length));
    if (v.status === "unfinished") chips.push(30);
    let x = 4, y = 4;
    const at = [];
    chips.forEach((w) => {
      if (x + w > W - 4 && x > 4) { x = 4; y += rowH; }
      at.push([x, y]);
      x += w + gap;
    });
    const turnStart = new Map(v.turns.map((p, i) => [p, i + 1]));
    v.tokens.forEach((t, i) => {
      const [cx, cy] = at[i], w = chips[i];
      const bad = v.status === "broken" && i === v.position;
      const after = v.status === "broken" && i > v.position;
      if (turnStart.has(i)) body.push(text(cx, cy + 7, `turn ${turnStart.get(i)}`, { size: 10, fill: SOFT }));
      body.push(rect(f(cx), cy + 14, f(w), chipH, "none", { rx: 4, style: `stroke:${bad ? PALETTE.accent : roleColour(v.roles[i])}`,
        "stroke-width": bad ? 3 : 1.5, "stroke-dasharray": after ? "3 3" : null }));
      body.push(text(cx + w / 2, cy + 14 + chipH / 2, t, { anchor: "middle", bold: bad, fill: after ? SOFT : null }));
      body.push(text(cx + w / 2, cy + 14 + chipH + 9, bad ? `${i} ✗` : String(i), { anchor: "middle", size: 10,
        fill: bad ? null : SOFT, bold: bad }));
    });
    if (v.status === "unfinished") {
      const [cx, cy] = at[at.length - 1];
      body.push(rect(f(cx), cy + 14, 30, chipH, "none", { rx: 4, style: `stroke:${PALETTE.accent}`, "stroke-dasharray": "4 3" }));
      body.push(text(cx + 15, cy + 14 + chipH / 2, "?", { anchor: "middle", bold: true }));
      body.push(text(cx + 15, cy + 14 + chipH + 9, String(v.position), { anchor: "middle", size: 10, fill: SOFT }));
    }
    let ly = y + rowH + 6, lx = 4;
    for (const role of ROLES) {
      const w = 22 + charW * role.length;
      if (lx + w > W - 4) { lx = 4; ly += 18; }
      body.push(rect(lx, ly - 6, 12, 12, "none", { rx: 2, style: `stroke:${roleColour(role)}`, "stroke-width": 2 }));
      body.push(text(lx + 16, ly, role, { size: 11 }));
      lx += w + 8;
    }
    const verdict = v.status === "valid" ? "keeps every rule" : v.status === "unfinished" ? "keeps the rules so far, unfinished" : "breaks a rule";
    const alt = `A round of ${v.tokens.length} tokens, ${words(v.tokens)}: it ${verdict}. ${v.message}.` +
      (v.rule_text ? ` The rule: ${v.rule_text}` : "") + (v.status !== "valid" ? ` Allowed at position ${v.position}: ${v.allowed.join(", ") || "nothing (the round is over)"}.` : "");
    const chart = svg(W, ly + 14, alt, body);
    // The library's "valid (ends with a wrong call)" reads "Valid (ends with a wrong call)."; the others as they come.
    const lines = [h("p", { class: "course-verdict" }, v.status === "valid"
      ? [h("strong", {}, "Valid"), `${v.message.slice("valid".length)}: every token keeps the rules.`]
      : [h("strong", {}, v.status === "broken" ? "Broken. " : "Not finished. "), v.message])];
    if (v.rule_text) lines.push(h("p", { class: "course-note" }, `The rule: ${v.rule_text}`));
    if (v.status !== "valid") lines.push(h("p", { class: "course-note" }, `Allowed at position ${v.position}: ${v.allowed.join(", ") || "nothing: the round is over"}`));
    return figure([chart, lines], alt);
  }

  return {
  rules,
  };
}
