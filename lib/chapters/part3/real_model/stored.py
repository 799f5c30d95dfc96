"""What the website keeps of SmolLM2 on each prompt of its menu, and the results page computed from it.

The page cannot run SmolLM2 (93 MB of weights). For each prompt of the menu (`prompts.MENU`) the site's
build runs the model once and keeps:

- the results page in short (`Summary`): the `TOP` best logits exactly (float32, as the model computed
  them) with their tokens, and the rest of the 49,152 logits as a histogram: bins `BIN` logits wide,
  each kept as its count and the mean of its logits. A temperature, top-k, top-p and a seeded roll are
  then computed from that summary, in the page and in a kernel alike (`page_view`), and the summary's
  probabilities stay within `BOUND` of the full softmax at every temperature the slider reaches (measured
  over every stored prompt by the tests, `bound`);
- the logit lens: after the embedding and after each of the 30 blocks, the best `LENS_TOP` tokens and the
  probability of the model's final answer;
- every head's attention pattern, each weight as the byte round(255 p) (within 1/510).

Computed once per build: the numbers are kept on disk (`cache_dir()`), keyed by the model's file, this
what a run keeps (`RUNS_VERSION` and the sizes above) and the menu, so the chapter, the site's files and the tests read them from there.

Why a histogram works: with the logits divided by T, the rest's share of the softmax's denominator is
sum over its tokens of exp(l / T). Replacing each bin's tokens by their mean is exact for the bin's
first term and off by about the bin's variance / (2 T^2) in relative terms (at most BIN^2 / 24 / T^2):
large only at a low temperature, where the rest, far below the top `TOP` logits, weighs nothing.

The seeded roll walks the page best first (the kept tokens of the summary, then the rest as one slice),
where the library's `lib.model.readout.sample` lays the slices in vocabulary order: the same die, each
token's slice as wide as its probability, laid in another order, so that a page that holds only the best
`TOP` tokens can say which one a roll picks (or that it fell among the rest).
"""
from __future__ import annotations

import base64
import functools
import hashlib
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lib.chapters.part3.real_model.prompts import GROUP_OF, MENU
from lib.errors import CourseError
from lib.explorers import smollm2 as live
from lib.model.decoding import check_min_p
from lib.model.readout import TOP_P_FLOOR, Rolls, check_temperature, check_top_k, check_top_p

TOP = 100              # logits kept exactly, best first
BIN = 0.05             # the rest's histogram: bins this many logits wide
BOUND = 1e-3           # the summary's probabilities against the full softmax, at every slider temperature
LENS_TOP = 3           # tokens kept per stage of the logit lens
SCALE = 255            # an attention weight p is kept as the byte round(SCALE * p)
PATTERN_TOLERANCE = 0.5 / SCALE + 1e-6
ROWS = 10              # the results page's lines a view shows
RUNS_VERSION = 2       # raise it when `run` computes something new: the disk cache is keyed by it
GROUP = 10             # prompts run together as one batch (`run_many`)
NAME = "smollm2-menu"  # the site's files: real/NAME.json (the index) and real/NAME/N.json, N.bin
FOLDER = "real"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]


# ----------------------------------------------------------------------------- the results page in short
@dataclass(frozen=True)
class Summary:
    """A prompt's next-token logits kept short: the best `TOP` exactly, the rest as a histogram."""
    tokens: tuple[str, ...]          # the TOP best tokens, best first
    logits: tuple[float, ...]        # their logits (float32 values)
    means: tuple[float, ...]         # the rest's bins, highest first: each bin's mean logit
    counts: tuple[int, ...]          # and how many tokens it holds

    @property
    def vocab_size(self) -> int:
        return len(self.logits) + sum(self.counts)

    def to_json(self) -> dict:
        return {"tokens": list(self.tokens), "logits": list(self.logits), "means": list(self.means),
                "counts": list(self.counts)}

    @classmethod
    def from_json(cls, d: dict) -> "Summary":
        return cls(tuple(d["tokens"]), tuple(d["logits"]), tuple(d["means"]), tuple(d["counts"]))


def summarize(logits, vocab_tokens, top: int = TOP, width: float = BIN) -> Summary:
    """The summary of one position's logits [vocab] (float32 as the model gives them)."""
    x = np.asarray(logits, dtype=np.float32).astype(np.float64)
    order = np.argsort(-x, kind="stable")
    best, rest = order[:top], x[order[top:]]
    # Bins counted down from the last kept logit: bin b holds the rest's logits in (l - (b+1) w, l - b w].
    b = np.floor((x[best[-1]] - rest) / width).astype(np.int64)
    counts = np.bincount(b)
    sums = np.bincount(b, weights=rest)
    full = counts > 0
    # Means rounded to 1e-6 (what the page's file holds): the kernel computes from the same numbers.
    means = [round(float(s / c), 6) for s, c in zip(sums[full], counts[full])]
    return Summary(tuple(vocab_tokens[i] for i in best), tuple(float(x[i]) for i in best), tuple(means),
                   tuple(int(c) for c in counts[full]))


def weights(s: Summary, temperature: float) -> tuple[np.ndarray, np.ndarray]:
    """Unnormalised weights at a temperature: of each kept token, and of ONE token of each bin."""
    t = check_temperature(temperature)
    top = s.logits[0]
    return (np.exp((np.array(s.logits) - top) / t), np.exp((np.array(s.means, dtype=np.float64) - top) / t))


def probabilities(s: Summary, temperature: float = 1.0) -> tuple[np.ndarray, float]:
    """The summary's softmax at a temperature: each kept token's probability, and the rest's total."""
    w, r = weights(s, temperature)
    rest = float(np.dot(r, s.counts))
    z = float(w.sum()) + rest
    return w / z, rest / z


def reshaped(s: Summary, temperature: float = 1.0, top_k: int | None = None,
             top_p: float | None = None, min_p: float | None = None) -> tuple[np.ndarray, float, int]:
    """Min-p, then temperature, top-k and top-p on the shared-out survivors, then shared out again, as
    sampling does on the whole page (`lib.model.decoding`: min-p is a processor, judged at the temperature,
    before `lib.model.readout.reshape`): each kept token's final probability, the rest's final total and how
    many tokens survive. The rest's tokens are taken as their bin's mean: a bin cut by top-k or top-p keeps
    its first tokens, and min-p keeps or drops a bin whole."""
    top_k = check_top_k(top_k, s.vocab_size)
    top_p = check_top_p(top_p)
    min_p = check_min_p(min_p)
    w, r = weights(s, temperature)
    z = float(w.sum()) + float(np.dot(r, s.counts))
    items = [(float(x) / z, 1) for x in w] + [(float(x) / z, c) for x, c in zip(r, s.counts)]
    if min_p is not None:
        # w[0] is the best token's weight (1): a token stays if its weight is at least min_p of it.
        items = [(p, n if x >= min_p * float(w[0]) else 0) for (p, n), x in zip(items, [*w, *r])]
    kept = []                                          # (per-token probability, how many kept)
    left = s.vocab_size if top_k is None else top_k
    for p, n in items:
        take = min(n, left)
        kept.append((p, take))
        left -= take
    if top_p is not None and top_p < 1:
        mass = sum(p * n for p, n in kept)
        before, cut = 0.0, []
        for i, (p, n) in enumerate(kept):
            q = p / mass
            if n == 0 or q == 0:
                cut.append((p, 0))
                continue
            room = top_p - TOP_P_FLOOR - before
            take = 0 if room <= 0 else min(n, math.ceil(room / q))
            if i == 0:
                take = max(take, 1)                    # the best token always survives
            cut.append((p, take))
            before += q * take
        kept = cut
    mass = sum(p * n for p, n in kept)
    final = np.array([p / mass * n for p, n in kept[:len(s.logits)]])
    rest = sum(p / mass * n for p, n in kept[len(s.logits):])
    return final, float(rest), int(sum(n for p, n in kept if p > 0))


def roll(final: np.ndarray, rest: float, seed: int) -> int | None:
    """The seeded roll over a reshaped summary (the kept tokens' final probabilities and the rest's),
    walked best first: the kept token's index, or None when it falls among the rest (the module's note)."""
    u = Rolls(seed).next()
    target = u * (float(final.sum()) + rest)
    running = 0.0
    for i, p in enumerate(final.tolist()):
        running += p
        if running > target:
            return i
    return None


def page_view(s: Summary, prompt_tokens, temperature, top_k, top_p, seed: int, rows: int = ROWS,
              min_p: float | None = None) -> dict:
    """The real results page explorer's view, from a summary (the page computes the same from its file, or
    from the model it runs)."""
    base, base_rest = probabilities(s)
    heated, heated_rest = probabilities(s, temperature)
    final, final_rest, survivors = reshaped(s, temperature, top_k, top_p, min_p)
    pick = roll(final, final_rest, seed)
    return {"tokens": list(prompt_tokens), "temperature": float(temperature),
            "top_k": None if top_k is None else min(top_k, s.vocab_size), "top_p": top_p, "min_p": min_p,
            "seed": str(seed),
            "rows": [{"token": s.tokens[i], "base": float(base[i]), "heated": float(heated[i]), "final": float(final[i])}
                     for i in range(min(rows, len(s.tokens)))],
            "rest": {"base": base_rest, "heated": heated_rest, "final": final_rest, "count": s.vocab_size - len(s.tokens)},
            "survivors": survivors, "stored": len(s.tokens),
            "chosen": None if pick is None else s.tokens[pick],
            "chosen_prob": final_rest if pick is None else float(final[pick])}


# ----------------------------------------------------------------------------- one prompt, run once
@dataclass(frozen=True)
class Stored:
    text: str
    group: str
    tokens: tuple[str, ...]                 # the prompt's tokens
    summary: Summary
    lens: list[dict]                        # per stage: {"name", "top": [[token, p], ...], "answer": p}
    patterns: np.ndarray                    # [layer, head, query, key] as bytes
    logits: np.ndarray | None = None        # the full next-token logits [vocab] (float32; kept on disk, not shipped)

    def to_json(self) -> dict:
        return {"text": self.text, "group": self.group, "tokens": list(self.tokens),
                "summary": self.summary.to_json(), "lens": self.lens}


def stage_name(i: int) -> str:
    return "embedding" if i == 0 else f"block {i - 1}"


def run(lm, text: str) -> Stored:
    """SmolLM2 on one text: its results page in short, its logit lens after every block, its patterns."""
    return run_many(lm, [text])[0]


def run_many(lm, texts, group: int = GROUP) -> list[Stored]:
    """`run` on each of `texts`, `group` texts of near lengths at a time through the model as one batch padded
    on the right: a causal model's real positions never read the padding after them, and rotary positions
    start at 0 in every row, so each text's numbers are those of its run alone. A pass costs far more than its
    arithmetic on a short prompt, so one pass per group instead of per text is most of the menu's time."""
    import torch  # deferred: the page's files and the tests of the summary's math need no torch

    ids = [live.page_ids(lm, t) for t in texts]
    order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
    out: list[Stored | None] = [None] * len(texts)
    for start in range(0, len(order), group):
        chunk = order[start:start + group]
        width = max(len(ids[i]) for i in chunk)
        batch = torch.tensor([ids[i] + [0] * (width - len(ids[i])) for i in chunk])
        # Only what a run keeps is cached: every activation of 30 layers over a batch is hundreds of MB.
        kept = lambda name: name == "embed" or name.endswith((".resid_post", ".attn.pattern"))  # noqa: E731
        with torch.no_grad():
            logits, cache = lm.model.run_with_cache(batch, names=kept)
        for row, i in enumerate(chunk):
            n = len(ids[i])
            one = {"logits": logits[row, n - 1], "embed": cache["embed"][row, n - 1],
                   "resid": [cache[f"blocks.{b}.resid_post"][row, n - 1] for b in range(lm.model.cfg.n_layers)],
                   "patterns": [cache[f"blocks.{b}.attn.pattern"][row, :, :n, :n] for b in range(lm.model.cfg.n_layers)]}
            out[i] = _stored(lm, texts[i], ids[i], one)
    return out


def _stored(lm, text: str, ids: list[int], one: dict) -> Stored:
    import torch  # deferred: as in run_many

    from lib.analysis.lens import read_out  # deferred: imports torch, as above

    vocab = lm.vocab.tokens
    last = one["logits"]
    summary = summarize(last.numpy(), vocab)
    # The lens after the embedding and blocks 0 to 28; after the last block it reads the final logits themselves.
    stream = torch.stack([one["embed"]] + one["resid"][:-1])
    lens_logits = torch.cat([read_out(lm.model, stream), last[None]]).double()
    # Each stage's best tokens and the answer's probability, without sorting or exponentiating 49,152 logits
    # 31 times over: log p = logit - logsumexp.
    log_z = torch.logsumexp(lens_logits, dim=-1)
    best_logits, best_ids = torch.topk(lens_logits, LENS_TOP, dim=-1)
    answer = int(torch.argmax(last))
    lens = []
    for i in range(len(lens_logits)):
        lens.append({"name": stage_name(i),
                     "top": [[vocab[j], float(torch.exp(x - log_z[i]))] for x, j in zip(best_logits[i], best_ids[i].tolist())],
                     "answer": float(torch.exp(lens_logits[i, answer] - log_z[i]))})
    patterns = torch.stack(one["patterns"]).numpy()
    return Stored(text, GROUP_OF.get(text, ""), tuple(lm.vocab.decode(ids)), summary, lens, quantize(patterns),
                  last.numpy().astype(np.float32))


def quantize(patterns) -> np.ndarray:
    return np.clip(np.rint(np.asarray(patterns, dtype=np.float64) * SCALE), 0, SCALE).astype(np.uint8)


# ----------------------------------------------------------------------------- the menu, once per build
def cache_dir() -> Path | None:
    """Where the menu's runs are kept: $COURSE_REAL_CACHE, else `_build/.real-model` in a checkout."""
    env = os.environ.get("COURSE_REAL_CACHE")
    if env:
        return Path(env)
    return ROOT / "_build" / ".real-model" if (ROOT / "_toc.yml").is_file() else None


def model_key(path: Path) -> str:
    """The model's file, in short: its name, its size and a hash of its first MB (its header and first tensors)."""
    h = hashlib.sha256()
    st = path.stat()
    h.update(f"{path.name} {st.st_size}".encode())
    with open(path, "rb") as f:
        h.update(f.read(1 << 20))
    return h.hexdigest()


def _key(path: Path) -> str:
    h = hashlib.sha256(model_key(path).encode())
    # What a run keeps (raise RUNS_VERSION when `run` changes what it computes) and the menu.
    h.update(json.dumps([RUNS_VERSION, TOP, BIN, LENS_TOP, SCALE, MENU]).encode())
    return h.hexdigest()[:20]


def model_file() -> Path:
    """SmolLM2's file, or one clear line saying how to install it."""
    from lib.model import smollm2  # deferred: reading the GGUF file imports gguf and torch

    path = smollm2.package_file()
    if path is None:
        raise CourseError(f"{smollm2.NAME} is not installed: `{smollm2.INSTALL}` provides it")
    return path


def _cache_file() -> Path | None:
    folder = cache_dir()
    return folder / f"{_key(model_file())}.json" if folder else None


def on_disk() -> bool:
    """Whether the menu's runs are on disk already (reading them then costs a fraction of a second)."""
    file = _cache_file()
    return file is not None and file.is_file() and file.with_suffix(".npy").is_file()


@functools.lru_cache(maxsize=1)
def menu_runs() -> tuple[Stored, ...]:
    """Every prompt of the menu run once (read from the disk cache when it holds them)."""
    from lib.model import smollm2  # deferred: as in _cache_file

    file = _cache_file()
    folder = file.parent if file is not None else None
    if on_disk():
        full = np.load(file.with_suffix(".npy"))
        return tuple(_read(d, row) for d, row in zip(json.loads(file.read_text())["runs"], full))
    start = time.perf_counter()
    lm = smollm2.load()
    runs = tuple(run_many(lm, MENU))
    if file is not None:
        folder.mkdir(parents=True, exist_ok=True)
        out = [dict(r.to_json(), patterns={"shape": list(r.patterns.shape),
                                           "bytes": base64.b64encode(r.patterns.tobytes()).decode()}) for r in runs]
        tmp = file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"runs": out, "seconds": round(time.perf_counter() - start, 1)}))
        np.save(file.with_suffix(".npy"), np.stack([r.logits for r in runs]))
        tmp.replace(file)
    return runs


@functools.lru_cache(maxsize=1)
def menu_bound() -> float:
    """`bound` over the menu's runs and every temperature of the explorers' slider, measured once per
    build (kept on disk beside the runs: a few seconds of arithmetic, not paid by every page build)."""
    from lib.explorers.definition import TEMPERATURES  # deferred: the definitions import the read-out (torch)

    runs = menu_runs()
    file = _cache_file()
    file = file.with_suffix(".bound.json") if file is not None else None
    if file is not None and file.is_file():
        return float(json.loads(file.read_text())["bound"])
    worst = bound(runs, TEMPERATURES)
    if file is not None:
        file.write_text(json.dumps({"bound": worst, "temperatures": len(TEMPERATURES)}))
    return worst


def _read(d: dict, logits: np.ndarray) -> Stored:
    raw = np.frombuffer(base64.b64decode(d["patterns"]["bytes"]), dtype=np.uint8).reshape(d["patterns"]["shape"])
    return Stored(d["text"], d["group"], tuple(d["tokens"]), Summary.from_json(d["summary"]), d["lens"], raw, logits)


def by_text() -> dict[str, Stored]:
    return {r.text: r for r in menu_runs()}


# ----------------------------------------------------------------------------- the site's files
def export(folder: Path) -> list[Path]:
    """The menu's files as the page reads them: `real/smollm2-menu.json` (the prompts, their groups and
    tokens, the model's sizes) and per prompt `real/smollm2-menu/N.json` (its summary and lens) and
    `N.bin` (its patterns [layer, head, query, key] as bytes). A page loads the index and the prompt it
    shows."""
    runs = menu_runs()
    out = folder / FOLDER
    (out / NAME).mkdir(parents=True, exist_ok=True)
    written, index = [], []
    layers, heads = runs[0].patterns.shape[:2]
    for i, r in enumerate(runs):
        data, raw = out / NAME / f"{i}.json", out / NAME / f"{i}.bin"
        data.write_text(json.dumps({"summary": r.summary.to_json(), "lens": r.lens}, separators=(",", ":")))
        raw.write_bytes(r.patterns.tobytes())
        written += [data, raw]
        index.append({"text": r.text, "group": r.group, "tokens": list(r.tokens), "file": f"{NAME}/{i}"})
    meta = out / f"{NAME}.json"
    meta.write_text(json.dumps({"model": "SmolLM2-135M-Instruct", "layers": int(layers), "heads": int(heads),
                                "scale": SCALE, "prompts": index}, separators=(",", ":")))
    return [meta, *written]


def bound(runs, temperatures, chunk: int = 64) -> float:
    """The largest difference, over `runs` and `temperatures`, between a summary's probabilities (each
    kept token's, and the rest's total) and the full softmax of the run's logits."""
    worst = 0.0
    for r in runs:
        x = np.sort(np.asarray(r.logits, dtype=np.float32).astype(np.float64))[::-1]
        k = len(r.summary.logits)
        for start in range(0, len(temperatures), chunk):
            t = np.asarray(temperatures[start:start + chunk], dtype=np.float64)[:, None]
            z = (x[None, :] - x[0]) / t
            # The best logit is 0 here (no overflow); the sum in float32 is off by ~1e-6 relative, far below BOUND.
            total = np.exp(z.astype(np.float32)).sum(axis=1, dtype=np.float64)
            top = np.exp(z[:, :k]) / total[:, None]
            for row, temperature in zip(top, t[:, 0]):
                kept, rest = probabilities(r.summary, float(temperature))
                worst = max(worst, float(np.abs(kept - row).max()), abs(rest - (1.0 - float(row.sum()))))
    return worst
