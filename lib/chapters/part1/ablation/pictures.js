/* The ablation chapter's pictures: the ablation explorer's page and heads, the patching grid, and
 * the real model's attention.
 * The renderer (lib/explorers/js/render.js) adds them to its pictures, handing over its drawing kit; in a
 * kernel this file is written into the renderer's single module (lib.explorers.web.kernel_renderer), so it
 * imports nothing but the constants.
 */
import { PALETTE } from "../../../explorers/js/constants.js";

export function pictures(k) {
  const {
    h, svg, text, rect, line, f1, fix, pct, words, top, room, figure, row, titleLines, barChart, blue, inkOn,
    heatmapBody, heatmapFit, shownName, SOFT, GRID
  } = k;
  return {
    ablation(v, o) {
      const names = v.off.join(", ") || "none", kind = v.kind || "zero", match = v.match || "role";
      const how = kind === "zero" ? `zero ablation; a mean or resample would match the reference by ${match}`
        : `${kind} ablation, reference matched by ${match}`;
      const alt = `Switched off (${how}): ${names}. After ${words(v.tokens)} the model now gives ${v.track} ` +
        `${fix(v.track_prob)} (intact: ${fix(v.track_prob_intact)}). Best next tokens: ${top(v.page)}.`;
      const page = barChart(v.page, alt, { highlight: v.track, width: o.width,
        title: `off (${kind}): ${names}  |  P(${v.track}) ${fix(v.track_prob)} (intact ${fix(v.track_prob_intact)})` });
      const layers = new Map();
      for (const name of v.heads) layers.set(name.slice(0, name.indexOf("H")), []);
      // A layer's heads side by side, as many to a line as the row's cells allow (explorers.css:
      // cells of at least 120 px, 8 px apart); each heatmap drawn for the room of its cell.
      const perLine = Math.max(1, Math.min(v.heads.length / layers.size, Math.floor((room(o) + 8) / 128)));
      const fit = heatmapFit(v.tokens, (room(o) - 8 * (perLine - 1)) / perLine - 8, 22);
      v.heads.forEach((name, i) => {
        const layer = name.slice(0, name.indexOf("H"));
        const off = v.off.includes(name);
        const headAlt = `Attention pattern of head ${name} on ${words(v.tokens)}${off ? ", switched off." : "."}`;
        const [body, w, ht] = heatmapBody(0, 0, v.patterns[i], v.tokens, fit, { title: name + (off ? " (off)" : "") });
        layers.get(layer).push(svg(Math.max(w, 80) + 8, ht + 8, headAlt, [h("g", { transform: "translate(4,4)", opacity: off && "0.35" }, body)]));
      });
      return figure([page, [...layers.values()].map((cells) => row(cells, 120))], alt);
    },

    patching(v, o) {
      const T = v.clean.length, n = v.rows.length;
      // The page draws the grid as its rows are computed: a row not done yet is null, drawn blank.
      const done = v.rows.map((_, i) => i).filter((i) => v.grid[i] && !v.grid[i].includes(null));
      const best = done.map((i) => [v.rows[i], v.grid[i].reduce((m, x, p) => (x > v.grid[i][m] ? p : m), 0)])
        .sort((x, y) => v.grid[v.rows.indexOf(y[0])][y[1]] - v.grid[v.rows.indexOf(x[0])][x[1]]).slice(0, 3)
        .map(([name, p]) => `${name} at ${p} (${v.clean[p]}) ${fix(v.grid[v.rows.indexOf(name)][p], 2)}`).join(", ");
      const legality = v.legal === true ? " (a legal round of the game)" : v.legal === false ? " (NOT a legal round of the game: the model never met such a prompt)" : "";
      const alt = `Activation patching: clean ${words(v.clean)}, corrupted ${words(v.corrupted)}${legality}. logit(${v.target}) - ` +
        `logit(${v.against}) is ${fix(v.clean_diff, 2)} clean and ${fix(v.corrupted_diff, 2)} corrupted. ` +
        (done.length < n ? `Computing the grid: ${done.length} of ${n} rows done. ` : "") +
        `The patches that bring most of it back${done.length < n ? " so far" : ""}: ${best || "none yet"}. ${v.cell} at ` +
        `position ${v.position} brings back ${fix(v.recovered, 2)}; the patched run's best next tokens: ${top(v.page)}.`;
      // A cell's number where the cell holds it (five characters of 11 px text, "-0.05", are 29 px wide).
      const labelW = 56, cell = Math.max(8, Math.min(44, Math.floor((room(o) - labelW - 12) / T))), named = cell >= 32;
      // Rows and columns named every one where there is room (a row's name needs 14 px of height; a column's,
      // at 45 degrees, 19 px between neighbours), else every second, third...: fewer where cells are small, never none.
      const everyRow = Math.ceil(14 / cell), everyCol = Math.ceil(19 / cell);
      const body = [], gridRows = [];
      // One cell reachable by Tab (the one picked, else the first computed), the others by the arrow keys from
      // it (render.js: a role="grid" moves its roving tabindex; Enter or Space picks the focused cell).
      const pickedRow = v.rows.indexOf(v.cell);
      const computed = (i, p) => i >= 0 && Boolean(v.grid[i]) && v.grid[i][p] !== null && v.grid[i][p] !== undefined;
      const focusable = computed(pickedRow, v.position) ? [pickedRow, v.position] : [done.length ? done[0] : -1, 0];
      // The title in as many lines as the grid's width needs (a phone), the grid under it.
      const titled = titleLines(`fraction of logit(${v.target}) - logit(${v.against}) each patch brings back`,
        labelW + T * cell + 4, 12);
      // The corrupted prompt the grid runs (the swap applied), and whether the game could produce it.
      const runs = titleLines(`corrupted run: ${v.corrupted.join(" ")}${legality}`, labelW + T * cell + 4, 11);
      const g0 = 4 + 16 * titled.length + 14 * runs.length;
      v.grid.forEach((row, i) => {
        if (shownName(i, n, everyRow)) body.push(text(labelW - 6, g0 + i * cell + cell / 2, v.rows[i], { anchor: "end", size: 11 }));
        if (!row) {
          body.push(rect(labelW, g0 + i * cell, T * cell - 1, cell - 1, "none", { style: `stroke:${GRID};stroke-dasharray:3 3` }));
          return;
        }
        const cells = [];
        row.forEach((x, p) => {
          if (x === null) return;
          const picked = v.rows[i] === v.cell && p === v.position;
          // Pressing a cell picks it (page.js on the website, the kernel in JupyterLab: data-choose), with the
          // mouse or, focused, with Enter or Space. The cell and its number in one group: a press on either picks it.
          // Its name starts with the number it shows (a <title> would count as shown words too: none here).
          cells.push(h("g", { "data-choose": `cell=${v.rows[i]}&position=${p}`, "data-row": i, "data-col": p,
            role: "gridcell", tabindex: i === focusable[0] && p === focusable[1] ? 0 : -1, "aria-selected": String(picked),
            "aria-label": `${fix(x, 2)}: ${v.rows[i]} at position ${p} (${v.clean[p]})${picked ? ", shown below" : ""}; ` +
              "press Enter to show its results page", class: "course-cell", style: "cursor:pointer" },
            rect(labelW + p * cell, g0 + i * cell, cell - 1, cell - 1, x < 0 ? "#f4c7cc" : blue(x),
              picked ? { stroke: PALETTE.accent, "stroke-width": 2 } : {}),
            named ? text(labelW + p * cell + cell / 2, g0 + i * cell + cell / 2, fix(x, 2),
              { anchor: "middle", size: 11, fill: inkOn(x) }) : null));
        });
        gridRows.push(h("g", { role: "row", "aria-label": v.rows[i] }, cells));
      });
      body.push(h("g", { role: "grid", "aria-label": `patching grid: ${n} rows (heads, MLPs and stages) by ${T} positions; ` +
        "arrow keys move between cells, Enter shows a cell's results page", "aria-rowcount": n, "aria-colcount": T }, gridRows));
      titled.forEach((t, k) => body.push(text(4, 12 + 16 * k, t, { size: 12 })));
      runs.forEach((t, k) => body.push(text(4, 12 + 16 * titled.length + 14 * k, t, { size: 11, fill: v.legal === false ? PALETTE.accent : undefined })));
      body.push(h("g", { transform: `translate(0,${g0 + 2 + n * cell})` }, v.clean.map((t, p) => shownName(p, T, everyCol) &&
        text(labelW + p * cell + cell / 2, 6, `${t}/${v.corrupted[p]}`, { anchor: "end", size: 11, rotate: -45 }))));
      // A group, not an image: its cells are a grid a reader moves through (an image's parts are hidden).
      const grid = svg(labelW + T * cell + 12, g0 + 10 + n * cell + 90, alt, body, { role: "group" });
      const page = barChart(v.page, alt, { highlight: v.target, width: o.width,
        title: `${v.cell} at position ${v.position} patched: recovered ${fix(v.recovered, 2)}` });
      return figure([grid, page], alt);
    },

    real_attention(v, o) {
      const T = v.tokens.length, q = v.query, L = v.rows.length, H = v.rows[0].length, W = Math.min(room(o), 640);
      const who = `“${v.tokens[q]}” (position ${q})`;
      // Each head's strongest word for the query: not [CLS], [SEP], punctuation or the query itself.
      const strongest = (row) => row.reduce((b, p, j) => (v.special[j] || j === q || (b >= 0 && row[b] >= p) ? b : j), -1);
      const parked = (row) => row.reduce((t, p, j) => t + (v.special[j] ? p : 0), 0);
      const row = v.rows[v.layer][v.head], best = strongest(row);
      const bestWord = best >= 0 ? `${v.tokens[best]} ${fix(row[best], 2)}` : "no word";
      const perLayer = v.rows.map((hs, l) => `layer ${l}: ${hs.map((r) => { const b = strongest(r); return b >= 0 ? v.tokens[b] : "-"; }).join(", ")}`);
      const alt = `MiniLM layer ${v.layer}, head ${v.head} on ${words(v.tokens)}: ${who} gives ${pct(parked(row))} of its ` +
        `attention to [CLS], [SEP] and punctuation; among the words it looks hardest at ${bestWord}. Each head's strongest ` +
        `word for ${v.tokens[q]}, ${perLayer.join("; ")}.`;
      // 1. Every head at a glance: its strongest word for the query, shaded by the weight on it.
      const labelW = 26, cw = Math.max(14, Math.min(52, Math.floor((W - labelW - 8) / H))), ch = 22, top0 = 46;
      const chars = Math.floor((cw - 2) / 6.8);     // characters of 11 px text a cell holds
      const grid = [text(2, 10, `each head's strongest word for ${who}`, { size: 12 }),
        text(2, 24, "(not [CLS], [SEP], punctuation or itself); shade: its weight", { size: 10, fill: SOFT })];
      for (let h0 = 0; h0 < H; h0++) grid.push(text(labelW + h0 * cw + cw / 2, top0 - 7, cw >= 24 ? `H${h0}` : String(h0), { anchor: "middle", size: 9 }));
      v.rows.forEach((hs, l) => {
        grid.push(text(labelW - 4, top0 + l * ch + ch / 2, `L${l}`, { anchor: "end", size: 10 }));
        hs.forEach((r, h0) => {
          const b = strongest(r), p = b >= 0 ? r[b] : 0, x = labelW + h0 * cw, y = top0 + l * ch;
          const picked = l === v.layer && h0 === v.head;
          grid.push(h("rect", { x, y, width: cw - 1, height: ch - 1, fill: blue(p),
            style: picked ? `stroke:${PALETTE.accent};stroke-width:2` : null },
          h("title", {}, `L${l}H${h0}: ${b >= 0 ? `${v.tokens[b]} ${fix(p, 2)}` : "no word"}; [CLS], [SEP] and punctuation ${fix(parked(r), 2)}`)));
          if (b >= 0 && chars >= 2) grid.push(text(x + cw / 2, y + ch / 2, v.tokens[b].slice(0, chars), { anchor: "middle", size: 9, fill: inkOn(p) }));
        });
      });
      const overview = svg(labelW + H * cw + 8, top0 + L * ch + 6, alt, grid);
      // 2. The chosen head: the query's attention on every key.
      const rowH = 17, keyW = 20 + 7 * Math.max(...v.tokens.map((t) => t.length)), plotW = Math.max(80, W - keyW - 50);
      const bars = [text(2, 10, `layer ${v.layer}, head ${v.head}: where ${who} looks`, { size: 12 })];
      v.tokens.forEach((t, j) => {
        const y = 20 + j * rowH, colour = j === best ? PALETTE.accent : v.special[j] ? PALETTE.muted : PALETTE.main;
        bars.push(text(keyW - 6, y + rowH / 2, `${j} ${t}`, { anchor: "end", size: 11, bold: j === q }));
        bars.push(rect(keyW, y + 3, f1(plotW * row[j]), rowH - 6, colour));
        bars.push(text(keyW + plotW * row[j] + 4, y + rowH / 2, fix(row[j], 2), { size: 10 }));
      });
      bars.push(text(keyW, 28 + T * rowH, "grey: [CLS], [SEP], punctuation; red: the strongest word", { size: 10, fill: SOFT }));
      const barSvg = svg(keyW + plotW + 40, 38 + T * rowH, alt, bars);
      // 3. The chosen head's whole pattern, the query's row outlined.
      const fit = heatmapFit(v.tokens, W - 12, 22);
      const title = `L${v.layer}H${v.head}: every query (rows), every key`;
      const [body, w, ht] = heatmapBody(4, 4, v.pattern, v.tokens, fit, { title, masked: false, mark: q });
      const heat = svg(Math.min(Math.max(w, 7.5 * title.length), W - 4) + 12, ht + 12, alt, body);
      return figure([overview, barSvg, heat], alt);
    },
  };
}
