"""The game chapter's explorer: the calling game's rules checker.

`rules_explorer`: a round typed or built from the vocabulary, read by the library's rules checker
(`calling_game.read_round`): where it breaks a rule, which rule, and what the rules allow there. Its
page twin is `rules` in this unit's page.js (reading the round with lib/explorers/js/game.js), its picture in
this unit's pictures.js.
"""
from __future__ import annotations

import random
from typing import Sequence

from lib.content.corpora import calling_game as cg
from lib.explorers.definition import Control, Explorer, registered
from lib.explorers.shared import example_model


def _example_rounds(count: int = 3, seed: int = 25) -> list[str]:
    """Rounds from the library's generator (`sample_round`), as text, the first a whole round of 8 calls."""
    rng = random.Random(seed)
    full, short = [], []
    while len(full) < 1 or len(short) < count - 1:
        r = cg.sample_round(rng)
        (short if "perde" in r else full).append(" ".join(r))
    return full[:1] + short[:count - 1]


# The game's rules, not a part of the machine: no "where" line.
@registered("rules", lambda: [rules_explorer(example_model(), _example_rounds())], where="")
def rules_explorer(lm, rounds: Sequence[str]) -> Explorer:
    """A round of the game, typed or built token by token, read against the rules."""
    def compute(v):
        tokens = lm.vocab.decode(lm.encode(v["prompt"]))
        verdict = cg.read_round(tokens)
        return {"tokens": tokens, "roles": [cg.ROLES[t] for t in tokens], "status": verdict.status,
                "position": verdict.position, "rule": verdict.rule,
                "rule_text": cg.RULES[verdict.rule] if verdict.rule else "", "message": verdict.message,
                "allowed": list(verdict.allowed), "turns": list(verdict.turns)}

    control = Control("prompt", "round", "a round of the game, tokens separated by spaces: type it, or add tokens "
                      "from the vocabulary; the checker reads it token by token", "prompt", rounds[0],
                      options=tuple(rounds))
    return Explorer("rules", [[control]], compute, lm.name,
                    note="The checker is the library's (read_round); change a token and see which rule it breaks.")
