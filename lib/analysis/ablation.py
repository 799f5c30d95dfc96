"""Switching components off: zero, mean and resample ablation, whole blocks, single heads, and what
changes when you do.

Every kind is a hook on a component's write (`lib.model.hooks`): a head's slice of
`blocks.L.attn.head_out`, or `blocks.L.mlp_out`. The three kinds differ in what the write becomes:

- `zero`: nothing (the model's `ablate=[(layer, head), ...]` and `ablate_mlps=[...]` keywords). A
  head's average write is not zero, so zeroing it also adds a signal the model never saw in training.
- `mean`: the component's average write over a stated reference distribution: `REFERENCE_ROUNDS` rounds
  of the model's own corpus drawn with a seed (`reference_set`; the claims vary that seed as they vary
  the prompt sets'). What the component says on every prompt is kept; what it says about *this* prompt
  is removed.
- `resample`: its write at a matching position of another round of the reference set (drawn with a
  seed): a value the component really produces, about some other round.

Which positions of the reference rounds match a prompt's position is the reference distribution's
`match`:

- `role` (the course's default): the positions where the token plays the same role in its turn
  (`lib.content.corpora.calling_game.token_roles`: a later call's callee, `<SEP>`, an epithet, ...).
  The replacement is what the component writes *at a callee*, say, averaged over callees of other
  rounds: it stays on the distribution the component works on. A role the reference rounds never
  show (a token a broken prompt puts where no round has one) falls back to the position-matched value.
- `position`: the same position, whatever stands there in the reference rounds (at a later callee's
  position that averages callees with `chiama`, `<SEP>`, players and epithets). Kept as an option,
  for comparison: the page's explorer computes this one.

`ablated_logits` runs any of them over a batch of prompts; `ablation_view` is the pure function behind
the head-ablation explorer; `head_effects` ablates each head alone and measures one token's
probability; `without_attention` checks that switching every head off leaves a model whose prediction
at a position no longer depends on the tokens before it, and `context_blindness` repeats that check
over a set of prompts. (Counts and logit differences over labelled prompt sets: `head_survey`.)
"""
from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from itertools import combinations
from typing import Iterable

import torch

from lib.messages import say
from lib.errors import CourseError, require
from lib.model.hooks import check_heads, check_mlps, replace_heads, zero_hooks
from lib.model.readout import Rolls, prompt_logits, softmax, token_prob
from lib.model.transformer import Head
from lib.content.corpora import get_corpus

KINDS = ("zero", "mean", "resample")
# The reference set of mean and resample ablation: rounds of the model's own corpus. Its seed is one no
# prompt set of the chapters uses, so a prompt is not part of the average it is ablated to.
REFERENCE_ROUNDS = 200
REFERENCE_SEED = 1000


def all_heads(model) -> list[Head]:
    return [(layer, h) for layer in range(model.cfg.n_layers) for h in range(model.cfg.n_heads)]


def head_name(head: Head) -> str:
    return f"L{head[0]}H{head[1]}"


MATCHES = ("role", "position")


def reference_seed(seed: int) -> int:
    """The reference set's seed that goes with a claim's prompt-set seed: the claims vary both together."""
    return REFERENCE_SEED + int(seed)


@dataclass(frozen=True)
class Reference:
    """The reference set of mean and resample ablation, and what the components write on it."""
    label: str                        # stated in the chapters: how many rounds of what, which seed
    rounds: tuple[tuple[int, ...], ...]  # token ids, each cut to the model's context
    counts: torch.Tensor              # [n_ctx]: how many rounds reach each position
    means: dict[str, torch.Tensor]    # write name -> [n_ctx, ...] average over the rounds reaching each position
    writes: dict[str, torch.Tensor]   # write name -> [round, n_ctx, ...] (zero past a round's end)
    roles: tuple[tuple[str, ...], ...] = ()   # each round's token roles (empty when the corpus states none)
    role_means: dict = None           # write name -> {role: [...] average over every position of that role}
    role_slots: dict = None           # role -> [(round, position), ...] in round order
    role_of: object = None            # tokens -> roles (the corpus's `roles`), or None

    @property
    def longest(self) -> int:
        return int((self.counts > 0).sum())

    def describe(self, match: str = "role") -> str:
        """The reference distribution in words, as a page states it."""
        if match == "role" and self.role_of is not None:
            return f"{self.label}, matched by the token's role in its turn"
        return f"{self.label}, matched by position"


_REFERENCES: dict = {}


def write_names(cfg) -> list[str]:
    """The hook points that mean and resample ablation replace: each layer's heads' writes and MLP output."""
    return [f"blocks.{layer}.{n}" for layer in range(cfg.n_layers)
            for n in (("attn.head_out", "mlp_out") if cfg.has_mlp else ("attn.head_out",))]


def reference_set(lm, n: int = REFERENCE_ROUNDS, seed: int = REFERENCE_SEED) -> Reference:
    """`n` rounds of the corpus `lm` was trained on (`meta["corpus"]`), drawn with `seed`, run once:
    every head's write and MLP output at every position of every round, their per-position means
    (over the rounds long enough to reach the position) and, where the corpus names its tokens' roles,
    their per-role means (over every position of every round where a token plays that role). Kept per
    model, n and seed."""
    key = (id(lm.model), lm.name, n, seed)
    if key in _REFERENCES:
        return _REFERENCES[key]
    corpus_name = lm.meta.get("corpus") if getattr(lm, "meta", None) else None
    require(corpus_name is not None, f"{lm.name} names no corpus to draw the reference rounds of mean and "
                                     "resample ablation from")
    corpus = get_corpus(corpus_name, lm.meta.get("train", {}).get("corpus_options"))
    rng = random.Random(seed)
    cfg = lm.model.cfg
    texts = [corpus.sample(rng)[:cfg.n_ctx] for _ in range(n)]
    rounds = tuple(tuple(lm.vocab.encode(t)) for t in texts)
    width = max(len(r) for r in rounds)
    pad = lm.vocab.id("<PAD>") if "<PAD>" in lm.vocab else 0
    batch = torch.tensor([list(r) + [pad] * (width - len(r)) for r in rounds])
    reach = torch.zeros(n, cfg.n_ctx)
    for i, r in enumerate(rounds):
        reach[i, :len(r)] = 1
    with torch.no_grad():
        _, cache = lm.model.run_with_cache(batch)
    roles = tuple(tuple(corpus.roles(t)) for t in texts) if corpus.roles is not None else ()
    slots: dict[str, list[tuple[int, int]]] = {}
    for i, rs in enumerate(roles):
        for pos, role in enumerate(rs):
            slots.setdefault(role, []).append((i, pos))
    writes, means, role_means = {}, {}, {}
    counts = reach.sum(0)
    for name in write_names(cfg):
        x = cache[name]                                  # [round, width, ...]
        full = torch.zeros((n, cfg.n_ctx) + tuple(x.shape[2:]), dtype=x.dtype)
        full[:, :width] = x
        mask = reach.view(n, cfg.n_ctx, *([1] * (x.dim() - 2))).to(x.dtype)
        full = full * mask                               # nothing past a round's end
        writes[name] = full
        means[name] = full.sum(0) / counts.clamp(min=1).view(-1, *([1] * (x.dim() - 2))).to(x.dtype)
        role_means[name] = {role: full[[i for i, _ in where], [p for _, p in where]].mean(0)
                            for role, where in slots.items()}
    label = f"{n} rounds of the {corpus_name} corpus drawn with seed {seed}"
    ref = Reference(label, rounds, counts, means, writes, roles, role_means, slots, corpus.roles)
    _REFERENCES[key] = ref
    return ref


_ROLE_VALUES: dict = {}      # the last few batches' role-matched replacements (a survey asks once per switch)


def _role_values(ref: Reference, tokens: list[list[str]], width: int, kind: str, seed: int) -> dict[str, torch.Tensor]:
    """Role-matched replacements [prompt, width, ...] for each write: at each position of each prompt,
    the mean over the reference positions of that token's role (mean), or the write at one of them drawn
    with the seeded stream, prompt by prompt and position by position (resample). A role the reference
    never shows takes the position-matched value; positions past a prompt's end take zero."""
    key = (id(ref), tuple(map(tuple, tokens)), width, kind, seed if kind == "resample" else None)
    if key in _ROLE_VALUES:
        return _ROLE_VALUES[key]
    rolls = Rolls(seed)
    roles = sorted(ref.role_slots)
    index = {role: i for i, role in enumerate(roles)}
    # Where each (prompt, position) takes its value from: a role's mean, a reference (round, position), or
    # the position-matched mean (a role the reference never shows).
    b_role, p_role, r_role = [], [], []
    b_slot, p_slot, rounds, places = [], [], [], []
    b_pos, p_pos = [], []
    for b, toks in enumerate(tokens):
        for p, role in enumerate(ref.role_of(list(toks))):
            where = ref.role_slots.get(role)
            if not where:
                require(p < ref.longest, say("reference_too_short", kind=kind, longest=ref.longest, n=p + 1))
                b_pos.append(b), p_pos.append(p)
            elif kind == "mean":
                b_role.append(b), p_role.append(p), r_role.append(index[role])
            else:
                r, q = where[int(rolls.next() * len(where))]
                b_slot.append(b), p_slot.append(p), rounds.append(r), places.append(q)
    out = {}
    for name, full in ref.writes.items():
        v = torch.zeros((len(tokens), width) + tuple(full.shape[2:]), dtype=full.dtype)
        if b_role:
            stacked = torch.stack([ref.role_means[name][role] for role in roles])
            v[b_role, p_role] = stacked[r_role]
        if b_slot:
            v[b_slot, p_slot] = full[rounds, places]
        if b_pos:
            v[b_pos, p_pos] = ref.means[name][p_pos]
        out[name] = v
    if len(_ROLE_VALUES) > 8:
        _ROLE_VALUES.pop(next(iter(_ROLE_VALUES)))
    _ROLE_VALUES[key] = out
    return out


def ablation_hooks(lm, heads=(), mlps=(), kind: str = "zero", lengths=None, reference: Reference | None = None,
                   seed: int = 0, match: str = "role", tokens=None) -> list:
    """Hooks that switch the listed heads and MLPs off, the `kind` way, for a prompt (or a right-padded
    batch of prompts) of `lengths` tokens each (needed by mean and resample ablation): zero writes
    nothing; mean writes the reference distribution's average; resample writes what a reference
    position drawn with `seed` wrote. `match` says which reference positions stand for a prompt's
    position: those of the same `role` (the default: needs the prompts' `tokens`, one list of token
    strings per prompt) or the same `position` (see the module's docstring)."""
    cfg = lm.model.cfg
    require(kind in KINDS, say("ablation_kind", kind=repr(kind), kinds=", ".join(KINDS)))
    require(match in MATCHES, f"a reference is matched by one of: {', '.join(MATCHES)}; got {match!r}")
    if kind == "zero":
        return zero_hooks(cfg, heads, mlps)
    heads, mlps = check_heads(heads, cfg), check_mlps(mlps, cfg)
    ref = reference_set(lm) if reference is None else reference
    if tokens is not None:
        lengths = [len(t) for t in tokens]
    lengths = [int(n) for n in lengths]
    longest = max(lengths)
    if match == "role" and ref.role_of is not None:
        require(tokens is not None, "role-matched mean and resample ablation need the prompts' tokens")
        values = _role_values(ref, [list(t) for t in tokens], longest, kind, seed)
        if len(lengths) == 1:
            values = {name: v[0] for name, v in values.items()}
    else:
        if longest > ref.longest:
            raise CourseError(say("reference_too_short", kind=kind, longest=ref.longest, n=longest))
        if kind == "mean":
            values = {name: ref.means[name][:longest] for name in ref.means}
        else:
            picks = resample_picks(ref, lengths, seed)
            values = {name: ref.writes[name][picks, :longest] for name in ref.writes}
            if len(lengths) == 1:
                values = {name: v[0] for name, v in values.items()}

    def of(name):
        return lambda x: values[name].to(x.dtype).expand_as(x)

    per_layer: dict[int, list[int]] = {}
    for layer, head in heads:
        per_layer.setdefault(layer, []).append(head)
    hooks = [(f"blocks.{layer}.attn.head_out", replace_heads(hs, of(f"blocks.{layer}.attn.head_out")))
             for layer, hs in per_layer.items()]
    hooks += [(f"blocks.{layer}.mlp_out", (lambda v: lambda x, name: v(x))(of(f"blocks.{layer}.mlp_out")))
              for layer in mlps]
    return hooks


def resample_picks(ref: Reference, lengths, seed: int = 0) -> list[int]:
    """For each prompt length, the reference round resample ablation takes its writes from: the n-th
    number of the seeded stream the die rolls use (`readout.Rolls`, which the page repeats) picks
    among the rounds at least that long, in their order."""
    rolls = Rolls(seed)
    picks = []
    for n in lengths:
        candidates = [i for i, r in enumerate(ref.rounds) if len(r) >= n]
        picks.append(candidates[int(rolls.next() * len(candidates))])
    return picks


def ablated_logits(lm, prompts, heads=(), mlps=(), kind: str = "zero", reference: Reference | None = None,
                   seed: int = 0, match: str = "role") -> torch.Tensor:
    """The logits for the token after each prompt, [prompt, vocab] (double precision), with the listed
    heads ((layer, head) pairs) and MLPs (layers) switched off the `kind` way (see `ablation_hooks`),
    in one right-padded batch (a causal model's last real position never sees the padding)."""
    texts = [getattr(p, "text", p) for p in prompts]
    encoded = [lm.encode(t) for t in texts]
    require(len(encoded) > 0, "give at least one prompt")
    width = max(len(ids) for ids in encoded)
    pad = lm.vocab.id("<PAD>") if "<PAD>" in lm.vocab else 0
    batch = torch.tensor([ids + [pad] * (width - len(ids)) for ids in encoded])
    if match == "role" and kind != "zero":
        hooks = ablation_hooks(lm, heads, mlps, kind, None, reference, seed, match,
                               [lm.vocab.decode(ids) for ids in encoded])
    else:
        hooks = ablation_hooks(lm, heads, mlps, kind, [width] * len(encoded) if kind == "mean" else
                               [len(ids) for ids in encoded], reference, seed, "position")
    with torch.no_grad():
        logits = lm.model.run_with_hooks(batch, fwd_hooks=hooks)
    return logits[torch.arange(len(encoded)), torch.tensor([len(ids) - 1 for ids in encoded])].double()


@dataclass(frozen=True)
class AblationView:
    tokens: list[str]
    off: tuple[Head, ...]
    page: list[tuple[str, float]]           # the best next tokens, best first
    patterns: dict[Head, list[list[float]]]  # every head's pattern [query, key] (ablated heads included:
                                             # they still look, they just write something else)
    track: str
    track_prob: float
    track_prob_intact: float
    mlps_off: tuple[int, ...] = ()
    kind: str = "zero"


def ablation_view(lm, prompt: str, off: Iterable[Head] = (), track: str | None = None, k: int = 8,
                  mlps: Iterable[int] = (), kind: str = "zero", seed: int = 0, match: str = "role") -> AblationView:
    """What the ablation explorer shows for one prompt, some heads (and MLPs) switched off the `kind` way."""
    ids = lm.encode(prompt)
    off = tuple(sorted(set(off)))
    mlps = tuple(sorted(set(mlps)))
    intact = softmax(prompt_logits(lm, prompt))
    hooks = ablation_hooks(lm, off, mlps, kind, [len(ids)], seed=seed, match=match,
                           tokens=[lm.vocab.decode(ids)] if match == "role" else None) if (off or mlps) else []
    logits, cache = lm.model.run_with_cache(ids, fwd_hooks=hooks)
    probs = softmax(logits[-1].double())
    track_id = int(torch.argmax(intact)) if not track else lm.vocab.id(track)
    order = torch.argsort(probs, descending=True, stable=True)[:k].tolist()
    patterns = {(layer, h): cache[f"blocks.{layer}.attn.pattern"][h].tolist() for layer, h in all_heads(lm.model)}
    return AblationView(lm.vocab.decode(ids), off, [(lm.vocab.tokens[i], float(probs[i])) for i in order], patterns,
                        lm.vocab.tokens[track_id], float(probs[track_id]), float(intact[track_id]), mlps, kind)


def head_effects(lm, prompt: str, token: str, pairs: bool = False) -> dict[tuple[Head, ...], float]:
    """P(token) after `prompt` with each head (and, if `pairs`, each pair of heads) switched off."""
    heads = all_heads(lm.model)
    groups = [()] + [(h,) for h in heads] + (list(combinations(heads, 2)) if pairs else [])
    return {group: token_prob(lm, prompt, token, ablate=group) for group in groups}


def zero_W_O(model):
    """A copy of `model` with every head's output matrix set to zero (method 2 of note 1, appendix A)."""
    clone = copy.deepcopy(model)
    with torch.no_grad():
        for block in clone.blocks:
            block.attn.W_O.zero_()
    return clone


def without_attention(lm, prompt: str, other_prefix: str) -> dict[str, float]:
    """Three ways to look at a model with attention switched off, on the last position of `prompt`:

    - `ablate_vs_zero_W_O`: the largest logit difference between ablating every head and zeroing W_O;
    - `prefix_effect_off`: with attention off, how much the logits change when the tokens before the
      last one are replaced by `other_prefix` (same length): zero, because positions no longer meet;
    - `prefix_effect_on`: the same change with attention on, for contrast.
    """
    ids = lm.encode(prompt)
    alt = lm.encode(other_prefix)
    require(len(alt) == len(ids) - 1, "the other prefix must have one token fewer than the prompt")
    alt = alt + ids[-1:]
    heads = all_heads(lm.model)
    with torch.no_grad():
        off = lm.model(ids, ablate=heads)[-1]
        zeroed = zero_W_O(lm.model)(ids)[-1]
        off_alt = lm.model(alt, ablate=heads)[-1]
        on, on_alt = lm.model(ids)[-1], lm.model(alt)[-1]
    return {"ablate_vs_zero_W_O": float((off - zeroed).abs().max()),
            "prefix_effect_off": float((off - off_alt).abs().max()),
            "prefix_effect_on": float((on - on_alt).abs().max())}


def context_blindness(lm, prompts, seed: int = 0) -> dict[str, float]:
    """`without_attention` over many prompts, each against a random context: every token between
    the first (<BOS>) and the last is replaced by a token drawn at random from the vocabulary.
    Returns the largest of each of the three figures over all prompts, and how many were compared."""
    rng = random.Random(seed)
    words = [t for t in lm.vocab.tokens if t != "<PAD>"]
    worst = {"ablate_vs_zero_W_O": 0.0, "prefix_effect_off": 0.0, "prefix_effect_on": 0.0}
    for prompt in prompts:
        text = getattr(prompt, "text", prompt)
        tokens = text.split()
        other = " ".join(tokens[:1] + [rng.choice(words) for _ in tokens[1:-1]])
        for key, value in without_attention(lm, text, other).items():
            worst[key] = max(worst[key], value)
    worst["prompts"] = len(prompts)
    return worst
