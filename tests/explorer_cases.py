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
    to the library, on any values, by tests/explorers/test_smollm2.py (the model run in Node)."""
    return bool(explorer.args.get("real", {}).get("opening"))


def random_roll(rng: random.Random, lm, i: int, longest: int | None = None) -> dict:
    """A prompt for the read-out of `lm`: any tokens, of any length up to the context (or `longest`), any
    heads and MLPs switched off, any temperature and seed (up to 2**63 - 1), and top-k, top-p, both or
    neither by turns (`i`: the case's number), so that any four cases in a row take every path."""
    cfg = lm.model.cfg
    words = [rng.choice(lm.vocab.tokens) for _ in range(rng.randint(1, min(cfg.n_ctx, longest or cfg.n_ctx)))]
    heads = [[layer, h] for layer in range(cfg.n_layers) for h in range(cfg.n_heads) if rng.random() < 0.3]
    mlps = [layer for layer in range(cfg.n_layers) if cfg.has_mlp and rng.random() < 0.3]
    return {"prompt": " ".join(words), "heads": heads, "mlps": mlps, "temperature": round(10 ** rng.uniform(-1, 1), 3),
            "top_k": rng.randint(1, len(lm.vocab)) if i % 4 in (1, 3) else None,
            "top_p": round(rng.uniform(0.05, 1), 3) if i % 4 in (2, 3) else None,
            "seed": rng.choice([rng.randint(0, 1000), rng.randint(0, 2**63 - 1)])}


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


def differences(a, b, path: str = "view", tol: float = TOL, floor: float = 1.0) -> list[str]:
    """Where two views disagree: numbers beyond `tol` (relative to the larger of the two, or to `floor` if
    that is larger: absolute below 1 by default), anything else unequal. Two rows of a ranked list may
    trade places when their probabilities tie to TOL."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return [] if a == b else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isinf(a) or math.isinf(b):
            return [] if a == b else [f"{path}: {a!r} != {b!r}"]
        return [] if abs(a - b) <= tol * max(floor, abs(a), abs(b)) else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}.{k}", tol, floor)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            found = differences(x, y, f"{path}[{i}]", tol, floor)
            if found and _tied_rows(x, y):
                continue
            out += found
        return out
    return [f"{path}: {type(a).__name__} != {type(b).__name__}"]


def _tied_rows(x, y) -> bool:
    """Two rows of a ranked page ([token, p] or {"token", ...}) whose probabilities agree to TOL."""
    close = lambda a, b: _number(a) and _number(b) and abs(a - b) <= TOL   # noqa: E731
    if isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) and isinstance(y, list) and len(y) == 2:
        return close(x[1], y[1])
    if isinstance(x, dict) and "token" in x and isinstance(y, dict) and "token" in y:
        return set(x) == set(y) and all(close(x[k], y[k]) for k in x if k != "token")
    return False


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def every_control_redraws(ex):
    """Each control of an explorer moved in a kernel: a new picture and no message; a bad prompt (or a bad
    embedding): a message, the picture kept."""
    box = ex.widget()
    for c in ex.controls:
        before = box.figure.data
        w = box.controls[c.name]
        if c.kind == "toggle":
            w.value = not w.value
        elif c.kind == "choice":
            w.value = c.options[(c.options.index(c.default) + 1) % len(c.options)]
        elif c.kind == "prompt":
            w.value = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama"
        elif c.name == "position":
            w.value = "1"
        else:
            w.value = "0.5 -1 2 0 1"
        assert box.message.value == "" and box.figure.data != before, (ex.view, c.name)
    if any(c.name == "prompt" for c in ex.controls):
        kept = box.figure.data
        box.controls["prompt"].value = "<BOS> Pietro chiamma"
        assert "unknown token 'chiamma'" in box.message.value and box.figure.data == kept
    return box

