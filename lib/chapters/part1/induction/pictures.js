/* The induction chapter's picture: a training run at one checkpoint. The loss curves over training (first
 * and second copy apart) with the checkpoint marked, every head's pattern on the sequence, and the heads'
 * three scores. The renderer (lib/explorers/js/render.js) adds it to its pictures, handing over its
 * drawing kit; in a kernel this file is written into the renderer's single module, so it imports nothing.
 */

export function pictures(k) {
  const { h, svg, text, line, fix, words, room, figure, heatmapRow, INK, SOFT, GRID } = k;

  function curves(v, o) {
    const W = Math.min(room(o), 640), H = 190, left = 44, right = 12, top = 14, bottom = 34;
    const steps = v.curve.steps, last = steps[steps.length - 1];
    const most = Math.max(...v.curve.first, ...v.curve.second);
    const sx = (s) => left + ((W - left - right) * s) / last;
    const sy = (y) => top + ((H - top - bottom) * (most - y)) / most;
    const path = (ys, colour, dash) => h("polyline", { points: steps.map((s, i) => `${sx(s).toFixed(1)},${sy(ys[i]).toFixed(1)}`).join(" "),
      style: `fill:none;stroke:${colour};stroke-width:2${dash ? ";stroke-dasharray:5 3" : ""}` });
    const body = [line(left, sy(0), W - right, sy(0), GRID), line(left, top, left, sy(0), GRID)];
    for (const y of [0, 1, 2, 3].filter((t) => t <= most)) body.push(text(left - 6, sy(y), String(y), { anchor: "end", size: 10 }));
    body.push(text(left - 30, top + 4, "nats", { size: 10 }));
    for (const s of [0, Math.round(last / 2), last]) body.push(text(sx(s), H - bottom + 14, String(s), { anchor: "middle", size: 10 }));
    body.push(text((left + W - right) / 2, H - 6, "training step", { anchor: "middle", size: 10 }));
    body.push(path(v.curve.first, SOFT, true), path(v.curve.second, INK, false));
    body.push(h("line", { x1: sx(v.step).toFixed(1), y1: top, x2: sx(v.step).toFixed(1), y2: sy(0).toFixed(1),
      style: `stroke:${INK};stroke-width:1.5;stroke-dasharray:2 2` }));
    body.push(text(W - right, top + 2, "— second copy", { anchor: "end", size: 11 }));
    body.push(text(W - right, top + 16, "- - first copy", { anchor: "end", size: 11, fill: SOFT }));
    const at = steps.indexOf(v.step);
    const alt = `Loss on the trainer's held-out sequences over ${last} steps: the first copy from ${fix(v.curve.first[0], 2)} ` +
      `to ${fix(v.curve.first[steps.length - 1], 2)} nats, the second from ${fix(v.curve.second[0], 2)} to ` +
      `${fix(v.curve.second[steps.length - 1], 2)}` + (at >= 0 ? `; at step ${v.step}, first ${fix(v.curve.first[at], 2)}, ` +
      `second ${fix(v.curve.second[at], 2)}.` : `; the checkpoint at step ${v.step} is marked.`);
    return [svg(W, H, alt, body), alt];
  }

  return {
    training(v, o) {
      const [chart, curveAlt] = curves(v, o);
      const names = v.patterns.flatMap((layer, l) => layer.map((_, hd) => `L${l}H${hd}`));
      const flat = v.patterns.flat();
      const scores = names.map((n, i) => {
        const [l, hd] = [Math.floor(i / v.patterns[0].length), i % v.patterns[0].length];
        return { n, prev: v.previous[l][hd], prefix: v.prefix[l][hd], copy: v.copying[l][hd] };
      });
      const maps = names.map((n, i) => [`${n} prev ${fix(scores[i].prev, 2)} · ind ${fix(scores[i].prefix, 2)}`, flat[i],
        `Attention pattern of ${n} at step ${v.step} on ${words(v.tokens)}: previous-token score ${fix(scores[i].prev, 2)}, ` +
        `prefix-matching score ${fix(scores[i].prefix, 2)}, copying score ${fix(scores[i].copy, 2)}.`]);
      const table = h("table", { class: "course-table" },
        h("tr", {}, ["head", "previous-token", "prefix-matching", "copying"].map((c) => h("th", {}, c))),
        scores.map((s) => h("tr", {}, [s.n, fix(s.prev, 2), fix(s.prefix, 2), fix(s.copy, 2)].map((c) => h("td", {}, c)))));
      const lossLine = v.loss.second === null
        ? "The sequence is not one segment typed twice, so it has no first and second copy to compare."
        : `On this sequence: first copy ${fix(v.loss.first, 2)} nats, second copy ${fix(v.loss.second, 2)} nats.`;
      const head = h("p", { class: "course-pick" }, `Step ${v.step}. `, lossLine);
      const alt = `${curveAlt} ${lossLine} Scores at step ${v.step} (previous-token, prefix-matching, copying): ` +
        scores.map((s) => `${s.n} ${fix(s.prev, 2)}, ${fix(s.prefix, 2)}, ${fix(s.copy, 2)}`).join("; ") + ".";
      return figure([chart, heatmapRow(maps, v.tokens, o), table], alt, head);
    },
  };
}
