"""Random settings of every explorer's controls, good and bad, and how to compare two views.

Used by the tests that hold the website's page (its model, read-out and views in JavaScript) to
the library: the same settings go to both, and the views must agree.
"""
from __future__ import annotations

import math
import random

from lib.explorers.registry import entry

TOL = 1e-5


def random_prompt(rng: random.Random, tokens: list[str], n_ctx: int) -> str:
    """Any tokens, any length up to the context, now and then a mistake a reader makes."""
    roll = rng.random()
    if roll < 0.04:
        return rng.choice(["", "   "])
    if roll < 0.08:
        return " ".join(rng.choice(tokens) for _ in range(n_ctx + rng.randint(1, 5)))
    words = ["<BOS>"] if rng.random() < 0.7 else []
    words += [rng.choice(tokens) for _ in range(rng.randint(0 if words else 1, n_ctx - len(words)))]
    if roll < 0.14:
        i = rng.randrange(len(words))
        words[i] = rng.choice([words[i].lower() + "x", words[i][:-1] or "zz", "banana!", "chiamma"])
    return " ".join(words)


def random_text(rng: random.Random, name: str, n_tokens: int, vocab_size: int) -> str:
    """A box the explorers share (lib.explorers.boxes: top-k, top-p, seed, position), good or bad.
    An explorer's own boxes are filled by the `random_text` its registration names."""
    bad = rng.random() < 0.15
    if name == "top_k":
        return rng.choice(["0", "2.5", "abc", "-3"]) if bad else rng.choice(["", str(rng.randint(1, vocab_size + 3))])
    if name == "top_p":
        return rng.choice(["1.5", "0", "x", "nan", "-0.2"]) if bad else rng.choice(["", f"{rng.uniform(0.01, 1):.3f}", "1"])
    if name == "seed":
        return rng.choice(["-1", "1e3", "seven", str(2**63)]) if bad else str(rng.choice([rng.randint(0, 50),
                                                                                         rng.randint(0, 2**63 - 1)]))
    if name == "min_p":
        return rng.choice(["1.5", "0", "x", "nan", "-0.2"]) if bad else rng.choice(["", "off", f"{rng.uniform(0.001, 1):.3f}", "1"])
    if name == "position":
        return rng.choice(["x", str(n_tokens), "-1"]) if bad else rng.choice(["", str(rng.randrange(max(n_tokens, 1)))])
    raise KeyError(name)


SHARED_BOXES = ("top_k", "top_p", "min_p", "seed", "position")


def opening_only(explorer) -> bool:
    """An explorer the website runs only with the real model loaded (lib.explorers.smollm2.live_args): without it the
    page shows the picture of its opening values and says to load the model for any other. Its page twin is held
    to the library, on any values, by tests/explorers/test_smollm2_page.py (the model run in Node)."""
    return bool(explorer.args.get("real", {}).get("opening"))


def random_number(rng: random.Random, c):
    """A "number" control's value as its box gives it (parse_number): a slider's stop, a number typed
    over the whole range the read-out takes (1e-6 to 1000), now and then text or a number it refuses."""
    roll = rng.random()
    if roll < 0.1:
        return rng.choice(["abc", "", "1,5", 0.0, -2.0, math.nan, math.inf, -math.inf, 1e-7])
    if roll < 0.55:
        return rng.choice(c.options)
    return float(f"{10 ** rng.uniform(-6, 3):.3g}")


def random_values(explorer, rng: random.Random, lm=None, labels: dict | None = None) -> dict:
    """One random setting of every control of `explorer` (`labels`: unused, kept for the callers: an
    explorer's own boxes are filled by its registration's `random_text`)."""
    tokens = lm.vocab.tokens if lm is not None else []
    n_ctx = lm.model.cfg.n_ctx if lm is not None else 0
    if opening_only(explorer):
        return explorer.defaults()
    values = {}
    for c in explorer.controls:
        if c.kind == "prompt" and c.precomputed:
            values[c.name] = rng.choice(c.options)      # what the website holds: it offers these only
        elif c.kind == "prompt":
            values[c.name] = random_prompt(rng, tokens, n_ctx)
        elif c.kind == "token":
            values[c.name] = rng.choice(["", rng.choice(tokens), rng.choice(tokens), "Tars"])
        elif c.kind == "choice":
            values[c.name] = rng.choice(c.options)
        elif c.kind == "number":
            values[c.name] = random_number(rng, c)
        elif c.kind == "toggle":
            values[c.name] = rng.random() < 0.3
        elif c.name in SHARED_BOXES:
            n = len(values.get("prompt", "").split()) if "prompt" in values else 5
            values[c.name] = random_text(rng, c.name, n, len(tokens))
        else:
            # A box of this explorer's own: its registration says how a reader fills it (None: any prompt).
            own = entry(explorer.view).random_text
            if own is None:
                raise KeyError(f"{explorer.view}: no random_text in its registration for its box {c.name!r}")
            text = own(rng, c.name, values, tokens)
            values[c.name] = random_prompt(rng, tokens, n_ctx) if text is None else text
    return values


def differences(a, b, path: str = "view", tol: float = TOL) -> list[str]:
    """Where two views disagree: numbers beyond `tol` (relative for large ones), anything else unequal.
    Two rows of a ranked list may trade places when their probabilities tie to TOL."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return [] if a == b else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isinf(a) or math.isinf(b):
            return [] if a == b else [f"{path}: {a!r} != {b!r}"]
        return [] if abs(a - b) <= tol * max(1.0, abs(a), abs(b)) else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}.{k}", tol)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            found = differences(x, y, f"{path}[{i}]", tol)
            if found and _tied_rows(x, y):
                continue
            out += found
        return out
    return [f"{path}: {type(a).__name__} != {type(b).__name__}"]


def _tied_rows(x, y) -> bool:
    """Two rows of a ranked page ([token, p] or {"token", ...}) whose probabilities agree to TOL."""
    if isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) and isinstance(y, list) and len(y) == 2:
        return abs(x[1] - y[1]) <= TOL
    if isinstance(x, dict) and "token" in x and isinstance(y, dict) and "token" in y:
        return all(abs(x[k] - y[k]) <= TOL for k in x if k != "token")
    return False
