/* The page twins of the lever chapter: the logit lens's view and its checks' computations.
 */
import { pyStrip } from "../../../explorers/js/python.js";
import { greedy, order, softmax } from "../../../explorers/js/readout.js";
import { dot, embeddingRow, norm, parsePosition, stageLabel, tokensOf } from "../../../explorers/js/twins.js";

export const VIEWS = {
  lens({ model }, v, a) {
    const ids = model.encode(v.prompt);
    const position = parsePosition(v.position, ids.length);
    // The model reads causally: what sits at `position` depends on the tokens up to it alone.
    const run = model.run(ids.slice(0, position + 1), {}, true);
    const stages = model.stageNames().map((name) => softmax(model.readOut(run.stages[name][position])));
    const track = pyStrip(v.track);
    const tokens = model.vocab.tokens;
    const trackId = track === "" ? greedy(stages[stages.length - 1]) : model.vocab.id(track);
    return {
      tokens: tokensOf(model, ids), position, stages: model.stageNames().map(stageLabel),
      top: stages.map((p) => order(p).slice(0, a.k).map((i) => [tokens[i], p[i]])),
      track: tokens[trackId], track_probs: stages.map((p) => p[trackId]),
      track_ranks: stages.map((p) => order(p).indexOf(trackId) + 1),
    };
  },
};

export const COMPUTE = {
  leadsAfterStage(a, model) {
    const t = model.vocab.id(a.word), names = model.stageNames();
    const counts = names.map(() => 0);
    for (const prompt of a.prompts) {
      const ids = model.encode(prompt), run = model.run(ids, {}, true);
      names.forEach((name, i) => { if (greedy(model.readOut(run.stages[name][ids.length - 1])) === t) counts[i]++; });
    }
    const at = names.indexOf(a.stage);
    return { expected: counts[at], hints: [["before", counts[at - 1]], ["final", counts[names.length - 1]]] };
  },

  topWithoutMlp(a, model) {
    const ids = model.encode(a.prompt), tokens = model.vocab.tokens;
    const intact = tokens[greedy(model.promptLogits(ids))];
    const expected = tokens[greedy(model.promptLogits(ids, { mlps: [a.mlp] }))];
    return { expected, options: tokens,
      fields: { others: expected === intact ? "it keeps its place" : `${intact} loses its place` } };
  },

  pushShare(a, model) {
    // lib.chapters.part3.lever.checks: lib.analysis.trajectory.residual_trajectory's push of a block (its write at
    // the last position along the first axis, the toward word's unit row) over where the path ends.
    const along = (prompt, toward) => {
      const ids = model.encode(prompt), run = model.run(ids, {}, true), names = model.stageNames();
      const row = embeddingRow(model, model.vocab.id(toward)), n = norm(row), e1 = row.map((x) => x / n);
      const x = names.map((name) => dot(Array.from(run.stages[name][ids.length - 1]), e1));
      const at = names.indexOf(a.component);
      return { push: x[at] - x[at - 1], end: x[x.length - 1] };
    };
    const mine = along(a.prompt, a.toward), chapter = along(a.chapter_prompt, a.chapter_toward);
    const expected = mine.push / mine.end;
    return { expected, hints: [["chapter", chapter.push / chapter.end], ["percent", expected * 100], ["push", mine.push]] };
  },
};
