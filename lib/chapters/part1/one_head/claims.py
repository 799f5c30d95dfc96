"""The claims of the chapter `chapters/part1/one-head.md`, each with its measurement.

The worked head is fixed weights: its claims say `seeded=False`.
"""
from __future__ import annotations

import functools

from lib.analysis.positions import order_test
from lib.claims.registry import NO_RUN
from lib.claims.words import Q
from lib.claims.registry import claim as register
from lib.content.worked_examples import cat_sat, echo_count

# Measured with torch on one thread (the chapter's models are tiny: see `lib.claims.registry.claim`).
claim = functools.partial(register, one_thread=True)


@functools.lru_cache(maxsize=1)
def _cat_sat():
    ex = cat_sat()
    _, cache = ex.model.run_with_cache(ex.tokens)
    return ex, cache


@claim("one-head.sat-reads-the", "one-head",
       "To make the output for *sat*, the head takes {the:.3f} of *the*, {cat:.3f} of *cat* and {sat:.3f} of "
       "itself: more from *the* than from *cat*",
       words={"more from *the* than from *cat*": Q("the") > Q("cat")}, seeded=False,
       note="the worked head's pattern row for sat (the source note's printed row has it the other way)",
       scope=NO_RUN)
def _sat_row(seed):
    _, cache = _cat_sat()
    row = cache["blocks.0.attn.pattern"][0, 2].double().numpy()
    return {"the": float(row[0]), "cat": float(row[1]), "sat": float(row[2])}


@claim("one-head.echo", "one-head",
       "Put each of the {vocab:.0f} words after *the cat* in turn: the word just read comes first for {echo:.0f} "
       "of them, at least half, where a blind guess would manage one",
       words={"at least half": Q("echo") >= Q("vocab") / 2}, seeded=False,
       note="the tied worked model's top word is the word it just read for at least half the vocabulary",
       scope=NO_RUN)
def _echo(seed):
    ex, _ = _cat_sat()
    echo, vocab = echo_count(ex)
    return {"echo": echo, "vocab": vocab}


@claim("one-head.order-blind", "one-head",
       "In the other order, *cat the sat*, the head's write at *sat* changes by {write_text} at most, its logits "
       "by {logits_text}: the output does not move",
       words={"changes by {write_text} at most, its logits by {logits_text}: the output does not move":
              (Q("write") < 1e-5, Q("logits") < 1e-5)}, seeded=False,
       note="one head without positions: the last position's write does not depend on the order of the others",
       scope=NO_RUN)
def _order_blind(seed):
    ex, _ = _cat_sat()
    change = order_test(ex.model, [ex.tokens], shuffles=3, stages=("blocks.0.attn_out", "logits"), keep_first=False)
    write, logits = change.largest["blocks.0.attn_out"], change.largest["logits"]
    return {"shuffles": change.shuffles, "write": write, "logits": logits,
            "write_text": "exactly 0" if write == 0 else f"{write:.0e}",
            "logits_text": "exactly 0" if logits == 0 else f"{logits:.0e}"}
