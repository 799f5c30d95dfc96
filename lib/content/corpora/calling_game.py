"""The calling game: the course's running example, as a seeded generator and a grammar checker.

A round is a chain of calls: Pietro opens, each callee becomes the next caller, and an epithet
follows the callee when the rules fix one. Grammar (see shared/specs/calling-game.md):

    GAME := <BOS> TURN (<SEP> TURN)* END
    TURN := CALLER chiama CALLEE [EPITHET]
    END  := <EOS>                       after 8 legal calls
          | <SEP> CALLER perde <EOS>    right after a wrong call

Choices the spec leaves to the course, fixed here:
- a wrong call happens with probability `error_rate` (0.15) on every turn from the second on, and
  is one of three kinds with equal chance: calling oneself, calling back the player who just
  called, or calling one of the eight absurd words (drawn uniformly);
- the epithet depends only on who is called and who calls: Pietro is `Cefa` to Paolo and `capo`
  to anyone else (himself included), Paolo is `Tarso` to Pietro and `vice` to anyone else
  (himself included); so a wrong call to Pietro or Paolo still carries its epithet;
- after a wrong call the loser is the caller who erred.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from lib.errors import CourseError, require
from lib.messages import say
from lib.model.vocab import BOS, EOS, PAD, SEP, SPECIALS

PLAYERS = ("Pietro", "Paolo", "1", "2", "3", "4", "5", "6", "7", "8")
EPITHETS = ("Tarso", "Cefa", "capo", "vice")
VERBS = ("chiama", "perde")
ABSURD = ("banana", "ombrello", "giraffa", "tostapane", "nuvola", "pantofola", "cavolfiore", "lampadina")
TOKENS = SPECIALS + PLAYERS + EPITHETS + VERBS + ABSURD
ROLES = {
    **{t: "special" for t in SPECIALS},
    **{t: "player" for t in PLAYERS},
    **{t: "epithet" for t in EPITHETS},
    **{t: "verb" for t in VERBS},
    **{t: "absurd" for t in ABSURD},
}
LEGAL_CALLS = 8
ERROR_RATE = 0.15
ERROR_KINDS = ("self", "callback", "absurd")
# The longest round: seven legal turns, one wrong turn (4 tokens each), their seven separators,
# <BOS>, and "<SEP> X perde <EOS>" = 32 + 7 + 1 + 4 = 44 tokens.
MAX_ROUND_TOKENS = 44


def epithet(caller: str, callee: str) -> str | None:
    """The word spoken after `callee`, or None (numbers and absurd words get none)."""
    if callee == "Pietro":
        return "Cefa" if caller == "Paolo" else "capo"
    if callee == "Paolo":
        return "Tarso" if caller == "Pietro" else "vice"
    return None


def legal_callees(caller: str, previous_caller: str | None) -> list[str]:
    """Every player except the caller and the one who just called him (no call-back)."""
    return [p for p in PLAYERS if p != caller and p != previous_caller]


def _turn(caller: str, callee: str) -> list[str]:
    words = [caller, "chiama", callee]
    e = epithet(caller, callee)
    return words + [e] if e else words


@dataclass(frozen=True)
class GameOptions:
    error_rate: float = ERROR_RATE
    legal_calls: int = LEGAL_CALLS

    def __post_init__(self):
        require(0 <= self.error_rate < 1, f"error_rate must lie in [0, 1), got {self.error_rate}")
        require(1 <= self.legal_calls <= LEGAL_CALLS,
                f"legal_calls must lie in 1 to {LEGAL_CALLS}, got {self.legal_calls}")


def sample_round(rng: random.Random, options: GameOptions = GameOptions()) -> list[str]:
    """One round of the game as a list of tokens, from <BOS> to <EOS>."""
    tokens = [BOS]
    caller, previous = "Pietro", None
    for turn in range(options.legal_calls):
        if turn > 0:
            tokens.append(SEP)
        if turn > 0 and rng.random() < options.error_rate:
            kind = rng.choice(ERROR_KINDS)
            wrong = {"self": caller, "callback": previous}.get(kind) or rng.choice(ABSURD)
            tokens += _turn(caller, wrong) + [SEP, caller, "perde", EOS]
            return tokens
        callee = rng.choice(legal_callees(caller, previous))
        tokens += _turn(caller, callee)
        caller, previous = callee, caller
    return tokens + [EOS]


# The rules as the course states them (the game chapter prints them; a broken round names one).
RULES = {
    "start": "A round starts with <BOS>.",
    "opens": "Pietro opens; after that, each caller is the player the previous turn called.",
    "turn": "A turn is CALLER chiama CALLEE, and turns are separated by <SEP>.",
    "callee": "A legal callee is any of the 10 players except the caller and the player who just called him "
              "(no call-back).",
    "epithet": "The epithet is fixed by who calls whom and spoken right after the callee: Pietro calling Paolo "
               "says Tarso, Paolo calling Pietro says Cefa (peer epithets); anyone else calling Pietro says "
               "capo, calling Paolo says vice (subordinate epithets). Numbers get none.",
    "wrong": "From the second turn on, a caller may err: call himself, call back, or call an absurd word. "
             "The round then ends <SEP> CALLER perde <EOS>.",
    "end": "Otherwise the round ends with <EOS> after 8 legal calls.",
}


@dataclass(frozen=True)
class Verdict:
    """The rules checker's reading of a round: `status` is "valid", "unfinished" (the tokens keep the
    rules but stop before the end) or "broken"; `position` is where it first breaks or stops (None
    when valid), `rule` the key of `RULES` it breaks, `message` says why, `allowed` the tokens the
    rules allow at that position (in vocabulary order), `turns` where each turn starts."""
    status: str
    position: int | None
    rule: str | None
    message: str
    allowed: tuple[str, ...]
    turns: tuple[int, ...]

    @property
    def ok(self) -> bool:
        return self.status == "valid"


def _in_order(tokens) -> tuple[str, ...]:
    chosen = set(tokens)
    return tuple(t for t in TOKENS if t in chosen)


def _shown(tokens) -> str:
    return ", ".join(tokens) if tokens else "nothing"


def read_round(tokens: list[str]) -> Verdict:
    """Read `tokens` against the rules, token by token: the first one that breaks a rule, and why.

    The checker of the course (`check_round` is its yes or no); the page's twin is
    lib/explorers/js/game.js, with the same sentences (lib/messages.py)."""
    tokens = list(tokens)
    n, turns = len(tokens), []

    def stop(i: int, rule: str, allowed, message: str) -> Verdict:
        allowed = _in_order(allowed)
        if i >= n:
            return Verdict("unfinished", n, rule, say("game_unfinished", position=str(n), allowed=_shown(allowed)),
                           allowed, tuple(turns))
        return Verdict("broken", i, rule, message, allowed, tuple(turns))

    def want(i: int, expected: str, rule: str, message: str, **fields):
        if i < n and tokens[i] == expected:
            return None
        got = repr(tokens[i]) if i < n else ""
        return stop(i, rule, [expected], say(message, position=str(i), got=got, **fields))

    if n == 0 or tokens[0] != BOS:
        return stop(0, "start", [BOS], say("game_start", got=repr(tokens[0]) if n else ""))
    i, caller, previous, legal = 1, "Pietro", None, 0
    while True:
        turns.append(i)
        if i < n and tokens[i] != caller:
            return stop(i, "opens", [caller], say("game_caller", position=str(i), got=repr(tokens[i]),
                                                  caller=repr(caller)))
        if i >= n:
            return stop(i, "opens", [caller], "")
        broken = want(i + 1, "chiama", "turn", "game_chiama")
        if broken:
            return broken
        i += 2
        legal_list = legal_callees(caller, previous)
        wrong_list = [] if legal == 0 else [caller, previous, *ABSURD]
        allowed = legal_list + wrong_list
        if i >= n:
            return stop(i, "callee", allowed, "")
        callee = tokens[i]
        if callee not in allowed:
            if legal == 0 and (callee == caller or callee in ABSURD):
                return stop(i, "wrong", allowed, say("game_opening", position=str(i), got=repr(callee)))
            return stop(i, "callee", allowed, say("game_callee", position=str(i), got=repr(callee)))
        i += 1
        e = epithet(caller, callee)
        if e is not None:
            broken = want(i, e, "epithet", "game_epithet", caller=caller, callee=callee, epithet=repr(e))
            if broken:
                return broken
            i += 1
        if callee not in legal_list:
            for k, expected in enumerate([SEP, caller, "perde", EOS]):
                broken = want(i + k, expected, "wrong", "game_loser", caller=caller)
                if broken:
                    return broken
            i += 4
            if i < n:
                return stop(i, "wrong", [], say("game_over", position=str(i), got=repr(tokens[i])))
            return Verdict("valid", None, None, say("game_valid_wrong"), (), tuple(turns))
        legal += 1
        if legal == LEGAL_CALLS:
            broken = want(i, EOS, "end", "game_full", calls=str(LEGAL_CALLS))
            if broken:
                return broken
            if i + 1 < n:
                return stop(i + 1, "end", [], say("game_over", position=str(i + 1), got=repr(tokens[i + 1])))
            return Verdict("valid", None, None, say("game_valid"), (), tuple(turns))
        broken = want(i, SEP, "turn", "game_separator")
        if broken:
            return broken
        i += 1
        caller, previous = callee, caller


def check_round(tokens: list[str]) -> tuple[bool, str]:
    """Whether `tokens` is a complete, valid round; if not, the first thing that breaks the rules."""
    verdict = read_round(tokens)
    return verdict.ok, verdict.message


# The roles a token plays in its turn (`token_roles`). The opening turn's are their own roles: its caller
# is always Pietro and its position always the same, so it is not averaged with the later turns.
TURN_ROLES = ("caller", "chiama", "callee", "epithet")
TOKEN_ROLES = ((BOS,) + tuple(f"opening {r}" for r in TURN_ROLES) + TURN_ROLES
               + (SEP, "loser", "perde", EOS, PAD))


def token_roles(tokens) -> list[str]:
    """The role each token plays in its turn, read from its neighbours (so a broken or unfinished round
    gets roles too): `<BOS>`; the `caller` (after `<BOS>` or `<SEP>`, or before `chiama`), `chiama`, the
    `callee` (after `chiama`) and its `epithet`, each prefixed `opening ` in the first turn; `<SEP>`; the
    `loser` and `perde` of a lost round; `<EOS>`, `<PAD>`. A token none of these fits gets
    `stray ` and its class (`stray player`, ...). Mean and resample ablation match positions by these
    roles (`lib.analysis.ablation.reference_set`)."""
    tokens = list(tokens)
    out, opening = [], True
    for i, t in enumerate(tokens):
        before = tokens[i - 1] if i > 0 else None
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if t in (BOS, EOS, PAD):
            role = t
        elif t == SEP:
            role, opening = SEP, False
            out.append(role)
            continue
        elif t == "perde":
            role = "perde"
        elif after == "perde":
            role = "loser"
        elif t == "chiama":
            role = "chiama"
        elif before == "chiama":
            role = "callee"
        elif t in EPITHETS and i > 1 and tokens[i - 2] == "chiama":
            role = "epithet"
        elif after == "chiama" or before in (BOS, SEP):
            role = "caller"
        else:
            role = f"stray {ROLES.get(t, 'word')}"
        out.append(f"opening {role}" if opening and role in TURN_ROLES else role)
    return out


def page_constants() -> dict:
    """What the page's twin of the checker (lib/explorers/js/game.js) reads, written here once."""
    return {"tokens": list(TOKENS), "players": list(PLAYERS), "absurd": list(ABSURD), "legal_calls": LEGAL_CALLS,
            "epithets": {f"{a}|{b}": epithet(a, b) for a in PLAYERS for b in ("Pietro", "Paolo")},
            "roles": ROLES, "rules": RULES, "turn_roles": list(TURN_ROLES)}


def next_token_distribution(prefix: list[str], options: GameOptions = GameOptions()) -> dict[str, float]:
    """The exact next-token probabilities the generator implies after a valid prefix of a round.

    This is the target a perfectly trained model would match: the chapters compare the model's
    results page with it.
    """
    require(prefix and prefix[0] == BOS, say("prefix_start"))
    # Replay the prefix to find the state.
    caller, previous, legal, i = "Pietro", None, 0, 1
    n = len(prefix)
    while True:
        if i == n:
            return {caller: 1.0}
        if prefix[i] != caller:
            raise CourseError(say("prefix_token", position=i, token=repr(caller)))
        if i + 1 == n:
            return {"chiama": 1.0}
        if prefix[i + 1] != "chiama":
            raise CourseError(say("prefix_token", position=i + 1, token=repr("chiama")))
        if i + 2 == n:
            legal_list = legal_callees(caller, previous)
            if legal == 0:
                return {c: 1 / len(legal_list) for c in legal_list}
            r = options.error_rate
            dist = {c: (1 - r) / len(legal_list) for c in legal_list}
            dist[caller] = dist.get(caller, 0) + r / 3
            dist[previous] = dist.get(previous, 0) + r / 3
            for a in ABSURD:
                dist[a] = dist.get(a, 0) + r / 3 / len(ABSURD)
            return dist
        callee = prefix[i + 2]
        wrong = callee not in legal_callees(caller, previous)
        if wrong and (legal == 0 or callee not in (caller, previous) + ABSURD):
            raise CourseError(say("prefix_opening" if legal == 0 else "prefix_callee", position=i + 2, got=repr(callee)))
        i += 3
        e = epithet(caller, callee)
        if e is not None:
            if i == n:
                return {e: 1.0}
            if prefix[i] != e:
                raise CourseError(say("prefix_token", position=i, token=repr(e)))
            i += 1
        if wrong:
            ending = [SEP, caller, "perde", EOS]
            k = n - i
            if prefix[i:] != ending[:k]:
                raise CourseError(say("prefix_ending", ending=" ".join(ending)))
            return {ending[k]: 1.0} if k < len(ending) else {}
        legal += 1
        if i == n:
            return {EOS: 1.0} if legal == options.legal_calls else {SEP: 1.0}
        if legal == options.legal_calls:
            return {}
        if prefix[i] != SEP:
            raise CourseError(say("prefix_token", position=i, token=repr(SEP)))
        i += 1  # the separator
        caller, previous = callee, caller


__all__ = ["TOKENS", "ROLES", "PLAYERS", "EPITHETS", "VERBS", "ABSURD", "PAD", "epithet",
           "legal_callees", "sample_round", "token_roles", "TOKEN_ROLES", "check_round", "read_round", "Verdict", "RULES", "next_token_distribution", "GameOptions"]
