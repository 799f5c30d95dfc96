"""What crosses from a learner's contained run to the checker: plain data, never an object.

The run (grading/run.py) writes each answer with `encode`: numbers, strings, booleans, None,
`...`, lists, tuples, dicts with string keys, numpy arrays and torch tensors (as a list of numbers
with a dtype and a shape), a shipped model (by its name). Anything else becomes the name of its type.
The checker (grading/checker.py) reads it back with `decode`, which builds only those plain types:
no class of the learner's is ever rebuilt, so no answer can carry an `__eq__` that says yes to
everything, or code that runs in the checker.
"""
from __future__ import annotations

import math

import numpy as np

MAX_ITEMS = 2_000_000      # numbers in one answer; beyond it an answer is refused as too large
MAX_DEPTH = 12
NUMERIC_KINDS = "biuf"


class Opaque:
    """What the checker sees of an answer it cannot read: equal to nothing, a number of nothing."""

    def __init__(self, type_name: str):
        self.type_name = str(type_name)[:80]

    def __repr__(self) -> str:
        return f"a {self.type_name}"


class Budget:
    def __init__(self):
        self.left = MAX_ITEMS

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise ValueError("too large")


def encode(value, budget: Budget | None = None, depth: int = 0):
    """The answer as JSON-able plain data (run side; the learner's objects are read, never trusted)."""
    budget = budget or Budget()
    if depth > MAX_DEPTH:
        return {"__opaque__": "nesting too deep"}
    if value is None or isinstance(value, bool):
        return value
    if value is Ellipsis:
        return {"__ellipsis__": True}
    if isinstance(value, int):
        return {"__int__": str(int.__index__(value))} if abs(value) > 2 ** 53 else int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value) if math.isfinite(value) else {"__float__": repr(float.__float__(value))}
    if isinstance(value, str):
        budget.spend(len(value) // 8 + 1)
        return {"__str__": str.__str__(value)}
    if isinstance(value, np.generic) and value.dtype.kind in NUMERIC_KINDS:
        return encode(value.item(), budget, depth + 1)
    tensor = type(value).__module__.startswith("torch") and hasattr(value, "detach")
    if isinstance(value, np.ndarray) or tensor:
        try:
            array = value.detach().cpu().float().numpy() if tensor and str(value.dtype) == "torch.bfloat16" else \
                (value.detach().cpu().numpy() if tensor else value)
            array = np.asarray(array)
        except Exception:
            return {"__opaque__": type(value).__name__}
        if array.dtype.kind not in NUMERIC_KINDS:
            return {"__opaque__": f"array of {array.dtype}"}
        budget.spend(int(array.size))
        flat = [v if math.isfinite(v) else repr(v) for v in array.astype(float).ravel().tolist()] \
            if array.dtype.kind == "f" else array.ravel().tolist()
        return {"__nd__": flat, "dtype": array.dtype.str, "shape": list(array.shape), "torch": bool(tensor)}
    if isinstance(value, (list, tuple)):
        budget.spend(len(value))
        items = [encode(v, budget, depth + 1) for v in list.__iter__(list(value))] if isinstance(value, list) \
            else [encode(v, budget, depth + 1) for v in tuple.__iter__(value)]
        return {"__list__": items} if isinstance(value, list) else {"__tuple__": items}
    if isinstance(value, dict):
        budget.spend(len(value))
        return {"__dict__": [[encode(k, budget, depth + 1), encode(v, budget, depth + 1)]
                             for k, v in dict.items(value)]}
    name = getattr(value, "name", None)
    if type(value).__module__.startswith("lib.") and hasattr(value, "vocab") and isinstance(name, str):
        return {"__model__": str.__str__(name)}
    if callable(value):
        return {"__opaque__": "function"}
    return {"__opaque__": type(value).__name__}


def decode(data, models=None):
    """Plain Python values from what `encode` wrote (checker side: only built-in types and numpy arrays).

    `models`: name -> model, for an answer that is a shipped model (any other name is opaque)."""
    if data is None or isinstance(data, (bool, int, float)):
        return data
    if isinstance(data, str):          # JSON strings are written wrapped; a bare one is a forgery
        return Opaque("bare string")
    if isinstance(data, list):
        return Opaque("bare list")
    if not isinstance(data, dict) or len(data) == 0:
        return Opaque("unknown")
    if "__str__" in data and isinstance(data["__str__"], str):
        return data["__str__"]
    if "__ellipsis__" in data:
        return Ellipsis
    if "__int__" in data and isinstance(data["__int__"], str) and data["__int__"].lstrip("-").isdigit():
        return int(data["__int__"])
    if "__float__" in data and data["__float__"] in ("nan", "inf", "-inf"):
        return float(data["__float__"])
    if "__list__" in data and isinstance(data["__list__"], list):
        return [decode(v, models) for v in data["__list__"]]
    if "__tuple__" in data and isinstance(data["__tuple__"], list):
        return tuple(decode(v, models) for v in data["__tuple__"])
    if "__dict__" in data and isinstance(data["__dict__"], list):
        out = {}
        for pair in data["__dict__"]:
            if isinstance(pair, list) and len(pair) == 2:
                key = decode(pair[0], models)
                try:
                    out[key] = decode(pair[1], models)
                except TypeError:    # an unhashable key
                    return Opaque("dict")
        return out
    if "__nd__" in data:
        try:
            dtype = np.dtype(str(data.get("dtype")))
            shape = tuple(int(n) for n in data.get("shape", []))
            if dtype.kind not in NUMERIC_KINDS or any(n < 0 for n in shape) or math.prod(shape) > MAX_ITEMS:
                return Opaque("array")
            flat = [float(v) if isinstance(v, str) and v in ("nan", "inf", "-inf") else v for v in data["__nd__"]]
            if not all(isinstance(v, (int, float, bool)) for v in flat):
                return Opaque("array")
            return np.array(flat, dtype=dtype).reshape(shape)
        except (TypeError, ValueError, OverflowError):
            return Opaque("array")
    if "__model__" in data and models is not None and data["__model__"] in models:
        return models[data["__model__"]]
    if "__opaque__" in data:
        return Opaque(data["__opaque__"])
    return Opaque("unknown")


def similar(a, b) -> bool:
    """Two encoded values alike: the same structure, numbers equal to 1e-9 (the checker's inputs to a
    learner's function, matched with the inputs the run recorded)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if "__nd__" in a and "__nd__" in b:
            if a.get("shape") != b.get("shape") or len(a["__nd__"]) != len(b["__nd__"]):
                return False
            try:
                x = np.array([float(v) for v in a["__nd__"]])
                y = np.array([float(v) for v in b["__nd__"]])
            except (TypeError, ValueError):
                return False
            return bool(np.allclose(x, y, rtol=1e-9, atol=1e-12, equal_nan=True))
        return a.keys() == b.keys() and all(similar(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(similar(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return False
    return a == b and type(a) is type(b)
