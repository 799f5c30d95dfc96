"""Decoding beyond one roll of the die: greedy's loops, beam search, min-p, a repetition penalty, and the
probability of a whole sequence.

`lib.model.generate` picks one token at a time, greedy or sampled, after an optional logits processor.
This module adds what the field uses beside it, for the course's models alike (the toy and SmolLM2):

- **processors** (`processor(tokens so far, logits) -> logits`, Hugging Face's logits processors):
  `min_p_processor` keeps only the tokens whose probability is at least `min_p` times the best one's
  (Nguyen et al. 2024); `repetition_penalty_processor` makes every token already in the text less likely
  (Keskar et al. 2019: a positive logit divided by the penalty, a negative one multiplied by it); `chain`
  runs several in order. A ban is a logit of minus infinity, as in `generate`.
- **several sequences side by side** (`Rows`): one batch through the model with the KV cache, prompts of
  different lengths padded on the left; a padded position is hidden from every query by a hook on the
  attention scores (`blocks.L.attn.scores`), so each row's logits are those of its prompt alone (rotary
  positions depend only on the distance between a query and a key; a model with a table of positions
  would read the padding's shift, so for it the prompts must be of one length).
- **`decode`**: greedy or seeded sampling of many prompts at once, with the processors above;
- **`beam_search`**: the `beams` most probable continuations found so far, extended together;
- **`token_logprobs`**: the log-probability of each token of a continuation, whose sum is the log-probability
  of the whole sequence; **`find_loop`**: whether a text ends in a stretch that repeats.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import torch

from lib.errors import require
# The knobs are checked in lib.model.knobs (without torch: the command line checks them before it loads anything).
from lib.model.knobs import (MAX_BEAMS, MAX_PENALTY, check_beams, check_length_penalty,  # noqa: F401
                             check_max_new, check_min_p, check_repetition_penalty)
from lib.model.readout import Rolls, check_seed, check_temperature, greedy, sample
from lib.model.transformer import KVCache

Processor = Callable[[list[int], torch.Tensor], torch.Tensor]

# A banned token's logit as the read-out sees it: exp of it is exactly 0.
BANNED = -1e30
# A padded key's score: low enough that its weight is exactly 0 in float32, finite so that a padded
# query (whose every key is padding) still gets a finite row.
PAD_SCORE = -1e9
# A stretch counts as a loop when it is repeated at least this many times, back to back, to the end of the
# text, and covers at least MIN_LOOP_TOKENS tokens (three line breaks in a row are not a loop).
MIN_REPEATS = 3
MIN_LOOP_TOKENS = 6


# ----------------------------------------------------------------------------- processors
def min_p_processor(min_p: float, temperature: float = 1.0) -> Processor:
    """Ban every token whose probability at `temperature` is below `min_p` times the best token's.

    The ratio of two probabilities is exp((l_i - l_best) / T), so the rule is l_i < l_best + T ln(min_p):
    the threshold moves with the page's best line. Top-k, top-p and min-p each keep a best-first set, so
    the order in which they are applied does not change which tokens survive."""
    min_p, t = check_min_p(min_p), check_temperature(temperature)
    cut = t * math.log(min_p)

    def process(tokens, logits):
        logits = torch.as_tensor(logits)
        return logits.masked_fill(logits < logits.max() + cut, float("-inf"))
    return process


def repetition_penalty_processor(penalty: float) -> Processor:
    """Every token already in the text (prompt included) made less likely: its logit divided by `penalty`
    when positive, multiplied by it when negative (Keskar et al. 2019; Hugging Face's rule)."""
    penalty = check_repetition_penalty(penalty)

    def process(tokens, logits):
        logits = torch.as_tensor(logits).clone()
        seen = torch.tensor(sorted(set(int(t) for t in tokens)), dtype=torch.long)
        if len(seen):
            x = logits[seen]
            logits[seen] = torch.where(x > 0, x / penalty, x * penalty)
        return logits
    return process


def chain(*processors: Processor | None) -> Processor | None:
    """The processors run in order (None ones left out); None when there is none."""
    chosen = [p for p in processors if p is not None]
    if not chosen:
        return None

    def process(tokens, logits):
        for p in chosen:
            logits = p(tokens, logits)
        return logits
    return process


def processors_for(temperature: float = 1.0, min_p: float | None = None,
                   repetition_penalty: float | None = None, processor: Processor | None = None) -> Processor | None:
    """The processors of the knobs, in Hugging Face's order: the penalty on the model's logits, then a
    caller's own processor, then min-p at the temperature."""
    min_p, penalty = check_min_p(min_p), check_repetition_penalty(repetition_penalty)
    return chain(repetition_penalty_processor(penalty) if penalty is not None else None, processor,
                 min_p_processor(min_p, temperature) if min_p is not None else None)


def apply(process: Processor, tokens: list[int], logits: torch.Tensor) -> torch.Tensor:
    """`process` run on one step's logits, as the read-out then takes them: a ban (minus infinity) becomes
    `BANNED`, a logit so low that its probability is exactly 0 at any temperature the read-out accepts (the
    read-out takes finite logits: an infinite one is an overflow there). One clear line if every token is banned."""
    out = torch.as_tensor(process(tokens, logits))
    banned = torch.isneginf(out)
    require(not bool(banned.all()), "the logits processor banned every token: at least one must stay allowed")
    return torch.where(banned, torch.full_like(out, BANNED), out)


# ----------------------------------------------------------------------------- several sequences side by side
class Rows:
    """Several token sequences through one model side by side, one new token per row per step, with the
    KV cache. Prompts of different lengths are padded on the left, and the padding is hidden from every
    query (the module's note)."""

    def __init__(self, model, prompts: Sequence[Sequence[int]]):
        prompts = [[int(t) for t in p] for p in prompts]
        require(len(prompts) >= 1, "give at least one prompt")
        require(all(len(p) >= 1 for p in prompts), "every prompt needs at least one token")
        width = max(len(p) for p in prompts)
        positions = getattr(model.cfg, "positions", False)
        require(not positions or all(len(p) == width for p in prompts),
                "this model reads a table of positions, so prompts decoded together must be of one length")
        self.model = model
        self.tokens = prompts
        self.pad = torch.tensor([[True] * (width - len(p)) + [False] * len(p) for p in prompts])
        batch = torch.tensor([[0] * (width - len(p)) + p for p in prompts])
        self.kv = KVCache.empty(model.cfg.n_layers)
        self.logits = self._run(batch)

    def _run(self, batch: torch.Tensor) -> torch.Tensor:
        hooks = ()
        if bool(self.pad.any()):
            hidden = self.pad

            def hide(scores, name):                       # [batch, head, query, key]
                return scores.masked_fill(hidden[:, None, None, :scores.shape[-1]], PAD_SCORE)
            hooks = [(lambda name: name.endswith(".attn.scores"), hide)]
        with torch.no_grad():
            out = self.model(batch, kv=self.kv, fwd_hooks=hooks)
        return out[:, -1].double()

    def step(self, chosen: Sequence[int], rows: Sequence[int] | None = None) -> torch.Tensor:
        """Keep the rows `rows` (every row, in order, by default: beam search reorders and repeats them, and a
        row that is done can leave), append `chosen[i]` to the i-th row kept, and return each kept row's next
        logits [row, vocab] (double). With no token chosen, only the choice of rows is made."""
        if rows is not None:
            idx = torch.tensor(list(rows), dtype=torch.long)
            self.kv.layers = [(k[idx], v[idx]) for k, v in self.kv.layers]
            self.pad = self.pad[idx]
            self.tokens = [list(self.tokens[i]) for i in rows]
            self.logits = self.logits[idx]
        if not len(chosen):
            return self.logits
        require(len(chosen) == len(self.tokens), f"give one token per row ({len(self.tokens)}), got {len(chosen)}")
        for row, t in zip(self.tokens, chosen):
            row.append(int(t))
        self.pad = torch.cat([self.pad, torch.zeros(len(chosen), 1, dtype=torch.bool)], dim=1)
        self.logits = self._run(torch.tensor([[int(t)] for t in chosen]))
        return self.logits


@dataclass
class Decoded:
    """One row of `decode`: its new tokens and, for each, the log-probability the model itself gave it
    (at temperature 1, before any processor)."""
    prompt: list[int]
    new_tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)


KNOBS = ("do_sample", "temperature", "top_k", "top_p", "min_p", "repetition_penalty", "seed", "processor",
         "max_new_tokens")


def decode(model, prompts: Sequence[Sequence[int]], max_new_tokens: int, *, do_sample: bool = False,
           temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None, min_p: float | None = None,
           repetition_penalty: float | None = None, seed: int = 0, stop: Iterable[int] = (),
           processor: Processor | None = None, per_row: Sequence[dict] | None = None) -> list[Decoded]:
    """Greedy (or, with `do_sample`, seeded sampling) continuations of several prompts at once: each row is
    what `lib.model.generate.generate` gives its prompt alone with the same knobs and seed (every row rolls
    the seed's own stream). A row stops at its first token in `stop`. `per_row` (one dict per prompt) sets
    any of the knobs (`KNOBS`) row by row, over the ones given for all."""
    max_new_tokens = check_max_new(max_new_tokens)
    common = {"do_sample": do_sample, "temperature": temperature, "top_k": top_k, "top_p": top_p, "min_p": min_p,
              "repetition_penalty": repetition_penalty, "seed": seed, "processor": processor,
              "max_new_tokens": max_new_tokens}
    per_row = [{}] * len(prompts) if per_row is None else list(per_row)
    require(len(per_row) == len(prompts), f"per_row needs one dict per prompt ({len(prompts)}), got {len(per_row)}")
    knobs = []
    for extra in per_row:
        unknown = set(extra) - set(KNOBS)
        require(not unknown, f"per_row knows the knobs {', '.join(KNOBS)}, not {', '.join(sorted(unknown))}")
        k = dict(common, **extra)
        k["temperature"], k["seed"] = check_temperature(k["temperature"]), check_seed(k["seed"])
        k["process"] = processors_for(k["temperature"], k["min_p"], k["repetition_penalty"], k["processor"])
        k["rolls"] = Rolls(k["seed"])
        k["max_new_tokens"] = check_max_new(k["max_new_tokens"])
        knobs.append(k)
    stop = {int(s) for s in stop}
    rows = Rows(model, prompts)
    room = model.cfg.n_ctx - rows.pad.shape[1]
    out = [Decoded(list(p)) for p in rows.tokens]
    live = [i for i, k in enumerate(knobs) if min(k["max_new_tokens"], room) > 0]   # rows still running, in batch order
    logits = rows.logits
    if len(live) < len(out):
        logits = rows.step([], live) if live else logits          # rows allowed no token leave at once
    while live:
        chosen, still = [], []
        own = torch.log_softmax(logits, dim=-1)
        for j, i in enumerate(live):
            d, k = out[i], knobs[i]
            last = logits[j]
            if k["process"] is not None:
                last = apply(k["process"], rows.tokens[j], last)
            t = (sample(last, k["temperature"], k["top_k"], k["top_p"], generator=k["rolls"]) if k["do_sample"]
                 else greedy(last))
            d.new_tokens.append(t)
            d.logprobs.append(float(own[j, t]))
            if t not in stop and len(d.new_tokens) < min(k["max_new_tokens"], room):
                still.append(j)
                chosen.append(t)
        if not still:
            break
        # A row that is done leaves the batch: the others go on without paying for it.
        logits = rows.step(chosen, still if len(still) < len(live) else None)
        live = [live[j] for j in still]
    return out


# ----------------------------------------------------------------------------- beam search
@dataclass(frozen=True)
class Beam:
    new_tokens: tuple[int, ...]
    logprob: float                  # the sum of the new tokens' log-probabilities (natural log)
    finished: bool                  # ended with a stop token

    def score(self, length_penalty: float = 0.0) -> float:
        """Hugging Face's ranking: the sum divided by the length to the power `length_penalty` (0: the sum
        itself, which favours short sequences; 1: the mean log-probability per token)."""
        return self.logprob / max(1, len(self.new_tokens)) ** length_penalty


def beam_search(model, prompts: Sequence[Sequence[int]], max_new_tokens: int, beams: int, *,
                stop: Iterable[int] = (), length_penalty: float = 0.0) -> list[list[Beam]]:
    """For each prompt, the `beams` best continuations found by beam search, best first.

    At every step each of the `beams` sequences kept is extended by every token; of all those, the
    `beams` with the highest total log-probability are kept (a sequence that ends in a stop token is set
    aside as finished). A prompt is done when it has `beams` finished sequences or after `max_new_tokens`
    tokens; the finished and the unfinished are then ranked by `Beam.score(length_penalty)`."""
    max_new_tokens, beams = check_max_new(max_new_tokens), check_beams(beams)
    length_penalty = check_length_penalty(length_penalty)
    stop = {int(s) for s in stop}
    n = len(prompts)
    rows = Rows(model, [p for p in prompts for _ in range(beams)])
    max_new_tokens = min(max_new_tokens, model.cfg.n_ctx - rows.pad.shape[1])
    # Per prompt: the kept sequences (their new tokens and sums); at first one, the others impossible.
    live = [[((), 0.0 if b == 0 else -math.inf) for b in range(beams)] for _ in range(n)]
    finished: list[list[Beam]] = [[] for _ in range(n)]
    logits = rows.logits
    for step in range(max_new_tokens):
        logp = torch.log_softmax(logits, dim=-1)                     # [prompt * beams, vocab]
        vocab = logp.shape[-1]
        keep_rows, keep_tokens = [], []
        for i in range(n):
            base = torch.tensor([s for _, s in live[i]], dtype=torch.float64)
            total = (base[:, None] + logp[i * beams:(i + 1) * beams]).flatten()
            best = torch.topk(total, 2 * beams)
            kept = []
            for score, flat in zip(best.values.tolist(), best.indices.tolist()):
                if score == -math.inf:
                    break
                b, t = divmod(flat, vocab)
                seq = live[i][b][0] + (t,)
                if t in stop:
                    if len(finished[i]) < beams:
                        finished[i].append(Beam(seq, score, True))
                    continue
                kept.append((i * beams + b, t, seq, score))
                if len(kept) == beams:
                    break
            while len(kept) < beams:                                 # fill with an impossible copy
                kept.append((kept[0][0], kept[0][1], kept[0][2], -math.inf) if kept else (i * beams, 0, (0,), -math.inf))
            live[i] = [(seq, score) for _, _, seq, score in kept]
            keep_rows += [r for r, _, _, _ in kept]
            keep_tokens += [t for _, t, _, _ in kept]
        if step == max_new_tokens - 1 or all(len(f) >= beams for f in finished):
            break
        logits = rows.step(keep_tokens, keep_rows)
    out = []
    for i in range(n):
        every = finished[i] + [Beam(seq, s, False) for seq, s in live[i] if s > -math.inf]
        out.append(sorted(every, key=lambda b: -b.score(length_penalty))[:beams])
    return out


# ----------------------------------------------------------------------------- a whole sequence
def token_logprobs(model, prompt: Sequence[int], continuation: Sequence[int]) -> torch.Tensor:
    """log P(each token of `continuation` | the prompt and the tokens before it), natural log, in one pass:
    their sum is the log-probability of the whole continuation."""
    prompt, continuation = [int(t) for t in prompt], [int(t) for t in continuation]
    require(len(prompt) >= 1, "the prompt needs at least one token")
    ids = prompt + continuation
    with torch.no_grad():
        logits = model(ids).double()
    logp = torch.log_softmax(logits[len(prompt) - 1:len(ids) - 1], dim=-1)
    return logp[torch.arange(len(continuation)), torch.tensor(continuation, dtype=torch.long)]


@dataclass(frozen=True)
class Loop:
    start: int          # the index (in the tokens given) where the repeating stretch begins
    period: int         # its length, in tokens

    def repeats(self, n_tokens: int) -> float:
        return (n_tokens - self.start) / self.period


def find_loop(tokens: Sequence, min_repeats: int = MIN_REPEATS, min_tokens: int = MIN_LOOP_TOKENS) -> Loop | None:
    """The stretch the text ends in that repeats, back to back, at least `min_repeats` times and over at
    least `min_tokens` tokens: the one that starts earliest (then the shortest period), or None."""
    tokens = list(tokens)
    n = len(tokens)
    best = None
    for p in range(1, n // min_repeats + 1):
        i = n - 1
        while i - p >= 0 and tokens[i] == tokens[i - p]:
            i -= 1
        start = i + 1 - p if i - p >= 0 else 0
        length = n - start
        if length >= min_repeats * p and length >= min_tokens and (best is None or start < best.start):
            best = Loop(start, p)
    return best


def distinct_n(tokens: Sequence, n: int = 2) -> float:
    """The share of a text's n-grams that are different (1: no n-gram repeats; low: a text that loops)."""
    grams = [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]
    require(len(grams) > 0, f"distinct-{n} needs at least {n} tokens")
    return len(set(grams)) / len(grams)
