"""The lever measured in logits: one word's lead over its rival, stage by stage and component by component.

A probability saturates. Once a word holds 0.94 of the page no later push can add more than 0.06,
however large the push, so a chart of probabilities makes every late contribution look small. The
difference between two words' logits does not saturate: it adds up, stage by stage, exactly as the
residual stream does (in a model without a final LayerNorm each component's write adds its own
share of the difference), and the probability of the pair follows from it by a sigmoid.

For an epithet the natural rival is the epithet the same callee would get from the other kind of
caller: Tarso against vice (Paolo called by Pietro, or by a number), Cefa against capo (Pietro
called by Paolo, or by a number). The difference then measures one thing: has the model worked out
who is calling?
"""
from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from lib.analysis.lens import direct_logit_attribution, group_by_block, logit_lens
from lib.content.corpora.calling_game import EPITHETS, PLAYERS, epithet
from lib.errors import CourseError, require


def rival_epithet(word: str) -> str:
    """The other epithet of the same callee: Tarso <-> vice, Cefa <-> capo (from the game's rules)."""
    for callee in ("Pietro", "Paolo"):
        pair = {epithet(caller, callee) for caller in PLAYERS if caller != callee}
        if word in pair:
            return next(w for w in pair if w != word)
    raise CourseError(f"{word!r} is not an epithet; the epithets are {', '.join(EPITHETS)}")


@dataclass(frozen=True)
class DifferenceView:
    prompt: str
    word: str
    rival: str
    stages: list[str]            # forward order: embed, blocks.0.attn, blocks.0.mlp, ...
    differences: list[float]     # logit(word) - logit(rival) read by the logit lens after each stage
    probs: list[float]           # P(word) after each stage
    tops: list[str]              # the lens's best word after each stage
    pushes: dict[str, float]     # each component's share of the final difference (grouped by block)

    @property
    def final(self) -> float:
        return self.differences[-1]

    def share(self, component: str) -> float:
        """The fraction of the final difference that `component` writes."""
        return self.pushes[component] / self.final


def difference_view(lm, prompt: str, word: str, rival: str | None = None) -> DifferenceView:
    """`word`'s logit lead over `rival` (by default its rival epithet) after every stage of `prompt`."""
    rival = rival or rival_epithet(word)
    a, b = lm.vocab.id(word), lm.vocab.id(rival)
    ids = lm.encode(prompt)
    stages = logit_lens(lm.model, ids)
    _, cache = lm.model.run_with_cache(ids)
    shares = group_by_block(direct_logit_attribution(lm.model, cache))
    return DifferenceView(
        prompt, word, rival, [s.name for s in stages],
        [float(s.logits[a] - s.logits[b]) for s in stages],
        [float(s.probs[a]) for s in stages],
        [lm.vocab.tokens[int(s.probs.argmax())] for s in stages],
        {name: float(v[a] - v[b]) for name, v in shares.items()})


@dataclass(frozen=True)
class SetSummary:
    n: int
    stages: list[str]
    on_top: list[int]                 # per stage: prompts whose lens puts the word first
    ahead: list[int]                  # per stage: prompts where the word leads its rival
    median_difference: list[float]    # per stage
    median_prob: list[float]          # per stage
    median_share: dict[str, float]    # per component: median share of the final difference
    largest: dict[str, int]           # per component: prompts where it writes the largest share


def summarise(views: list[DifferenceView]) -> SetSummary:
    """Counts and medians over one prompt set's views."""
    require(len(views) > 0, "summarise needs at least one view")
    stages = views[0].stages
    columns = range(len(stages))
    components = list(views[0].pushes)
    largest = {c: 0 for c in components}
    for v in views:
        largest[max(components, key=v.pushes.get)] += 1
    return SetSummary(
        len(views), stages,
        [sum(v.tops[i] == v.word for v in views) for i in columns],
        [sum(v.differences[i] > 0 for v in views) for i in columns],
        [median(v.differences[i] for v in views) for i in columns],
        [median(v.probs[i] for v in views) for i in columns],
        {c: median(v.share(c) for v in views) for c in components},
        largest)


__all__ = ["rival_epithet", "DifferenceView", "difference_view", "SetSummary", "summarise"]
