"""Generation, token by token, with or without the KV cache.

Without the cache every new token reruns the whole prompt. With it, the first pass (prefill)
stores every position's keys and values, and each later pass feeds only the newest token: its
query meets the stored keys, and its own key and value join the store. Both paths produce the
same logits (a test holds them to 1e-5) and therefore, with one seed, the same tokens.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

import torch

from lib.messages import say
from lib.errors import require
from lib.model.transformer import Head, KVCache, Transformer
from lib.model.decoding import apply, processors_for
from lib.model.readout import Rolls, check_seed, check_temperature, check_top_k, check_top_p, greedy, sample, softmax



@dataclass
class Generation:
    tokens: list[int]
    new_tokens: list[int] = field(default_factory=list)
    step_logits: list[torch.Tensor] = field(default_factory=list)
    kv_bytes: int = 0


def generate(model: Transformer, prompt: Iterable[int], max_new_tokens: int, *, use_cache: bool = True,
             temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
             do_sample: bool = False, seed: int = 0, stop: Iterable[int] = (),
             ablate: Iterable[Head] = (), processor: Callable[[list[int], torch.Tensor], torch.Tensor] | None = None,
             min_p: float | None = None, repetition_penalty: float | None = None) -> Generation:
    """Extend `prompt` by up to `max_new_tokens`, stopping early at any token in `stop`.

    Greedy unless `do_sample`; sampling is seeded, so a given seed draws the same round: step n
    rolls the n-th number of the seed's stream (`lib.model.readout.Rolls`, the website's too).
    `processor(tokens so far, logits) -> logits` rewrites each step's logits before the read-out picks
    (Hugging Face's logits processors: a ban is a logit of minus infinity); `step_logits` keeps the model's own.
    `min_p` and `repetition_penalty` add the processors of `lib.model.decoding` (the penalty first, `processor`
    next, min-p at the temperature last).
    """
    tokens = [int(t) for t in prompt]
    require(len(tokens) >= 1, say("empty_ids"))
    require(max_new_tokens >= 0, f"max_new_tokens must be 0 or more, got {max_new_tokens}")
    check_temperature(temperature), check_top_k(top_k), check_top_p(top_p)
    processor = processors_for(temperature, min_p, repetition_penalty, processor)
    max_new_tokens = min(max_new_tokens, model.cfg.n_ctx - len(tokens))
    require(len(tokens) <= model.cfg.n_ctx,
            say("context_holds", n=len(tokens), n_ctx=model.cfg.n_ctx))
    stop = set(int(s) for s in stop)
    rolls = Rolls(seed)
    out = Generation(list(tokens))
    kv: KVCache | None = None
    feed = tokens
    for _ in range(max_new_tokens):
        if use_cache:
            logits, kv = model.forward_with_kv(feed, kv, ablate=ablate)
        else:
            with torch.no_grad():
                logits = model(out.tokens, ablate=ablate)
        last = logits[-1]
        out.step_logits.append(last)
        if processor is not None:
            last = apply(processor, list(out.tokens), last)
        nxt = (sample(last, temperature, top_k, top_p, generator=rolls) if do_sample else greedy(last))
        out.tokens.append(nxt)
        out.new_tokens.append(nxt)
        feed = [nxt]
        if nxt in stop:
            break
    out.kv_bytes = kv.n_bytes() if kv is not None else 0
    return out


def sample_many(model: Transformer, prompt: Iterable[int], n: int, max_new_tokens: int, *, seed: int = 0,
                temperature: float = 1.0, stop: int | None = None) -> list[list[int]]:
    """`n` seeded samples from one prompt, drawn side by side as one batch (with the KV cache).

    Each returned sequence ends at its first `stop` token (included) or after `max_new_tokens`.
    """
    temperature = check_temperature(temperature)
    prompt = [int(t) for t in prompt]
    require(n >= 1, f"n must be at least 1, got {n}")
    max_new_tokens = min(max_new_tokens, model.cfg.n_ctx - len(prompt))
    gen = torch.Generator().manual_seed(check_seed(seed))
    batch = torch.tensor([prompt] * n)
    rows = batch.clone()
    logits, kv = model.forward_with_kv(batch)
    for _ in range(max_new_tokens):
        probs = softmax(logits[:, -1], temperature)
        nxt = torch.multinomial(probs.float(), 1, generator=gen)
        rows = torch.cat([rows, nxt], dim=1)
        if stop is not None and bool((rows[:, len(prompt):] == stop).any(1).all()):
            break
        logits, kv = model.forward_with_kv(nxt, kv)
    out = []
    for row in rows.tolist():
        new = row[len(prompt):]
        if stop is not None and stop in new:
            new = new[:new.index(stop) + 1]
        out.append(prompt + new)
    return out
