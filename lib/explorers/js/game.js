/* The calling game's rules checker in the page: the twin of lib.content.corpora.calling_game.read_round.
 *
 * The same walk through a round, token by token, the same verdict (valid, unfinished or broken; where;
 * which rule; the tokens the rules allow there) and the same sentences, which come from the library
 * (lib/messages.py, through constants.js), as do the players, the absurd words, the epithets and the
 * rules themselves (calling_game.page_constants). tests/content/corpora/test_game_checker.py holds the two equal on
 * thousands of rounds, valid, broken and random.
 */
import { GAME } from "./constants.js";
import { pyRepr } from "./python.js";
import { say } from "./readout.js";

const BOS = "<BOS>", EOS = "<EOS>", SEP = "<SEP>";
const ORDER = new Map(GAME.tokens.map((t, i) => [t, i]));

/** The word spoken after `callee` when `caller` calls him, or null (calling_game.epithet). */
export function epithet(caller, callee) {
  const key = `${caller}|${callee}`;
  return key in GAME.epithets ? GAME.epithets[key] : null;
}

function legalCallees(caller, previous) {
  return GAME.players.filter((p) => p !== caller && p !== previous);
}

const inOrder = (tokens) => [...new Set(tokens)].filter((t) => ORDER.has(t)).sort((a, b) => ORDER.get(a) - ORDER.get(b));
const shown = (tokens) => (tokens.length ? tokens.join(", ") : "nothing");

/** {status, position, rule, message, allowed, turns}, as read_round's Verdict. */
export function readRound(tokens) {
  const n = tokens.length, turns = [];
  const stop = (i, rule, allowed, message) => {
    allowed = inOrder(allowed);
    if (i >= n) return { status: "unfinished", position: n, rule, message: say("game_unfinished", { position: String(n), allowed: shown(allowed) }), allowed, turns: turns.slice() };
    return { status: "broken", position: i, rule, message, allowed, turns: turns.slice() };
  };
  const want = (i, expected, rule, message, fields = {}) => {
    if (i < n && tokens[i] === expected) return null;
    const got = i < n ? pyRepr(tokens[i]) : "";
    return stop(i, rule, [expected], say(message, { position: String(i), got, ...fields }));
  };
  const valid = (message) => ({ status: "valid", position: null, rule: null, message: say(message), allowed: [], turns: turns.slice() });

  if (n === 0 || tokens[0] !== BOS) return stop(0, "start", [BOS], say("game_start", { got: n ? pyRepr(tokens[0]) : "" }));
  let i = 1, caller = "Pietro", previous = null, legal = 0;
  for (;;) {
    turns.push(i);
    if (i < n && tokens[i] !== caller) {
      return stop(i, "opens", [caller], say("game_caller", { position: String(i), got: pyRepr(tokens[i]), caller: pyRepr(caller) }));
    }
    if (i >= n) return stop(i, "opens", [caller], "");
    let broken = want(i + 1, "chiama", "turn", "game_chiama");
    if (broken) return broken;
    i += 2;
    const legalList = legalCallees(caller, previous);
    const wrongList = legal === 0 ? [] : [caller, previous, ...GAME.absurd];
    const allowed = legalList.concat(wrongList);
    if (i >= n) return stop(i, "callee", allowed, "");
    const callee = tokens[i];
    if (!allowed.includes(callee)) {
      if (legal === 0 && (callee === caller || GAME.absurd.includes(callee))) {
        return stop(i, "wrong", allowed, say("game_opening", { position: String(i), got: pyRepr(callee) }));
      }
      return stop(i, "callee", allowed, say("game_callee", { position: String(i), got: pyRepr(callee) }));
    }
    i += 1;
    const e = epithet(caller, callee);
    if (e !== null) {
      broken = want(i, e, "epithet", "game_epithet", { caller, callee, epithet: pyRepr(e) });
      if (broken) return broken;
      i += 1;
    }
    if (!legalList.includes(callee)) {
      const ending = [SEP, caller, "perde", EOS];
      for (let k = 0; k < ending.length; k++) {
        broken = want(i + k, ending[k], "wrong", "game_loser", { caller });
        if (broken) return broken;
      }
      i += 4;
      if (i < n) return stop(i, "wrong", [], say("game_over", { position: String(i), got: pyRepr(tokens[i]) }));
      return valid("game_valid_wrong");
    }
    legal += 1;
    if (legal === GAME.legal_calls) {
      broken = want(i, EOS, "end", "game_full", { calls: String(GAME.legal_calls) });
      if (broken) return broken;
      if (i + 1 < n) return stop(i + 1, "end", [], say("game_over", { position: String(i + 1), got: pyRepr(tokens[i + 1]) }));
      return valid("game_valid");
    }
    broken = want(i, SEP, "turn", "game_separator");
    if (broken) return broken;
    i += 1;
    [caller, previous] = [callee, caller];
  }
}

/** Why `tokens` cannot begin a round, or null if they can: the checks of
 *  lib.content.corpora.calling_game.next_token_distribution, in its order, with its sentences (a round
 *  played to its last legal call is a prefix whatever follows, as there). */
export function whyNotAPrefix(tokens) {
  const n = tokens.length;
  if (n === 0 || tokens[0] !== BOS) return say("prefix_start");
  const token = (position, t) => say("prefix_token", { position: String(position), token: pyRepr(t) });
  let caller = "Pietro", previous = null, legal = 0, i = 1;
  for (;;) {
    if (i === n) return null;
    if (tokens[i] !== caller) return token(i, caller);
    if (i + 1 === n) return null;
    if (tokens[i + 1] !== "chiama") return token(i + 1, "chiama");
    if (i + 2 === n) return null;
    const callee = tokens[i + 2];
    const wrong = !legalCallees(caller, previous).includes(callee);
    if (wrong && (legal === 0 || !(callee === caller || callee === previous || GAME.absurd.includes(callee)))) {
      return say(legal === 0 ? "prefix_opening" : "prefix_callee", { position: String(i + 2), got: pyRepr(callee) });
    }
    i += 3;
    const e = epithet(caller, callee);
    if (e !== null) {
      if (i === n) return null;
      if (tokens[i] !== e) return token(i, e);
      i += 1;
    }
    if (wrong) {
      const ending = [SEP, caller, "perde", EOS], rest = tokens.slice(i);
      const same = rest.length <= ending.length && rest.every((t, k) => t === ending[k]);
      return same ? null : say("prefix_ending", { ending: ending.join(" ") });
    }
    legal += 1;
    if (i === n || legal === GAME.legal_calls) return null;
    if (tokens[i] !== SEP) return token(i, SEP);
    i += 1;
    [caller, previous] = [callee, caller];
  }
}

export { GAME };

/** The role each token plays in its turn, read from its neighbours (calling_game.token_roles): mean and
 *  resample ablation match a prompt's positions to the reference rounds' by these roles. */
const classOf = (t) => (Object.hasOwn(GAME.roles, t) ? GAME.roles[t] : null);

export function tokenRoles(tokens) {
  const out = [];
  let opening = true;
  tokens.forEach((t, i) => {
    const before = i > 0 ? tokens[i - 1] : null, after = i + 1 < tokens.length ? tokens[i + 1] : null;
    let role;
    if (t === BOS || t === EOS || t === "<PAD>") role = t;
    else if (t === SEP) { opening = false; out.push(SEP); return; }
    else if (t === "perde") role = "perde";
    else if (after === "perde") role = "loser";
    else if (t === "chiama") role = "chiama";
    else if (before === "chiama") role = "callee";
    else if (classOf(t) === "epithet" && i > 1 && tokens[i - 2] === "chiama") role = "epithet";
    else if (after === "chiama" || before === BOS || before === SEP) role = "caller";
    else role = `stray ${classOf(t) === null ? "word" : classOf(t)}`;
    out.push(opening && GAME.turn_roles.includes(role) ? `opening ${role}` : role);
  });
  return out;
}
