"""What each head does over a labelled set of prompts: where it looks, and what breaks without it.

One prompt is an example; a claim about a head is a count over a set of prompts of one kind
(`lib.content.prompt_sets`). `ablation_survey` switches components off one group at a time and
records, prompt by prompt, the probability of the token the rules fix (zero, mean or resample
ablation: `lib.analysis.ablation`) and the logit difference between that answer and its rival
(`rival`); a prompt's answer is *lost* when that probability falls below one half while the intact
model held it above. A count saturates (an answer held at 0.99 and one held at 0.51 count the same), so
every survey also gives the effect size: how far the logit difference falls (`drop`). `attention_survey`
measures, for every head, how much of the last position's attention lands on a named place of
each prompt (the caller, the callee just called, ...) and on how many prompts that place gets the
head's largest weight. `head_disagreement` says how differently a layer's heads look, beside the
same figure for the `untrained_twin`. `later_turn_blocks` switches whole blocks off over the
later turns (the residual path's and the lever's claims).
"""
from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

import numpy as np
import torch

from lib.analysis.ablation import ablated_logits, all_heads, head_name, reference_seed, reference_set
from lib.content.prompt_sets import LabelledPrompt, places, prompt_set
from lib.errors import require
from lib.model.readout import last_logits, softmax
from lib.model.store import load
from lib.model.transformer import Head, Transformer

# A prompt's answer counts as held while the rules' next token keeps at least this probability.
HOLDS_AT = 0.5


@dataclass(frozen=True)
class Switch:
    """What is switched off together: some heads, some layers' MLPs."""
    heads: tuple[Head, ...] = ()
    mlps: tuple[int, ...] = ()


def single_heads(model) -> dict[str, Switch]:
    return {head_name(h): Switch(heads=(h,)) for h in all_heads(model)}


def head_pairs(model) -> dict[str, Switch]:
    return {f"{head_name(a)}+{head_name(b)}": Switch(heads=(a, b)) for a, b in combinations(all_heads(model), 2)}


def whole_blocks(model) -> dict[str, Switch]:
    """Each layer's four heads together, and each layer's MLP."""
    out = {}
    for layer in range(model.cfg.n_layers):
        out[f"attention {layer}"] = Switch(heads=tuple((layer, h) for h in range(model.cfg.n_heads)))
        if model.cfg.has_mlp:
            out[f"MLP {layer}"] = Switch(mlps=(layer,))
    return out


# The rival of an epithet: the one the same callee earns from the other kind of caller (a peer calling
# instead of a numbered player, or the other way round). The logit difference answer - rival measures
# what an ablation does to *who is calling*, the thing the epithet encodes.
EPITHET_RIVAL = {"Tarso": "vice", "vice": "Tarso", "Cefa": "capo", "capo": "Cefa"}


def rival(lm, prompt: LabelledPrompt, intact_logits: torch.Tensor) -> str:
    """The token an answer's logit difference is measured against: for an epithet, `EPITHET_RIVAL`; for
    any other answer, the intact model's strongest other token after the prompt."""
    if prompt.target in EPITHET_RIVAL:
        return EPITHET_RIVAL[prompt.target]
    order = torch.argsort(intact_logits, descending=True, stable=True).tolist()
    return lm.vocab.tokens[next(i for i in order if lm.vocab.tokens[i] != prompt.target)]


@dataclass(frozen=True)
class SetAblation:
    prompts: tuple[LabelledPrompt, ...]
    intact: np.ndarray                  # P(target) per prompt, nothing switched off
    off: dict[str, np.ndarray]          # switch name -> P(target) per prompt with it off
    winners: dict[str, tuple[str, ...]]  # switch name -> the model's first choice per prompt with it off
    rivals: tuple[str, ...] = ()        # per prompt, the token the logit difference is measured against
    intact_diff: np.ndarray = None      # logit(target) - logit(rival) per prompt, nothing off
    off_diff: dict = None               # switch name -> the same with it off

    def drop(self, name: str) -> float:
        """The effect size: how far the logit difference (answer - rival) falls, on average over the
        prompts, with `name` switched off (negative: it rises)."""
        return float(np.mean(self.intact_diff - self.off_diff[name]))

    def mean_diff(self) -> float:
        """The intact model's logit difference, on average: what `drop` is a part of."""
        return float(np.mean(self.intact_diff))

    @property
    def n(self) -> int:
        return len(self.prompts)

    def held(self) -> int:
        """Prompts whose answer the intact model gives at least `HOLDS_AT`."""
        return int((self.intact >= HOLDS_AT).sum())

    def lost(self, name: str) -> int:
        """Prompts held intact whose answer falls below `HOLDS_AT` with `name` switched off."""
        return int(((self.intact >= HOLDS_AT) & (self.off[name] < HOLDS_AT)).sum())

    def most_damaging(self) -> str:
        """The switch that loses the most answers (ties: the lower mean probability)."""
        return max(self.off, key=lambda k: (self.lost(k), -float(self.off[k].mean())))

    def replacements(self, name: str) -> Counter:
        """What the model says instead, on the prompts whose answer `name` loses."""
        lost = (self.intact >= HOLDS_AT) & (self.off[name] < HOLDS_AT)
        return Counter(w for w, gone in zip(self.winners[name], lost) if gone)


def _logits(lm, prompts: Sequence[LabelledPrompt], switch: Switch, kind: str = "zero",
            reference=None, seed: int = 0, match: str = "role") -> torch.Tensor:
    if not (switch.heads or switch.mlps):
        return last_logits(lm, [p.text for p in prompts]).double()
    return ablated_logits(lm, prompts, switch.heads, switch.mlps, kind, reference, seed, match)


def _read(lm, prompts, logits, rivals) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
    probs = softmax(logits)
    rows = torch.arange(len(prompts))
    ids = torch.tensor([lm.vocab.id(p.target) for p in prompts])
    against = torch.tensor([lm.vocab.id(r) for r in rivals])
    winners = tuple(lm.vocab.tokens[i] for i in probs.argmax(-1).tolist())
    return probs[rows, ids].numpy(), winners, (logits[rows, ids] - logits[rows, against]).numpy()


def ablation_survey(lm, prompts: Sequence[LabelledPrompt], switches: dict[str, Switch] | None = None,
                    kind: str = "zero", reference=None, seed: int = 0, match: str = "role") -> SetAblation:
    """P(the rules' next token) and the logit difference to its rival (`rival`) on every prompt, intact
    and with each switch off in turn (by default each head alone), switched off the `kind` way: zero,
    mean or resample ablation (`lib.analysis.ablation.ablation_hooks`: `reference` is the reference set,
    `match` how its positions are matched, `seed` draws the resampled positions)."""
    prompts = tuple(prompts)
    require(len(prompts) > 0, "the prompt set is empty")
    switches = single_heads(lm.model) if switches is None else switches
    intact_logits = _logits(lm, prompts, Switch())
    rivals = tuple(rival(lm, p, row) for p, row in zip(prompts, intact_logits))
    intact, _, intact_diff = _read(lm, prompts, intact_logits, rivals)
    off, winners, off_diff = {}, {}, {}
    for name, switch in switches.items():
        off[name], winners[name], off_diff[name] = _read(
            lm, prompts, _logits(lm, prompts, switch, kind, reference, seed, match), rivals)
    return SetAblation(prompts, intact, off, winners, rivals, intact_diff, off_diff)


@dataclass(frozen=True)
class PlaceShare:
    mean: float     # the head's mean attention on the place, from the last position (0 where absent)
    largest: int    # prompts on which the place gets the head's largest weight
    present: int    # prompts that have the place


def last_patterns(lm, prompts: Sequence[LabelledPrompt]) -> list[dict[Head, np.ndarray]]:
    """For each prompt, every head's attention row at its last position, over its own tokens."""
    encoded = [lm.encode(p.text) for p in prompts]
    width = max(len(ids) for ids in encoded)
    pad = lm.vocab.id("<PAD>") if "<PAD>" in lm.vocab else 0
    # Right padding: the last real position attends only to the positions before it.
    _, cache = lm.model.run_with_cache(torch.tensor([ids + [pad] * (width - len(ids)) for ids in encoded]))
    rows = []
    for b, ids in enumerate(encoded):
        q = len(ids) - 1
        rows.append({(layer, h): cache[f"blocks.{layer}.attn.pattern"][b, h, q, :q + 1].double().numpy()
                     for layer, h in all_heads(lm.model)})
    return rows


def attention_survey(lm, prompts: Sequence[LabelledPrompt], names: Sequence[str]) -> dict[Head, dict[str, PlaceShare]]:
    """Each head's attention from the last position on each named place (see `prompt_sets.places`;
    `itself` is the last position)."""
    prompts = tuple(prompts)
    require(len(prompts) > 0, "the prompt set is empty")
    rows = last_patterns(lm, prompts)
    found = [dict(places(p), itself=len(p.tokens) - 1) for p in prompts]
    out = {}
    for head in all_heads(lm.model):
        out[head] = {}
        for name in names:
            shares, largest, present = [], 0, 0
            for by_head, where in zip(rows, found):
                if name not in where:
                    shares.append(0.0)
                    continue
                row = by_head[head]
                present += 1
                shares.append(float(row[where[name]]))
                largest += int(np.argmax(row)) == where[name]
            out[head][name] = PlaceShare(float(np.mean(shares)), largest, present)
    return out


def head_disagreement(lm, prompts: Sequence[LabelledPrompt], layer: int) -> float:
    """How differently the heads of one layer look from the last position: the total-variation
    distance between two heads' attention rows (0: the same weights, 1: no overlap), averaged over
    every pair of heads and every prompt."""
    rows = last_patterns(lm, prompts)
    heads = [(layer, h) for h in range(lm.model.cfg.n_heads)]
    require(len(heads) > 1, "a layer needs two heads to compare")
    return float(np.mean([0.5 * np.abs(r[a] - r[b]).sum() for r in rows for a, b in combinations(heads, 2)]))


def untrained_twin(lm, seed: int = 0):
    """The same architecture and vocabulary at its random initialisation: the baseline that shows
    what training, and not the architecture, put into a head."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = Transformer(lm.model.cfg)
    model.eval()
    return dataclasses.replace(lm, name=f"{lm.name} before training", model=model)


# ----------------------------------------------------------------------------- whole blocks off on later turns
LATER_TURNS = 40          # later turns per set


def target_probs(lm, prompts, targets, heads=(), mlps=(), kind="zero", seed=0, match="role",
                 reference=None) -> np.ndarray:
    """P(each prompt's target) with the listed heads and MLPs switched off the `kind` way (mean and resample
    against `reference`, by default the reference set that goes with `seed`, matched by `match`)."""
    if reference is None and kind != "zero":
        reference = reference_set(lm, seed=reference_seed(seed))
    probs = torch.softmax(ablated_logits(lm, prompts, heads, mlps, kind, reference, seed=seed, match=match), -1)
    return np.array([float(probs[i, lm.vocab.id(t)]) for i, t in enumerate(targets)])


@functools.lru_cache(maxsize=None)
def later_turn_blocks(seed: int) -> dict:
    """The calling-game model on `LATER_TURNS` later turns drawn with `seed` whose answer is Tarso
    (`tarso_*`) and on as many of every epithet (`all_*`): how many answers it holds intact (`_held`)
    and how many of those each whole block switched off loses (`_mean_attn0`, `_zero_attn0`,
    `_mean_mlp1`, ...; for every epithet, also split into the peer epithets' and the others')."""
    lm = load("calling-game")
    n_ctx = lm.model.cfg.n_ctx
    out = {"holds_at": HOLDS_AT}
    sets = {"tarso": prompt_set("epithet-later-turn", LATER_TURNS, seed, n_ctx, target="Tarso"),
            "all": prompt_set("epithet-later-turn", LATER_TURNS, seed, n_ctx)}
    switches = whole_blocks(lm.model)
    for key, prompts in sets.items():
        targets = [p.target for p in prompts]
        intact = target_probs(lm, prompts, targets)
        held = intact >= HOLDS_AT
        out[f"{key}_n"], out[f"{key}_held"] = len(prompts), int(held.sum())
        for name, sw in switches.items():
            short = name.replace("attention ", "attn").replace("MLP ", "mlp")
            for kind in (("zero", "mean") if name == "attention 0" else ("mean",)):
                p = target_probs(lm, prompts, targets, sw.heads, sw.mlps, kind, seed)
                out[f"{key}_{kind}_{short}"] = int((held & (p < HOLDS_AT)).sum())
                if key == "all" and kind == "mean" and name == "attention 0":
                    peer = np.array([t in ("Tarso", "Cefa") for t in targets])
                    out["all_peer"] = int((held & peer).sum())
                    out["all_peer_lost"] = int((held & peer & (p < HOLDS_AT)).sum())
                    out["all_other"] = int((held & ~peer).sum())
                    out["all_other_lost"] = int((held & ~peer & (p < HOLDS_AT)).sum())
    return out
