"""The shapes-and-cache chapter's explorer: the memory of a KV cache, from the sizes typed.

Its page twin is `kv_cache` in this unit's page.js; its picture, in this unit's pictures.js, is drawn with the renderer's kit (lib/explorers/js/render.js).
"""
from __future__ import annotations

import math
import random

from lib.analysis.inventory import kv_cache_bytes
from lib.errors import CourseError, require
from lib.explorers.definition import Control, Explorer, registered
from lib.messages import say

KV_SIZES = (("layers", "layers", "how many blocks, each with its own cache"),
            ("context", "context (tokens)", "how many tokens the cache holds"),
            ("heads", "heads", "key-value heads per layer"),
            ("d_head", "d_head", "numbers in one head's key (and in its value)"))


def _whole(label: str, text) -> int:
    try:
        return int(str(text).strip())
    except ValueError:
        raise CourseError(say("box_whole", label=label, got=repr(str(text).strip()))) from None


def random_text(rng: random.Random, name: str, values: dict, tokens) -> str | None:
    """A random size or bytes-per-number, now and then one the calculator refuses (for the tests)."""
    bad = rng.random() < 0.15
    if name in ("layers", "context", "heads", "d_head"):
        return rng.choice(["two", "0", "-4", "1.5", "9" * 400]) if bad else str(rng.randint(1, 200000))
    if name == "bytes":
        return rng.choice(["two", "0", "-1", "nan", "inf"]) if bad else rng.choice(["0.5", "1", "2", "4", "1e300"])
    return None


@registered("kv_cache", lambda: [kv_cache_calculator()], random_text=random_text,
            where="inside each block's attention: the keys and values every head keeps for the earlier positions.")
def kv_cache_calculator(layers: int = 32, context: int = 32768, heads: int = 32, d_head: int = 128,
                        bytes_per_element: float = 2) -> Explorer:
    """The memory of a KV cache: type the sizes, read the total."""
    boxes = [Control(name, label, description, "text", str(value), width=9)
             for (name, label, description), value in zip(KV_SIZES, (layers, context, heads, d_head))]
    boxes.append(Control("bytes", "bytes per number", "2 for 16-bit numbers, 1 for 8-bit, 0.5 for 4-bit", "text",
                         f"{bytes_per_element:g}", width=6))

    def compute(v):
        sizes = [_whole(label, v[name]) for name, label, _ in KV_SIZES]
        text = str(v["bytes"]).strip()
        try:
            per = float(text)
        except ValueError:
            raise CourseError(say("box_number", got=repr(text))) from None
        try:
            total = kv_cache_bytes(*sizes, per)
        except OverflowError:
            total = math.inf
        require(math.isfinite(total), say("cache_overflow"))
        return {**{name: str(n) for (name, _, _), n in zip(KV_SIZES, sizes)}, "bytes": per, "total": float(total)}

    return Explorer("kv_cache", [boxes[:3], boxes[3:]], compute)
