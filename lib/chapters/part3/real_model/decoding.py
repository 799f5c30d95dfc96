"""SmolLM2 decoded five ways on the menu's open prompts (the chapter's section "Decoding beyond one roll").

The open group of the menu (`prompts.GROUPS["open"]`: a story, a taste, a scene, a letter; text that many words
could continue) is continued five ways: greedy, greedy with a repetition penalty of `PENALTY`, and a seeded sample
at temperature `HOT` with min-p `MIN_P`, for `LONG` tokens (a repeat needs room to show); one seeded sample at
temperature 1 and beam search with `BEAMS` beams (its best beam) for `NEW`; each stops early at the instruct
model's end of a turn. Every generated token's log-probability under the model itself (temperature 1, before
any processor) is kept. The min-p and top-p counts are read from the menu's stored pages (`stored.menu_runs`),
with no generation. The site's decoding explorer shows these continuations as they are stored (`export`).

SmolLM2 costs about 0.1 s a token on the 2-core machine (about 9 ms a row in a batch of a hundred), so the
prompts run side by side as one batch (`lib.model.decoding.decode`, whose rows leave the batch when they are
done). The whole is about 50 s of processor time, a quarter of the book's build: the course ships the result
(`data/real-model/decoding.json`, written by `python -m lib.chapters.part3.real_model.decoding`), keyed by the
model's file and by what is computed here (`VERSION` and the sizes above), and the tests run a sample of it
again. Under another key (another model file, a setting changed) the build computes it, once, and keeps it on
disk beside the menu's runs (`stored.cache_dir()`).
"""
from __future__ import annotations

import functools
import hashlib
import json
import time

from pathlib import Path

import numpy as np

from lib.chapters.part3.real_model import stored
from lib.chapters.part3.real_model.prompts import GROUPS
from lib.data import data_dir

VERSION = 2
NEW = 24            # new tokens per sample at temperature 1 and per beam search
LONG = 48           # new tokens per greedy, penalised and min-p continuation (a repeat needs room to show)
PENALTY = 1.3       # the repetition penalty (Keskar et al. use 1.2; 1.3 is a common setting)
MIN_P = 0.1         # min-p's share of the best token's probability (Nguyen et al.'s usual setting)
HOT = 1.5           # the temperature min-p samples at: the cut is what makes a hot page usable
BEAMS = 3
SEED = 0
STOP = "<|im_end|>"  # the instruct model's end of a turn
METHODS = ("greedy", "greedy, penalty", "sampled", "sampled, min-p", "beam")
PROMPTS = GROUPS["open"]


def key() -> str:
    """What decides the runs: the model's file and what is computed here."""
    text = json.dumps([stored.model_key(stored.model_file()), VERSION, NEW, LONG, PENALTY, MIN_P, HOT, BEAMS, SEED, STOP,
                       PROMPTS])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _file():
    """Where the runs are kept when computed by a build: beside the menu's."""
    folder = stored.cache_dir()
    return None if folder is None else folder / f"decoding-{key()}.json"


def shipped_path() -> Path:
    """The runs as the course ships them (`write_shipped`): read instead of computed while their key is
    this one (another model file or another setting computes them again, as a build without them would)."""
    return data_dir() / "real-model" / "decoding.json"


def _shipped() -> dict | None:
    try:
        data = json.loads(shipped_path().read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key() or not isinstance(data.get("runs"), dict):
        return None
    for rows in data["runs"].values():
        for r in rows:
            r["text"] = "".join(r["pieces"])
    return data["runs"]


def write_shipped() -> Path:
    """Compute the runs on SmolLM2 and write them where the course ships them (about 50 s of processor
    time): `python -m lib.chapters.part3.real_model.decoding`. The tests hold a sample of them to the
    model run again (tests/chapters/part3/real_model/test_stored.py)."""
    from lib.model import smollm2  # deferred: reading the GGUF file imports gguf and torch

    out = run(smollm2.load())
    rows = {m: [{k: v for k, v in r.items() if k != "text"} for r in found] for m, found in out.items()}
    path = shipped_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key(), "runs": rows}, ensure_ascii=False, separators=(",", ":")) + "\n")
    runs.cache_clear()
    return path


SETTINGS = {"greedy": {}, "greedy, penalty": {"repetition_penalty": PENALTY},
            "sampled": {"do_sample": True, "seed": SEED, "max_new_tokens": NEW},
            "sampled, min-p": {"do_sample": True, "seed": SEED, "temperature": HOT, "min_p": MIN_P}}


def run(lm, texts=PROMPTS, methods=METHODS) -> dict:
    """Each text continued by each method: {method: [{"prompt", "tokens", "pieces" (their text), "text",
    "logprobs"}, ...]}: greedy, greedy with the penalty, min-p's sample (`LONG` tokens) and the sample at
    temperature 1 (`NEW`) side by side as one batch, then beam search for `NEW`."""
    from lib.model import decoding  # deferred: imports torch

    prompts = [lm.encode(p) for p in texts]
    stop = [lm.vocab.id(STOP)]
    settings = {m: k for m, k in SETTINGS.items() if m in methods}
    out = {}
    if settings:
        together = decoding.decode(lm.model, prompts * len(settings), LONG, stop=stop,
                                   per_row=[k for k in settings.values() for _ in prompts])
        for m, method in enumerate(settings):
            rows = together[m * len(prompts):(m + 1) * len(prompts)]
            out[method] = [{"prompt": p, "tokens": d.new_tokens, "logprobs": d.logprobs} for p, d in zip(texts, rows)]
    if "beam" in methods:
        beams = decoding.beam_search(lm.model, prompts, NEW, BEAMS, stop=stop)
        out["beam"] = []
        for p, ids, found_beams in zip(texts, prompts, beams):
            best = list(found_beams[0].new_tokens)
            out["beam"].append({"prompt": p, "tokens": best,
                                "logprobs": decoding.token_logprobs(lm.model, ids, best).tolist()})
    for rows in out.values():
        for r in rows:
            r["pieces"] = lm.vocab.decode(r["tokens"])
            r["text"] = "".join(r["pieces"])
    return {m: out[m] for m in METHODS if m in out}


def on_disk() -> bool:
    """Whether the runs are on disk, shipped or kept by a build (reading them costs a fraction of a second)."""
    file = _file()
    return _shipped() is not None or (file is not None and file.is_file())


@functools.lru_cache(maxsize=1)
def runs() -> dict:
    """`run` on SmolLM2: as shipped (`shipped_path`) when its key is this one, else once per build (read from
    the disk cache when it holds it)."""
    got = _shipped()
    if got is not None:
        return got
    file = _file()
    if file is not None and file.is_file():
        return json.loads(file.read_text())["runs"]
    from lib.model import smollm2  # deferred: reading the GGUF file imports gguf and torch

    start = time.perf_counter()
    out = run(smollm2.load())
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"runs": out, "seconds": round(time.perf_counter() - start, 1)}))
        tmp.replace(file)
    return out


# ----------------------------------------------------------------------------- measures of a continuation
def repeated_share(tokens, n: int = 4) -> float:
    """The share of a continuation's n-grams that already occurred earlier in it (Welleck et al.'s seq-rep-n:
    0 for text that never repeats itself, near 1 for a loop)."""
    grams = [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]
    if not grams:
        return 0.0
    seen, again = set(), 0
    for g in grams:
        again += g in seen
        seen.add(g)
    return again / len(grams)


def longest_repeat(tokens) -> int:
    """The length of the longest stretch of tokens that occurs twice in a continuation (the two may overlap:
    a loop of period p repeated r times holds a stretch of (r - 1) p tokens twice)."""
    tokens = list(tokens)
    best = 0
    for shift in range(1, len(tokens)):
        run = 0
        for i in range(shift, len(tokens)):
            run = run + 1 if tokens[i] == tokens[i - shift] else 0
            best = max(best, run)
    return best


def surprisal_bits(logprobs) -> float:
    """The mean surprisal per token, in bits: minus the mean log-probability, base 2."""
    return float(-np.mean(logprobs) / np.log(2))


@functools.lru_cache(maxsize=1)
def per_method() -> dict[str, dict]:
    """Each method's numbers over the open prompts: median repeated share of 4-grams, how many texts end in a
    loop (`lib.model.decoding.find_loop`), median mean surprisal (bits) and median log-probability of the
    whole continuation, and its median length."""
    from lib.model.decoding import find_loop  # deferred: imports torch

    out = {}
    for method, rows in runs().items():
        out[method] = {"rep4": float(np.median([repeated_share(r["tokens"]) for r in rows])),
                       "loops": sum(find_loop(r["tokens"]) is not None for r in rows),
                       "bits": float(np.median([surprisal_bits(r["logprobs"]) for r in rows])),
                       "logprob": float(np.median([sum(r["logprobs"]) for r in rows])),
                       "length": float(np.median([len(r["tokens"]) for r in rows])), "n": len(rows)}
    return out


# ----------------------------------------------------------------------------- min-p and top-p on the menu's pages
def kept_counts(logits, temperature: float, min_p: float, top_p: float) -> tuple[int, int]:
    """How many tokens min-p and top-p keep of one page at a temperature (from its full logits)."""
    z = np.asarray(logits, dtype=np.float64) / temperature
    p = np.exp(z - z.max())
    p /= p.sum()
    kept_min_p = int((p >= min_p * p.max()).sum())
    s = np.sort(p)[::-1]
    kept_top_p = int(np.searchsorted(np.cumsum(s), top_p) + 1)
    return kept_min_p, kept_top_p


# ----------------------------------------------------------------------------- the site's decoding explorer
FILE = "smollm2-decoding"    # the site's file: real/FILE.json
SHOWN = {"greedy": "greedy", "greedy, penalty": f"greedy, repetition penalty {PENALTY}",
         "sampled": "sampled at temperature 1", "sampled, min-p": f"sampled at temperature {HOT}, min-p {MIN_P}",
         "beam": f"beam search, {BEAMS} beams"}


def view(row: dict, prompt_tokens, method: str) -> dict:
    """The decoding explorer's view of one stored continuation: its tokens (text) and the probability the
    model gave each (temperature 1, before any knob; 4 decimals), and its measures: how many new tokens,
    whether it stopped at the end of a turn, the longest stretch it holds twice, the share of its 4-token
    stretches that occur twice, the mean surprisal (bits a token), the log-probability of the whole
    continuation, and the period of the loop it ends in (None: none)."""
    from lib.model.decoding import find_loop  # deferred: imports torch

    tokens, logprobs = row["tokens"], row["logprobs"]
    loop = find_loop(tokens)
    return {"tokens": list(prompt_tokens), "method": method, "settings": SHOWN[method],
            "pieces": list(row["pieces"]), "probs": [round(float(np.exp(x)), 4) for x in logprobs],
            "length": len(tokens), "most": NEW if method in ("sampled", "beam") else LONG,
            "stopped": bool(row["pieces"] and row["pieces"][-1] == STOP),
            "longest_repeat": longest_repeat(tokens), "rep4": round(repeated_share(tokens), 4),
            "bits": round(surprisal_bits(logprobs), 4) if tokens else 0.0, "logprob": round(float(sum(logprobs)), 4),
            "loop": None if loop is None else loop.period}


def export(folder) -> list:
    """The site's file for the decoding explorer: `real/FILE.json`, every open prompt's five views."""
    rows = runs()
    menu = stored.by_text()
    out = folder / stored.FOLDER
    out.mkdir(parents=True, exist_ok=True)
    prompts = [{"text": p, "views": {m: view(rows[m][i], menu[p].tokens, m) for m in METHODS}}
               for i, p in enumerate(PROMPTS)]
    path = out / f"{FILE}.json"
    path.write_text(json.dumps({"methods": list(METHODS), "prompts": prompts}, separators=(",", ":")))
    return [path]


if __name__ == "__main__":
    print(write_shipped())
