/* The page twins of the residual-path chapter: the path explorer's view (the last position's
 * path through a plane, stage by stage, with parts switched off) and its checks' computations.
 */
import { pyStrip } from "../../../explorers/js/python.js";
import { softmax } from "../../../explorers/js/readout.js";
import {
  allHeads,
  blockHeads,
  conceptPlane,
  embeddingRow,
  headName,
  stageLabel,
  switchedOff,
  tokensOf,
} from "../../../explorers/js/twins.js";

export const VIEWS = {
  path({ model }, v) {
    const ids = model.encode(v.prompt);
    const toward = pyStrip(v.toward), against = pyStrip(v.against);
    const d1 = embeddingRow(model, model.vocab.id(toward)), d2 = embeddingRow(model, model.vocab.id(against));
    const heads = switchedOff(model, v);
    const mlps = [];
    for (let l = 0; l < model.nLayers; l++) if (v[`MLP${l}`]) mlps.push(l);
    const last = ids.length - 1, towardId = model.vocab.id(toward);
    const trajectory = (off) => {
      const run = model.run(ids, off, true);
      const points = model.stageNames().map((name) => Array.from(run.stages[name][last]));
      return { coords: conceptPlane(points, d1, d2).coords, prob: softmax(run.logitsAt(last))[towardId] };
    };
    const intact = trajectory({});
    const ablated = trajectory({ heads, mlps });
    const off = heads.map(([l, h]) => headName(l, h)).concat(mlps.map((m) => `MLP ${m}`));
    return {
      tokens: tokensOf(model, ids), toward, against, stages: model.stageNames().map(stageLabel),
      intact: intact.coords, ablated: off.length ? ablated.coords : null, off, prob: ablated.prob, prob_intact: intact.prob,
    };
  },
};

export const COMPUTE = {
  mostNecessary(a, model) {
    const effects = (prompt) => {
      const ids = model.encode(prompt), t = model.vocab.id(a.target);
      const p = (off) => softmax(model.promptLogits(ids, off))[t];
      const out = allHeads(model).map(([l, h]) => [`L${l}H${h}`, p({ heads: [[l, h]] })]);
      for (let m = 0; m < model.nLayers; m++) out.push([`MLP ${m}`, p({ mlps: [m] })]);
      return out;
    };
    const least = (pairs) => pairs.reduce((b, x) => (x[1] < b[1] ? x : b))[0];
    const later = effects(a.prompt);
    return { expected: least(later), options: later.map(([n]) => n),
      hints: [["first", least(effects(a.first))], ["mlp1", "MLP 1"]] };
  },

  blockOff(a, model) {
    // P(target) averaged over the prompts (lib.chapters.part2.residual_path.checks.mean_target).
    const target = model.vocab.id(a.target), all = a.prompts.map((q) => model.encode(q));
    const p = (off, ids = all) => ids.reduce((s, x) => s + softmax(model.promptLogits(x, off))[target], 0) / ids.length;
    const heads = blockHeads(model, a.block), mlps = [a.block];
    return { expected: p({ heads, mlps }), hints: [["intact", p({})], ["heads", p({ heads })], ["mlp", p({ mlps })],
      ["one", p({ heads, mlps }, all.slice(0, 1))]] };
  },
};
