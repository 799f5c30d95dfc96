"""Activation patching: which component, at which position, carries what makes two prompts differ?

Two prompts of equal length: a clean one (`<BOS> Pietro chiama 3 <SEP> 3 chiama Pietro capo <SEP>
Pietro chiama Paolo`, the model says Tarso) and a corrupted one, a legal round of the game of the same
length after which the rules fix another answer (`... Pietro chiama Paolo Tarso <SEP> Paolo chiama 3
<SEP> 3 chiama Paolo`: a numbered player calls Paolo, the model says vice;
`lib.content.corruptions.legal_corruptions` builds them). The question is measured on one number, the
logit difference between a target token and a rival at the last position. Two directions:

- *denoising* (the default): run the corrupted prompt again with one component's activation at one
  position taken from the clean run (a hook, `lib.model.hooks`), and see how much of the clean
  difference comes back: recovered = (patched - corrupted) / (clean - corrupted). It finds what is
  *sufficient* to restore the answer.
- *noising*: run the clean prompt with one activation taken from the corrupted run, and see how much
  of the difference goes: lost = (clean - patched) / (clean - corrupted). It finds what is *necessary*.

1 means that activation alone carries the whole difference between the runs; 0, that it carries none
of it (a negative value: it pushes the other way). A fraction is a share of `clean_diff -
corrupted_diff`, so it means little when that difference barely moves (`SMALL_MOVE`), and what it
measures is muddied when the corrupted prompt is one the game never makes: `patching_warnings` says so
in one line each (`python -m lib patch` prints them). `swap_players` builds the old kind of
corruption, two players exchanged everywhere, which is usually *not* a legal round (a number opens, or
earns `capo`): it is kept, labelled, for comparison.

The components: every head's write (`blocks.L.attn.head_out`, one head's slice), every MLP's output
(`blocks.L.mlp_out`), and the residual stream itself before each block and after the last
(`blocks.L.resid_pre`, `resid_final`), each at every position. (TransformerLens and ARENA patch a
head's `z`; its write is `z @ W_O`, so patching either gives the same logits.)

All the patched runs go through the model at once, as one batch, in double precision (a copy of the
float32 weights widened exactly), so the fractions do not depend on float32 rounding in the
difference of two nearly equal numbers.
"""
from __future__ import annotations

import copy
import weakref
from dataclasses import dataclass

import numpy as np
import torch

from lib.messages import say
from lib.errors import CourseError, require
from lib.model.hooks import Hooks, Recorder
from lib.model.transformer import one_thread
from lib.analysis.ablation import head_name
from lib.content.corruptions import corruption_problems
from lib.content.prompt_sets import places

# The logit difference must move between the runs by more than this for a fraction of it to be computed.
MIN_CHANGE = 1e-6
# Below this move of the logit difference (in nats: the odds of target over rival change by less than a
# factor e), a fraction of it is a share of almost nothing, and the warnings say so.
SMALL_MOVE = 1.0
DIRECTIONS = ("denoise", "noise")

# Hook points shaped [head, query, key]; the others put the position first.
HEAD_FIRST = ("attn.qk", "attn.scores", "attn.pattern")

_DOUBLES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def double_model(model):
    """The model with its weights widened to float64 (exactly: every float32 is a double), kept per model.
    A model that says `widen_for_patching = False` (SmolLM2: 540 MB of weights, which widened would
    take its chapters past their memory budget) is patched as it is, in float32."""
    if not getattr(model, "widen_for_patching", True):
        return model
    twin = _DOUBLES.get(model)
    if twin is None:
        twin = copy.deepcopy(model).double()
        twin.requires_grad_(False)
        twin.eval()
        _DOUBLES[model] = twin
    return twin


def resid_stages(cfg) -> list[str]:
    """The residual stream's patchable stages: before each block, and after the last."""
    return [f"blocks.{layer}.resid_pre" for layer in range(cfg.n_layers)] + ["resid_final"]


@dataclass(frozen=True)
class Patching:
    clean: list[str]
    corrupted: list[str]
    target: str
    against: str
    clean_diff: float        # logit(target) - logit(against) after the clean prompt
    corrupted_diff: float    # the same after the corrupted prompt
    heads: np.ndarray        # recovered fraction [layer, head, position]: one head's write patched
    mlps: np.ndarray         # [layer, position]: one MLP's output patched (no rows if the model has none)
    resid: np.ndarray        # [stage, position]: the residual stream patched (stages: `resid_stages`)
    stages: list[str]
    direction: str = "denoise"   # denoise: fractions recovered; noise: fractions lost
    warnings: tuple[str, ...] = ()   # `patching_warnings`: what makes the fractions mean less

    @property
    def moved(self) -> float:
        """The effect size the fractions share out: how far the logit difference moves between the runs."""
        return self.clean_diff - self.corrupted_diff

    def head_cells(self) -> list[dict]:
        L, H, T = self.heads.shape
        return [{"head": head_name((layer, h)), "position": p, "recovered": float(self.heads[layer, h, p])}
                for layer in range(L) for h in range(H) for p in range(T)]

    def mlp_cells(self) -> list[dict]:
        return [{"mlp": layer, "position": p, "recovered": float(self.mlps[layer, p])}
                for layer in range(self.mlps.shape[0]) for p in range(self.mlps.shape[1])]

    def resid_cells(self) -> list[dict]:
        return [{"stage": s, "position": p, "recovered": float(self.resid[i, p])}
                for i, s in enumerate(self.stages) for p in range(self.resid.shape[1])]


NAMED = ("Pietro", "Paolo")
NUMBERS = tuple(str(n) for n in range(1, 9))


def swap_players(prompt: str, a: str | None = None, b: str | None = None) -> str:
    """The prompt with two players' names exchanged everywhere: a corrupted prompt of the same length,
    for patching, but usually NOT a legal round (a number opens the round, or earns `capo`): label it so
    wherever it is shown, and prefer `lib.content.corruptions.legal_corruptions`. By default the last call's caller swaps with a player of the other kind (Pietro or
    Paolo for a number, a number for Pietro or Paolo; the first in the order Pietro, Paolo, 1 to 8
    that is not the callee), so the last call keeps its callee and changes its caller:
    `<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo` (vice) becomes `<BOS> 4 chiama Pietro <SEP> Pietro
    chiama Paolo`, which no round can begin with (the model still says vice on it)."""
    tokens = prompt.split() if isinstance(prompt, str) else list(prompt)
    if a is None and b is None:
        where = places(tokens)
        a, callee = tokens[where["the caller"]], tokens[where["the callee"]]
        require(a in NAMED + NUMBERS, say("not_a_player", caller=a))
        b = next(p for p in (NUMBERS if a in NAMED else NAMED) if p != callee)
    require(a is not None and b is not None, "name both players to swap, or neither (then the last call's "
                                             "caller swaps with a player of the other kind)")
    require(a != b, f"swapping {a} with itself changes nothing: name two different players")
    require(a in tokens or b in tokens, f"neither {a} nor {b} is in the prompt, so swapping them changes nothing")
    return " ".join(b if t == a else a if t == b else t for t in tokens)


def _diff(logits: torch.Tensor, target: int, against: int) -> torch.Tensor:
    return logits[..., -1, target] - logits[..., -1, against]


def patching_warnings(lm, clean: list[str], corrupted: list[str], clean_diff: float, corrupted_diff: float,
                      tops: tuple[str, str] | None = None) -> tuple[str, ...]:
    """One line for each thing that makes a patching's fractions mean less: for the calling game, a
    corrupted (or clean) prompt that is not a legal round, or one after which the rules give the same
    answer (`lib.content.corruptions.corruption_problems`); for any model, the model's first choice the
    same after both prompts (`tops`), and a logit difference that moves by less than `SMALL_MOVE`."""
    out = []
    if getattr(lm, "meta", None) and lm.meta.get("corpus") == "calling-game":
        out += corruption_problems(clean, corrupted)
    if tops is not None and tops[0] == tops[1]:
        out.append(say("patch_same_top", token=tops[0]))
    moved = clean_diff - corrupted_diff
    if abs(moved) < SMALL_MOVE:
        out.append(say("patch_small_move", moved=f"{moved:+.3f}", least=f"{SMALL_MOVE:g}"))
    return tuple(out)


@dataclass(frozen=True)
class _Runs:
    """The two runs a patching compares, and the number it measures on them."""
    model: object
    clean: list[int]
    corrupted: list[int]
    clean_cache: dict
    corrupted_cache: dict
    target: int
    against: int
    clean_diff: float
    corrupted_diff: float
    tops: tuple[int, int]          # each run's top token


def _runs(lm, clean: str, corrupted: str, target: str | None, against: str | None, direction: str) -> _Runs:
    """Both prompts run once with their caches, the target and the rival chosen (by default the clean run's top
    token and the corrupted run's), and the logit difference after each, checked."""
    require(direction in DIRECTIONS, f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    model = double_model(lm.model)
    a, b = lm.encode(clean), lm.encode(corrupted)
    require(len(a) == len(b), say("patch_lengths", clean=len(a), corrupted=len(b)))
    clean_logits, cache = model.run_with_cache(a)
    corrupted_logits, corrupted_cache = model.run_with_cache(b)
    t = lm.vocab.id(target) if target else int(clean_logits[-1].argmax())
    u = lm.vocab.id(against) if against else int(corrupted_logits[-1].argmax())
    if t == u:
        said = ("the clean run's top token and the corrupted run's are both" if not (target or against)
                else "the target and the rival are both")
        raise CourseError(say("patch_same_token", said=said, token=repr(lm.vocab.tokens[t])))
    clean_diff, corrupted_diff = float(_diff(clean_logits, t, u)), float(_diff(corrupted_logits, t, u))
    require(abs(clean_diff - corrupted_diff) > MIN_CHANGE,
            say("patch_no_change", target=lm.vocab.tokens[t], against=lm.vocab.tokens[u], diff=f"{clean_diff:.6g}"))
    return _Runs(model, a, b, cache, corrupted_cache, t, u, clean_diff, corrupted_diff,
                 (int(clean_logits[-1].argmax()), int(corrupted_logits[-1].argmax())))


def _fraction(r: _Runs, direction: str):
    def fraction(last_logits):
        d = last_logits[:, r.target] - last_logits[:, r.against]
        if direction == "denoise":
            return ((d - r.corrupted_diff) / (r.clean_diff - r.corrupted_diff)).numpy()
        return ((r.clean_diff - d) / (r.clean_diff - r.corrupted_diff)).numpy()
    return fraction


def _patching(lm, r: _Runs, heads, mlps, resid, stages, direction) -> Patching:
    clean_tokens, corrupted_tokens = lm.vocab.decode(r.clean), lm.vocab.decode(r.corrupted)
    return Patching(clean_tokens, corrupted_tokens, lm.vocab.tokens[r.target], lm.vocab.tokens[r.against], r.clean_diff,
                    r.corrupted_diff, heads, mlps, resid, stages, direction,
                    patching_warnings(lm, clean_tokens, corrupted_tokens, r.clean_diff, r.corrupted_diff,
                                      (lm.vocab.tokens[r.tops[0]], lm.vocab.tokens[r.tops[1]])))


def patch(lm, clean: str, corrupted: str, target: str | None = None, against: str | None = None,
          direction: str = "denoise") -> Patching:
    """Every head's write, every MLP's output and the residual stream, at every position, patched one
    at a time between the two runs, and the fraction of the logit difference (target minus against, at
    the last position) each moves: `denoise` patches the clean run's activation into the corrupted run
    (the fraction brought back), `noise` the corrupted run's into the clean run (the fraction lost). By
    default the target is the clean run's top token and the rival the corrupted run's."""
    r = _runs(lm, clean, corrupted, target, against, direction)
    model, cfg = r.model, r.model.cfg
    T, L, H = len(r.clean), cfg.n_layers, cfg.n_heads
    stages = resid_stages(cfg)
    heads, mlps, resid = np.zeros((L, H, T)), np.zeros((L if cfg.has_mlp else 0, T)), np.zeros((len(stages), T))
    # Denoising runs the corrupted prompt with clean activations; noising the clean one with corrupted ones.
    base, source = (r.corrupted_cache, r.clean_cache) if direction == "denoise" else (r.clean_cache, r.corrupted_cache)
    fraction = _fraction(r, direction)
    # A patch in block L leaves blocks 0 to L-1 as they were in the base run: start there.
    for layer in range(L):
        runs = [(f"blocks.{layer}.attn.head_out", h, p) for h in range(H) for p in range(T)]
        runs += [(f"blocks.{layer}.mlp_out", None, p) for p in range(T)] if cfg.has_mlp else []
        runs += [(f"blocks.{layer}.resid_pre", None, p) for p in range(T)]
        got = fraction(run_patches(model, base, source, runs, layer))
        heads[layer] = got[:H * T].reshape(H, T)
        if cfg.has_mlp:
            mlps[layer] = got[H * T:(H + 1) * T]
        resid[layer] = got[-T:]
    resid[L] = fraction(run_patches(model, base, source, [("resid_final", None, p) for p in range(T)], L))
    return _patching(lm, r, heads, mlps, resid, stages, direction)


def patch_stream(lm, clean: str, corrupted: str, target: str | None = None, against: str | None = None,
                 direction: str = "denoise") -> Patching:
    """The residual stream alone, patched at every stage (before each block, and after the last) and every
    position, as `patch` patches it (its `heads` and `mlps` left empty): what a large model can afford, one
    pass per cell instead of one per head and MLP as well. The page's twin (lib/explorers/js/smollm2/ops.js,
    `patchStream`) computes the same grid."""
    r = _runs(lm, clean, corrupted, target, against, direction)
    model, cfg = r.model, r.model.cfg
    T, L = len(r.clean), cfg.n_layers
    stages = resid_stages(cfg)
    fraction = _fraction(r, direction)
    base, source = (r.corrupted_cache, r.clean_cache) if direction == "denoise" else (r.clean_cache, r.corrupted_cache)
    # Before the first position where the prompts differ, both runs hold the same stream (attention reads only
    # what comes before): a patch there changes nothing, and its cell is 0 in either direction.
    first = next((p for p in range(T) if r.clean[p] != r.corrupted[p]), T)
    resid = np.zeros((len(stages), T))
    if first < T:
        for layer in range(L):
            runs = [(f"blocks.{layer}.resid_pre", None, p) for p in range(first, T)]
            resid[layer, first:] = fraction(run_patches(model, base, source, runs, layer))
        resid[L, first:] = fraction(run_patches(model, base, source, [("resid_final", None, p) for p in range(first, T)], L))
    return _patching(lm, r, np.zeros((L, cfg.n_heads, 0)), np.zeros((0, T)), resid, stages, direction)


def patch_hooks(runs: list[tuple[str, int | None, int]], source, single: bool = False) -> list:
    """Hooks for a batch whose row i is a run with activation runs[i] = (hook point, head or None,
    position) taken from `source` (a cache of one prompt: name -> tensor without a batch axis).
    `single`: one run of one prompt, no batch axis."""
    by_name: dict[str, tuple[list[int], list[int | None], list[int]]] = {}
    for row, (name, head, position) in enumerate(runs):
        rows, heads, positions = by_name.setdefault(name, ([], [], []))
        rows.append(row)
        heads.append(head)
        positions.append(position)

    def make(name, rows, heads, positions):
        value = source[name]
        if name.endswith(HEAD_FIRST):
            # [head, query, key]: a position is a query row; without a head, every head's row.
            if heads[0] is None:
                n = value.shape[0]
                rows, positions = [r for r in rows for _ in range(n)], [p for p in positions for _ in range(n)]
                heads = list(range(n)) * (len(rows) // n)
            where = (torch.tensor(heads), torch.tensor(positions))
        elif heads[0] is None:
            where = (torch.tensor(positions),)
        else:
            where = (torch.tensor(positions), torch.tensor(heads))
        target = where if single else (torch.tensor(rows), *where)

        def hook(x, _):
            out = x.clone()
            out[target] = value[where].to(x.dtype)
            return out
        return hook
    return [(name, make(name, *spec)) for name, spec in by_name.items()]


def run_patches(model, start, source, runs: list[tuple[str, int | None, int]], layer: int = 0) -> torch.Tensor:
    """The last position's logits [run, vocab] of one prompt run once per patch in `runs` (see
    `patch_hooks`), every patch at or after block `layer`: the run starts from `start` (the cache of
    the prompt's own run), at the residual stream before that block, and goes through the rest with
    the patching hooks at their hook points (`lib.model.hooks`). On one thread, as the model's own forward pass
    runs (SmolLM2's, lib.model.llama): a second thread of the 2-core machine mostly waits, and on 5 tokens of
    SmolLM2 the whole command took over 80 s of processor time on two threads, 13 to 20 s on one, loading included."""
    cfg = model.cfg
    name = f"blocks.{layer}.resid_pre" if layer < cfg.n_layers else "resid_final"
    resid = start[name].unsqueeze(0).expand(len(runs), -1, -1)
    keep = Recorder(hooks=Hooks(patch_hooks(runs, source), cfg))
    with torch.no_grad(), one_thread():
        if layer == cfg.n_layers:
            resid = keep("resid_final", resid)
        for i in range(layer, cfg.n_layers):
            resid, _ = model.blocks[i](resid, keep.scope(f"blocks.{i}"))
        last = resid[:, -1]
        if layer < cfg.n_layers:
            last = keep("resid_final", resid)[:, -1]
        if model.ln_final is not None:
            last = model.ln_final(last)
        return last @ model.W_U + model.b_U


def patch_one(model, tokens: list[int], source, name: str, position: int, head: int | None = None) -> torch.Tensor:
    """The logits [position, vocab] of `tokens` with one activation (one head's slice if `head`) at one
    position taken from `source`: the results page of one cell of the patching grid."""
    return model.run_with_hooks(tokens, fwd_hooks=patch_hooks([(name, head, position)], source, single=True))
