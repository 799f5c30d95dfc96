"""A claim's words, each held to a predicate on named quantities.

A claim's statement makes comparisons in words ("worse than a coin", "more than the first", "most layer-1
heads"). Each such phrase is registered with the check it means, written on the measurement's named
numbers, so that what the sentence says and what the test checks are the same thing, and a failure can
say which words failed and why:

    @claim("hallucination.shift-blind", "hallucination",
           "... an AUROC of {shift_auroc:.2f}, worse than a coin (0.5) ...",
           words={"worse than a coin": Q("shift_auroc") < 0.5}, ...)

`Q("name")` is a measured number; `Q`s combine with numbers and each other (`+ - * /`, `abs`, `Min`,
`Max`) and compare (`< <= > >=`, `.eq`, `.ne`) into a `Check`. A phrase may hold several checks (a tuple:
all must hold) or alternatives (`Either`: one must; `All` groups checks inside one). `tests/claims/test_words.py` holds every comparison
word of every statement to a registered phrase.
"""
from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass
from typing import Iterable, Mapping

from lib.errors import CourseError

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
        "!=": operator.ne}
# How an explanation says that a check failed: "x = 0.53, not below 0.5".
_SAID = {"<": "below", "<=": "at most", ">": "above", ">=": "at least", "==": "equal to", "!=": "other than"}


def _num(v) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, numbers.Integral):
        return f"{int(v):d}"
    if isinstance(v, numbers.Real):
        v = float(v)
        return f"{v:.4g}" if v == v else "nan"
    return str(v)


class Q:
    """A named measured number, or an expression over named numbers and constants."""

    def __init__(self, name: str):
        self.name = name

    # -- what it reads, its value, how it reads
    def names(self) -> set[str]:
        return {self.name}

    def value(self, x: Mapping) -> float:
        if self.name not in x:
            raise CourseError(f"the measurement has no number {self.name!r}")
        v = x[self.name]
        if v is None:
            return math.nan
        if isinstance(v, bool):
            return float(v)
        if not isinstance(v, numbers.Real):
            raise CourseError(f"{self.name!r} is {v!r}, not a number")
        return float(v)

    def text(self) -> str:
        return self.name

    # -- arithmetic
    def __add__(self, other):
        return _Expr("+", self, _q(other))

    def __radd__(self, other):
        return _Expr("+", _q(other), self)

    def __sub__(self, other):
        return _Expr("-", self, _q(other))

    def __rsub__(self, other):
        return _Expr("-", _q(other), self)

    def __mul__(self, other):
        return _Expr("*", self, _q(other))

    def __rmul__(self, other):
        return _Expr("*", _q(other), self)

    def __truediv__(self, other):
        return _Expr("/", self, _q(other))

    def __rtruediv__(self, other):
        return _Expr("/", _q(other), self)

    def __abs__(self):
        return _Call("abs", (self,))

    # -- comparisons
    def __lt__(self, other):
        return Check(self, "<", _q(other))

    def __le__(self, other):
        return Check(self, "<=", _q(other))

    def __gt__(self, other):
        return Check(self, ">", _q(other))

    def __ge__(self, other):
        return Check(self, ">=", _q(other))

    def eq(self, other):
        return Check(self, "==", _q(other))

    def ne(self, other):
        return Check(self, "!=", _q(other))

    __hash__ = object.__hash__


class _Const(Q):
    def __init__(self, v):
        super().__init__("")
        self.v = float(v)

    def names(self):
        return set()

    def value(self, x):
        return self.v

    def text(self):
        return _num(self.v if self.v != int(self.v) else int(self.v))


class _Expr(Q):
    _F = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}

    def __init__(self, op, a: Q, b: Q):
        super().__init__("")
        self.op, self.a, self.b = op, a, b

    def names(self):
        return self.a.names() | self.b.names()

    def value(self, x):
        a, b = self.a.value(x), self.b.value(x)
        if self.op == "/" and b == 0:
            return math.nan
        return self._F[self.op](a, b)

    def text(self):
        return f"{_wrap(self.a)} {self.op} {_wrap(self.b)}"


class _Call(Q):
    _F = {"abs": lambda vs: abs(vs[0]), "min": min, "max": max}

    def __init__(self, fn, args: tuple):
        super().__init__("")
        self.fn, self.args = fn, args

    def names(self):
        return set().union(*(a.names() for a in self.args))

    def value(self, x):
        return float(self._F[self.fn]([a.value(x) for a in self.args]))

    def text(self):
        return f"{self.fn}({', '.join(a.text() for a in self.args)})"


def _wrap(q: Q) -> str:
    return f"({q.text()})" if isinstance(q, _Expr) else q.text()


def _q(v) -> Q:
    if isinstance(v, Q):
        return v
    if isinstance(v, str):
        return Q(v)
    if isinstance(v, numbers.Real):
        return _Const(v)
    raise TypeError(f"a quantity is a name, a number or a Q, got {v!r}")


def Min(*qs) -> Q:
    return _Call("min", tuple(_q(q) for q in qs))


def Max(*qs) -> Q:
    return _Call("max", tuple(_q(q) for q in qs))


@dataclass(frozen=True, eq=False)
class Check:
    """`left op right` on a measurement's numbers."""
    left: Q
    op: str
    right: Q

    def names(self) -> set[str]:
        return self.left.names() | self.right.names()

    def __call__(self, x: Mapping) -> bool:
        a, b = self.left.value(x), self.right.value(x)
        if math.isnan(a) or math.isnan(b):
            return False
        return bool(_OPS[self.op](a, b))

    def text(self) -> str:
        return f"{self.left.text()} {self.op} {self.right.text()}"

    def explain(self, x: Mapping) -> str:
        """What the numbers were, and why the check fails on them ("shift_auroc = 0.535, not below 0.5")."""
        def shown(q):
            try:
                return _num(q.value(x))
            except CourseError as e:
                return f"({e})"
        left = f"{self.left.text()} = {shown(self.left)}"
        right = self.right.text() if isinstance(self.right, _Const) else f"{self.right.text()} = {shown(self.right)}"
        return f"{left}, not {_SAID[self.op]} {right}"


class _Group:
    """Checks that hold together (`All`) or as alternatives (`Either`)."""
    _joins, _any = " and ", False

    def __init__(self, *checks):
        self.checks = tuple(checks)

    def names(self) -> set[str]:
        return set().union(*(c.names() for c in self.checks))

    def __call__(self, x: Mapping) -> bool:
        return (any if self._any else all)(c(x) for c in self.checks)

    def text(self) -> str:
        return self._joins.join(f"({c.text()})" for c in self.checks)

    def explain(self, x: Mapping) -> str:
        return "; ".join(c.explain(x) for c in self.checks if not c(x))


class All(_Group):
    """Checks that must hold together (inside an `Either`)."""


class Either(_Group):
    """Alternatives: the words hold when one of the checks does."""
    _joins, _any = " or ", True


def as_checks(value) -> tuple:
    """A phrase's registered checks as a tuple (all must hold)."""
    items = value if isinstance(value, tuple) else (value,)
    for c in items:
        if not isinstance(c, (Check, Either, All)):
            raise CourseError(f"a claim's words map to checks (Q('x') < 0.5 ...), got {c!r}")
    return items


def failing(words: Mapping[str, tuple], x: Mapping) -> list[tuple[str, str]]:
    """The phrases whose checks fail on `x`: (phrase, explanation), in the order registered."""
    out = []
    for phrase, checks in words.items():
        for c in checks:
            try:
                ok = c(x)
            except CourseError as e:
                out.append((phrase, str(e)))
                break
            if not ok:
                out.append((phrase, c.explain(x)))
                break
    return out


def quantities(words: Mapping[str, tuple]) -> set[str]:
    return set().union(*(c.names() for checks in words.values() for c in checks)) if words else set()


def checks_text(words: Mapping[str, Iterable]) -> dict[str, str]:
    """{phrase: the checks it stands for, as text}, for listings and JSON."""
    return {phrase: " and ".join(c.text() for c in checks) for phrase, checks in words.items()}
