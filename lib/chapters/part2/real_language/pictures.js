/* The real-language chapter's picture: SmolLM2's rows on the reader's words, each word's nearest tokens over the
 * whole vocabulary as a table, and the cosines between the words as a grid. The renderer
 * (lib/explorers/js/render.js) adds it to its pictures, handing over its drawing kit; in a kernel this file is
 * written into the renderer's single module, so it imports nothing.
 */

export function pictures(k) {
  const { h, svg, text, rect, fix, room, figure, blue, inkOn } = k;
  const seen = (t) => `"${String(t).replace(/\n/g, "↵")}"`;

  return {
    smol_rows(v, o) {
      const one = v.words.filter((w) => w.one);
      const cut = v.words.filter((w) => !w.one);
      const table = h("table", { class: "course-table course-rows" },
        h("caption", {}, `Each word's ${v.k} nearest tokens in SmolLM2's vocabulary, by cosine`),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "word"), h("th", { scope: "col" }, "nearest tokens"))),
        h("tbody", {}, v.words.map((w) => h("tr", {}, h("th", { scope: "row" }, seen(` ${w.word}`)),
          h("td", {}, w.one ? w.neighbours.map(([t, c]) => `${seen(t)} ${fix(c, 2)}`).join(", ")
            : `not one token: ${w.pieces.map(seen).join(" + ")}`)))));
      const n = v.tokens.length;
      const parts = [table];
      let grid = "";
      if (n >= 2) {
        const labelW = 78, cell = Math.max(20, Math.min(44, Math.floor((Math.min(room(o), 520) - labelW - 8) / n)));
        const body = [text(2, 12, "cosine between the words' rows", { size: 12 })];
        const top0 = 24;
        v.tokens.forEach((t, i) => {
          body.push(text(labelW - 4, top0 + i * cell + cell / 2, seen(t), { anchor: "end", size: 10 }));
          v.cos[i].forEach((c, j) => {
            body.push(rect(labelW + j * cell, top0 + i * cell, cell - 1, cell - 1, blue(Math.max(0, c))));
            body.push(text(labelW + j * cell + cell / 2, top0 + i * cell + cell / 2, fix(c, 2), { anchor: "middle", size: 9, fill: inkOn(Math.max(0, c)) }));
          });
        });
        v.tokens.forEach((t, j) => body.push(text(labelW + j * cell + cell / 2, top0 + n * cell + 6, seen(t), { anchor: "end", size: 10, rotate: -45 })));
        parts.push(svg(labelW + n * cell + 8, top0 + n * cell + 70, "cosines between the words", body));
        grid = ` Cosines between the words: ${v.tokens.flatMap((a, i) => v.tokens.slice(i + 1).map((b, jj) => `${seen(a)} and ${seen(b)} ${fix(v.cos[i][i + 1 + jj], 2)}`)).join(", ")}.`;
      }
      const alt = `SmolLM2's rows for ${v.words.length} words. ` + one.map((w) => `${seen(` ${w.word}`)}: ` +
        w.neighbours.map(([t, c]) => `${seen(t)} ${fix(c, 2)}`).join(", ")).join("; ") + "." +
        (cut.length ? ` Not one token: ${cut.map((w) => `${seen(` ${w.word}`)} (${w.pieces.map(seen).join(" + ")})`).join(", ")}.` : "") + grid;
      return figure(parts, alt);
    },
  };
}
