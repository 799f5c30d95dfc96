"""Readable signs of a weak search: entropy and top-1 margin, set beside what the rules allow.

Every prompt gets a complete ranking, whether or not the model has seen anything like it. The
shape of the ranking is the only sign the model itself gives: its entropy (in bits: 0 for one
certain word, log2 of n for n equal words) and the margin of the best word over the second.
For the calling game we can also ask the rules: `rules_say` is the exact next-word distribution
of a valid prefix, or the reason the prefix is impossible. An impossible prompt has no next word
by the rules, with one exception: the epithet depends only on who calls whom, and the rules speak
it even after a wrong call, so a prompt ending in "A chiama Pietro" or "A chiama Paolo" (A a
player) fixes the epithet however it began (`epithet_rule`). `Signs.verdict` sets the model's top
word against all this: allowed, a mistake by the rules, the epithet rule's word, or no rule at all.
"""
from __future__ import annotations

from dataclasses import dataclass
import random

import torch

from lib.content.corpora.calling_game import PLAYERS, epithet, next_token_distribution
from lib.errors import CourseError
from lib.model.readout import entropy_bits, prompt_logits, softmax, top1_margin


@dataclass(frozen=True)
class Signs:
    prompt: str
    top: str
    top_prob: float
    entropy_bits: float
    margin: float
    rules: dict[str, float] | None   # what the game allows next; None when the prompt is impossible
    why_impossible: str = ""
    epithet_rule: str | None = None  # the epithet the last call demands, if it names Pietro or Paolo

    @property
    def verdict(self) -> str:
        """The top word judged by the rules: 'allowed', 'mistake', 'epithet rule' (an impossible
        prompt whose last call still fixes the epithet, and the model says it) or 'no rule'."""
        if self.rules is not None:
            return "allowed" if self.rules.get(self.top, 0) > 0 else "mistake"
        if self.epithet_rule is not None:
            return "epithet rule" if self.top == self.epithet_rule else "mistake"
        return "no rule"

    @property
    def rules_want(self) -> str | None:
        """The word the rules fix next, where they fix exactly one."""
        if self.rules is not None:
            return next(iter(self.rules)) if len(self.rules) == 1 else None
        return self.epithet_rule

    @property
    def on_distribution(self) -> bool:
        return self.rules is not None

    @property
    def top_allowed(self) -> bool:
        return bool(self.rules) and self.top in self.rules


def rules_say(prompt: str) -> tuple[dict[str, float] | None, str]:
    """(the game's own next-word distribution, "") or (None, why the prompt cannot occur)."""
    try:
        return next_token_distribution(prompt.split()), ""
    except CourseError as e:
        return None, str(e)


def epithet_rule(prompt: str) -> str | None:
    """The epithet the prompt's last call demands ("A chiama Pietro" or "A chiama Paolo", A a
    player), whether or not the call could happen; None for any other ending."""
    words = prompt.split()
    if len(words) >= 3 and words[-2] == "chiama" and words[-3] in PLAYERS:
        return epithet(words[-3], words[-1])
    return None


def read_signs(lm, prompt: str) -> Signs:
    probs = softmax(prompt_logits(lm, prompt))
    best = int(torch.argmax(probs))
    rules, why = rules_say(prompt)
    return Signs(prompt, lm.vocab.tokens[best], float(probs[best]), entropy_bits(probs), top1_margin(probs),
                 rules, why, epithet_rule(prompt))


def random_prompts(lm, n: int, seed: int = 0, max_words: int = 6) -> list[str]:
    """`n` prompts of <BOS> then 1 to `max_words` words drawn at random from the vocabulary
    (no <PAD>, <BOS> or <EOS>): almost all of them impossible in the game."""
    rng = random.Random(seed)
    words = [t for t in lm.vocab.tokens if t not in ("<PAD>", "<BOS>", "<EOS>")]
    return ["<BOS> " + " ".join(rng.choice(words) for _ in range(rng.randint(1, max_words))) for _ in range(n)]
