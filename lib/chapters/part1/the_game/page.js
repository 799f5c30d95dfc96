/* The page twins of the_game chapter: its rules checker's view (it reads a round with
 * game.js, the twin of calling_game.read_round) and its checks' computations.
 */
import { GAME, readRound } from "../../../explorers/js/game.js";
import { pySplit } from "../../../explorers/js/python.js";
import { CourseError } from "../../../explorers/js/readout.js";
import { tokensOf } from "../../../explorers/js/twins.js";

export const VIEWS = {
  rules({ model }, v) {
    const tokens = tokensOf(model, model.encode(v.prompt));
    const verdict = readRound(tokens);
    return { tokens, roles: tokens.map((t) => GAME.roles[t]), status: verdict.status, position: verdict.position,
      rule: verdict.rule, rule_text: verdict.rule ? GAME.rules[verdict.rule] : "", message: verdict.message,
      allowed: verdict.allowed, turns: verdict.turns };
  },
};

export const COMPUTE = {
  async restOfRound(a) {
    // lib.chapters.part1.the_game.checks.rest_of_round: the rules' one way on from the prefix (round_ending), then
    // the check's diagnosis, in its order.
    const prefix = pySplit(a.prefix), ending = [];
    for (;;) {
      const v = readRound(prefix.concat(ending));
      if (v.status === "valid") break;
      if (v.status !== "unfinished" || v.allowed.length !== 1) throw new CourseError(`${a.prefix} does not go on one way only`);
      ending.push(v.allowed[0]);
    }
    return { decide(answer) {
      const got = pySplit(answer.value);
      if (got.length === 0) return { ok: false, key: "not_tokens" };
      if (got.length === ending.length && got.every((t, i) => t === ending[i])) return { ok: true, key: "right", fields: { answer: answer.value } };
      if (got[0] === "<SEP>") return { ok: false, key: "sep_first" };
      if (got[0] !== ending[0]) return { ok: false, key: "first_word", fields: { first: got[0] } };
      if (got.slice(1).includes("perde") && got.at(got.indexOf("perde") - 1) !== a.erred) return { ok: false, key: "loser" };
      if (got[1] === "<SEP>" && got[2] === a.called_back) return { ok: false, key: "goes_on" };
      return { ok: false, key: "other", fields: { reading: readRound(prefix.concat(got)).message } };
    } };
  },
};
