"""Bad input, tried as a new user would: every row must end in one clear line (issue 17, item 7).

The table is the measurement. Each row is something a learner, an instructor or a script may
well do: a typo, a number that passes a range check and still breaks, a model folder damaged
on disk, a model name that is a path. A refusal passes when it is exactly one line that starts
with `error: `, names the problem (the row's fragment) and ends with exit status 2, nothing on
stdout; a library refusal is a `CourseError` with a one-line message. A few rows are edge
cases whose right answer is an answer (a top-k larger than the vocabulary means "all tokens"),
and those must give a finite, complete one.

Every row runs against a copy of the shipped data in a temporary COURSE_DATA folder, never
the shipped files, and training is replaced by a tripwire: bad input must be refused before a
minute of training, not after it.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

import lib
from lib.errors import CourseError

CG = "calling-game"
PROMPT = "<BOS> Pietro chiama"
HUGE = "99999999999999999999"          # above 2**64: what a learner types to mean "all of them"


# ----------------------------------------------------------------------------- damage
# Each takes the copied folder of calling-game and breaks it the way a disk, an editor, an
# interrupted copy or a hand-edited config would.
def weights_of(folder: Path) -> Path:
    return folder / "model.safetensors"


def meta_of(folder: Path) -> Path:
    return folder / "meta.json"


def edit_meta(change: Callable[[dict], None]):
    def damage(folder: Path):
        meta = json.loads(meta_of(folder).read_text())
        change(meta)
        meta_of(folder).write_text(json.dumps(meta))
    return damage


def edit_config(**fields):
    def change(meta):
        for k, v in fields.items():
            if v is DELETE:
                del meta["config"][k]
            else:
                meta["config"][k] = v
    return edit_meta(change)


def edit_tensors(change: Callable[[dict], None]):
    """Rewrite the weights and record their new checksum: damage the checksum cannot see."""
    def damage(folder: Path):
        tensors = load_file(str(weights_of(folder)))
        change(tensors)
        save_file(tensors, str(weights_of(folder)))
        digest = hashlib.sha256(weights_of(folder).read_bytes()).hexdigest()
        edit_meta(lambda m: m.__setitem__("sha256", digest))(folder)
    return damage


DELETE = object()


def truncate(folder):
    data = weights_of(folder).read_bytes()
    weights_of(folder).write_bytes(data[:len(data) // 2])


def flip_one_byte(folder):
    data = bytearray(weights_of(folder).read_bytes())
    data[-100] ^= 0x01
    weights_of(folder).write_bytes(bytes(data))


def garbage_weights(folder):
    weights_of(folder).write_bytes(bytes(range(256)) * 40)


def weights_as_folder(folder):
    weights_of(folder).unlink()
    weights_of(folder).mkdir()


def rename_tensor(tensors):
    tensors["W_E_renamed"] = tensors.pop(sorted(tensors)[0])


def nan_tensor(tensors):
    name = sorted(tensors)[0]
    tensors[name] = tensors[name].clone()
    tensors[name].view(-1)[0] = float("nan")


def extra_tensor(tensors):
    tensors["spare"] = torch.zeros(3)


DAMAGE = {
    "weights missing": (lambda f: weights_of(f).unlink(), "missing"),
    "weights truncated": (truncate, "damaged"),
    "weights empty": (lambda f: weights_of(f).write_bytes(b""), "damaged"),
    "weights garbage": (garbage_weights, "damaged"),
    "weights a folder": (weights_as_folder, "damaged"),
    "one byte changed": (flip_one_byte, "checksum"),
    "meta.json missing": (lambda f: meta_of(f).unlink(), "meta.json"),
    "meta.json cut short": (lambda f: meta_of(f).write_text(meta_of(f).read_text()[:500]), "meta.json"),
    "meta.json not UTF-8": (lambda f: meta_of(f).write_bytes(b"\xff\xfe\x00{"), "meta.json"),
    "meta.json a list": (lambda f: meta_of(f).write_text("[1, 2]"), "meta.json"),
    "no config": (edit_meta(lambda m: m.pop("config")), "config"),
    "no vocab": (edit_meta(lambda m: m.pop("vocab")), "vocab"),
    "no checksum": (edit_meta(lambda m: m.pop("sha256")), "sha256"),
    "checksum a number": (edit_meta(lambda m: m.__setitem__("sha256", 123)), "sha256"),
    "config a list": (edit_meta(lambda m: m.__setitem__("config", [64, 2])), "config"),
    "d_model a string": (edit_config(d_model="64"), "d_model"),
    "n_layers a fraction": (edit_config(n_layers=2.5), "n_layers"),
    "n_heads true": (edit_config(n_heads=True), "n_heads"),
    "d_head negative": (edit_config(d_head=-16), "d_head"),
    "unknown config key": (edit_config(n_experts=8), "n_experts"),
    "config key missing": (edit_config(d_model=DELETE), "d_model"),
    "unknown activation": (edit_config(act="swish"), "act"),
    "config smaller than tensors": (edit_config(d_model=32), "do not match"),
    "vocab shorter than config": (edit_meta(lambda m: m["vocab"].pop()), "vocab"),
    "vocab a string": (edit_meta(lambda m: m.__setitem__("vocab", "Pietro Paolo")), "vocab"),
    "vocab token twice": (edit_meta(lambda m: m["vocab"].__setitem__(5, "Pietro")), "twice"),
    "vocab token a number": (edit_meta(lambda m: m["vocab"].__setitem__(5, 5)), "vocab"),
    "tensor renamed": (edit_tensors(rename_tensor), "do not match"),
    "tensor added": (edit_tensors(extra_tensor), "do not match"),
    "NaN in a tensor": (edit_tensors(nan_tensor), "not finite"),
}


# ----------------------------------------------------------------------------- rows
@dataclass
class Row:
    what: str
    args: tuple = ()                      # a command line, or
    call: Callable | None = None          # a library call
    refusal: str | None = None            # fragment of the one clear line; None: an answer is right
    damage: Callable | None = None        # breaks something in the copied data folder
    answer: Callable = field(default=lambda out: True)   # checks the answer of an edge case

    @property
    def id(self):
        return self.what


def refuse(what, *args, says, damage=None):
    return Row(what, args=args, refusal=says, damage=damage)


def library(what, call, says=None, answer=lambda out: True, damage=None):
    return Row(what, call=call, refusal=says, answer=answer, damage=damage)


def cli_answer(what, *args, answer):
    return Row(what, args=args, answer=answer)


def _page(out):
    data = json.loads(out)
    probs = [n["prob"] for n in data["next"]]
    return all(math.isfinite(p) for p in probs) and abs(sum(probs) - 1) < 1e-6 and probs


def _lens_tops(out):
    return [len(s["top"]) for s in json.loads(out)["stages"]]


def _load_calling_game(_=None):
    return lib.load(CG)


def _logits():
    return torch.linspace(-3, 3, 28)


ROWS: list[Row] = [
    # --- the command line: prompts, models, knobs ---------------------------------------------
    refuse("predict: unknown model", "predict", "nonesuch", PROMPT, says="unknown model 'nonesuch'"),
    refuse("predict: unknown token", "predict", CG, "<BOS> Pietro chiama Giovanni", says="unknown token 'Giovanni'"),
    refuse("predict: lower-case name", "predict", CG, "<BOS> pietro chiama", says="did you mean 'Pietro'"),
    refuse("predict: blank prompt", "predict", CG, "   ", says="prompt is empty"),
    refuse("predict: empty prompt", "predict", CG, "", says="prompt is empty"),
    refuse("predict: prompt too long", "predict", CG, " ".join(["<BOS>"] + ["Pietro"] * 48), says="at most 48"),
    refuse("predict: temperature 0", "predict", CG, PROMPT, "--temperature", "0", says="temperature"),
    refuse("predict: temperature -1", "predict", CG, PROMPT, "--temperature", "-1", says="temperature"),
    refuse("predict: temperature nan", "predict", CG, PROMPT, "--temperature", "nan", says="temperature"),
    refuse("predict: temperature inf", "predict", CG, PROMPT, "--temperature", "inf", says="temperature"),
    refuse("predict: temperature a word", "predict", CG, PROMPT, "--temperature", "hot", says="temperature"),
    refuse("predict: temperature empty", "predict", CG, PROMPT, "--temperature", "", says="temperature"),
    refuse("predict: temperature 1e-300", "predict", CG, PROMPT, "--temperature", "1e-300", says="temperature"),
    refuse("predict: temperature 1e999", "predict", CG, PROMPT, "--temperature", "1e999", says="temperature"),
    refuse("predict: top-p 0", "predict", CG, PROMPT, "--top-p", "0", says="top-p"),
    refuse("predict: top-p 1.5", "predict", CG, PROMPT, "--top-p", "1.5", says="top-p"),
    refuse("predict: top-p -0.1", "predict", CG, PROMPT, "--top-p", "-0.1", says="top-p"),
    refuse("predict: top-p nan", "predict", CG, PROMPT, "--top-p", "nan", says="top-p"),
    refuse("predict: top-p a word", "predict", CG, PROMPT, "--top-p", "half", says="top-p"),
    refuse("predict: top-k 0", "predict", CG, PROMPT, "--top-k", "0", says="top-k"),
    refuse("predict: top-k -3", "predict", CG, PROMPT, "--top-k", "-3", says="top-k"),
    refuse("predict: top-k 2.5", "predict", CG, PROMPT, "--top-k", "2.5", says="top-k"),
    refuse("predict: top-k empty", "predict", CG, PROMPT, "--top-k", "", says="top-k"),
    cli_answer("predict: top-k huge means every token", "predict", CG, PROMPT, "--top-k", HUGE, "--json",
               answer=lambda out: len(_page(out)) == 28),
    cli_answer("predict: top-p 1e-12 keeps the best token", "predict", CG, PROMPT, "--top-p", "1e-12", "--json",
               answer=lambda out: len(_page(out)) == 1),
    # Below the running sum's tolerance a p cannot be told from 0; a subnormal one (1e-320) is even
    # read as 0 by a processor that flushes denormals.
    refuse("predict: top-p 1e-300", "predict", CG, PROMPT, "--top-p", "1e-300", says="below 1e-12"),
    refuse("predict: top-p 1e-320 (subnormal)", "predict", CG, PROMPT, "--top-p", "1e-320", says="below 1e-12"),
    cli_answer("predict: temperature 1e-6 is greedy", "predict", CG, PROMPT, "--temperature", "1e-6", "--json",
               answer=lambda out: max(_page(out)) > 0.99),
    refuse("predict: no prompt", "predict", CG, says="required: prompt"),
    refuse("predict: nothing", "predict", says="required"),
    refuse("predict: unknown option", "predict", CG, PROMPT, "--top-n", "3",
           says="unrecognized arguments: --top-n 3 (see: python -m lib predict --help)"),
    refuse("predict: option without value", "predict", CG, PROMPT, "--temperature", says="expected one argument"),
    refuse("lens: --top 0", "lens", CG, PROMPT, "--top", "0", says="--top"),
    refuse("lens: --top -1", "lens", CG, PROMPT, "--top", "-1", says="--top"),
    refuse("lens: --top a word", "lens", CG, PROMPT, "--top", "all", says="--top"),
    cli_answer("lens: --top huge means every token", "lens", CG, PROMPT, "--top", HUGE, "--json",
               answer=lambda out: set(_lens_tops(out)) == {28}),
    refuse("lens: unknown token", "lens", CG, "<BOS> Pietro chiama banane", says="unknown token 'banane'"),
    refuse("lens: empty prompt", "lens", CG, "", says="prompt is empty"),
    refuse("lens: prompt too long", "lens", CG, " ".join(["Pietro"] * 60), says="at most 48"),
    refuse("lens: unknown model", "lens", "gpt-2", PROMPT, says="unknown model 'gpt-2'"),
    refuse("check: unknown model", "check", "nonesuch", says="unknown model 'nonesuch'"),
    refuse("check: empty name", "check", "", says="model"),
    refuse("models: an extra word", "models", "all", says="(see: python -m lib models --help)"),
    refuse("no command", says="command"),
    refuse("unknown command", "fly", says="invalid choice"),
    refuse("the package's name as a command", "lib", "--help", says="see: python -m lib --help"),
    refuse("a command's help pointer", "predict", CG, says="see: python -m lib predict --help"),
    # --- model names that are paths -------------------------------------------------------
    refuse("predict: a relative path", "predict", "../models/calling-game", PROMPT, says="shipped models"),
    refuse("predict: an absolute path", "predict", "/etc", PROMPT, says="shipped models"),
    refuse("predict: a path through ..", "predict", "calling-game/../zero-layer", PROMPT, says="shipped models"),
    refuse("predict: a trailing slash", "predict", "calling-game/", PROMPT, says="shipped models"),
    refuse("predict: the models folder", "predict", ".", PROMPT, says="shipped models"),
    refuse("predict: its parent", "predict", "..", PROMPT, says="shipped models"),
    refuse("predict: an empty name", "predict", "", PROMPT, says="shipped models"),
    refuse("lens: an absolute path", "lens", "/etc", PROMPT, says="shipped models"),
    refuse("check: a relative path", "check", "../models/calling-game", says="shipped models"),
    refuse("train: a relative path", "train", "../models/calling-game", says="shipped models"),
    library("load: a relative path", lambda: lib.load("../models/calling-game"), says="shipped models"),
    library("load: an absolute path", lambda: lib.load("/etc"), says="shipped models"),
    library("load: None", lambda: lib.load(None), says="shipped models"),
    library("load: a number", lambda: lib.load(42), says="shipped models"),
    # --- train: refused before any training --------------------------------------------------
    refuse("train: unknown model", "train", "nonesuch", says="unknown model 'nonesuch'"),
    refuse("train: seed -1", "train", CG, "--seed", "-1", says="seed"),
    refuse("train: seed above 2**64", "train", CG, "--seed", HUGE, says="seed"),
    refuse("train: seed 1.5", "train", CG, "--seed", "1.5", says="seed"),
    refuse("train: seed a word", "train", CG, "--seed", "lucky", says="seed"),
    refuse("train: --out empty", "train", CG, "--out", "", says="--out"),
    refuse("train: --out under a file", "train", CG, "--out", "/dev/null/model", says="--out"),
    refuse("train: --out an existing file", "train", CG, "--out", "/etc/hostname", says="--out"),
    refuse("train: --out in a folder nothing can be made in", "train", "zero-layer", "--out", "/proc/nope/x",
           says="cannot be created"),
    refuse("train: --out the shipped folder", "train", CG, "--out", "{data}/models/calling-game",
           says="--replace-shipped"),
    refuse("train: --out inside data/", "train", CG, "--out", "{data}/models/mine", says="--replace-shipped"),
    refuse("train: --out the data folder itself", "train", CG, "--out", "{data}", says="--replace-shipped"),
    refuse("train: --out a folder of other files", "train", CG, "--out", "{data}/..", says="holds other files"),
    refuse("train: --out and --replace-shipped", "train", CG, "--out", "mine", "--replace-shipped", says="not both"),
    # --- numbers that pass a range check and still break -------------------------------------
    library("KV cache: a count above 2**64", lambda: _kv(10**30, 1, 1, 1, 2), says="layers"),
    library("KV cache: counts whose product overflows", lambda: _kv(10**100, 10**100, 10**100, 10**100, 2),
            says="layers"),
    library("KV cache: a float count", lambda: _kv(32.0, 4096, 32, 128, 2), says="layers"),
    library("KV cache: a bool count", lambda: _kv(32, 4096, True, 128, 2), says="heads"),
    library("KV cache: a string count", lambda: _kv(32, "4096", 32, 128, 2), says="context"),
    library("KV cache: zero d_head", lambda: _kv(32, 4096, 32, 0, 2), says="d_head"),
    library("KV cache: infinite bytes", lambda: _kv(32, 4096, 32, 128, float("inf")), says="bytes"),
    library("KV cache: NaN bytes", lambda: _kv(32, 4096, 32, 128, float("nan")), says="bytes"),
    library("KV cache: 1e400 bytes", lambda: _kv(32, 4096, 32, 128, 10**400), says="bytes"),
    library("KV cache: numpy integers are counts", lambda: _kv(*map(np.int64, (32, 32768, 32, 128)), np.float32(2)),
            answer=lambda size: size == 17_179_869_184),
    library("activations: T a bool", lambda: _activations(True), says="T"),
    library("activations: T a numpy integer", lambda: _activations(np.int64(5)),
            answer=lambda rows: rows[0].shape == (5,)),
    library("sample: seed above 2**64", lambda: lib.sample(_logits(), seed=2**64), says="seed"),
    library("sample: negative seed", lambda: lib.sample(_logits(), seed=-1), says="seed"),
    library("generate: seed above 2**64", lambda: _generate(seed=2**64), says="seed"),
    library("generate: seed a float", lambda: _generate(seed=1.5), says="seed"),
    library("softmax: temperature 1e-300", lambda: lib.softmax(_logits(), 1e-300), says="temperature"),
    library("results page: top-p 1e-12", lambda: lib.results_page(_logits(), [str(i) for i in range(28)], top_p=1e-12),
            answer=lambda page: len(page) == 1 and page[0].prob == 1.0),
    library("results page: top-p 1e-300", lambda: lib.results_page(_logits(), [str(i) for i in range(28)], top_p=1e-300),
            says="below 1e-12"),
    library("encode: a number as the prompt", lambda: _load_calling_game().encode(42), says="prompt"),
    library("encode: None as the prompt", lambda: _load_calling_game().encode(None), says="prompt"),
    library("self-check: an answer of 10**400", lambda: _self_check(10**400), answer=lambda fb: not fb.ok),
    library("self-check: a numpy array of two numbers", lambda: _self_check(np.array([1.0, 2.0])),
            answer=lambda fb: not fb.ok and "single" in fb.message),
    # A one-element array or tensor is read as its number (what np.mean or a tensor's sum returns).
    library("self-check: a one-element array", lambda: _self_check(np.array([1.0])), answer=lambda fb: fb.answered),
    library("self-check: a numpy number", lambda: _self_check(np.float64(1.0)), answer=lambda fb: fb.answered),
    library("self-check: an array of tokens as a choice", lambda: _choice_check(np.array(["Tarso", "Cefa"])),
            answer=lambda fb: not fb.ok and "should be one of" in fb.message),
    library("self-check: a count of 1e300", lambda: _whole_check(1e300), answer=lambda fb: not fb.ok),
    library("self-check: a count of 10**400", lambda: _whole_check(10**400), answer=lambda fb: not fb.ok),
]

# --- damaged models: through the command line, the library, and the check command -----------
def in_calling_game(damage):
    return lambda data: damage(data / "models" / CG)


for name, (damage, says) in DAMAGE.items():
    ROWS.append(Row(f"damaged ({name}): predict", args=("predict", CG, PROMPT), refusal=says,
                    damage=in_calling_game(damage)))
for name in ("weights truncated", "one byte changed", "meta.json cut short", "config smaller than tensors"):
    damage, says = DAMAGE[name]
    ROWS.append(Row(f"damaged ({name}): lib.load", call=_load_calling_game, refusal=says,
                    damage=in_calling_game(damage)))
for name in ("one byte changed", "no config"):
    damage, says = DAMAGE[name]
    ROWS.append(Row(f"damaged ({name}): check", args=("check", CG), refusal=says, damage=in_calling_game(damage)))
    ROWS.append(Row(f"damaged ({name}): models", args=("models",), refusal=says, damage=in_calling_game(damage)))


# Part 2's real-language rows, read by the `words` command and by the chapters through the library.
def real_language(data):
    return data / "real-language"


def cut_rows(data):
    rows = real_language(data) / "minilm-words.safetensors"
    rows.write_bytes(rows.read_bytes()[:5000])


def drop_a_word(data):
    path = real_language(data) / "provenance.json"
    provenance = json.loads(path.read_text())
    provenance["words"].pop()
    path.write_text(json.dumps(provenance))


ROWS += [
    refuse("words: the rows file missing", "words", says="no real-language rows",
           damage=lambda d: (real_language(d) / "minilm-words.safetensors").unlink()),
    refuse("words: the rows file cut short", "words", says="damaged", damage=cut_rows),
    refuse("words: provenance.json not JSON", "words", says="damaged",
           damage=lambda d: (real_language(d) / "provenance.json").write_text("{'words': ")),
    refuse("words: a word fewer than rows", "words", says="do not agree", damage=drop_a_word),
    library("real words: rows cut short", lambda: _real_words(), says="damaged", damage=cut_rows),
]


def _real_words():
    from lib.content.real_words import load
    return load()


def _kv(*args):
    from lib.analysis.inventory import kv_cache_bytes
    return kv_cache_bytes(*args)


def _activations(T):
    from lib.analysis.inventory import GPT2_SMALL, activations
    return activations(GPT2_SMALL, T)


def _generate(seed):
    lm = _load_calling_game()
    return lib.generate(lm.model, lm.encode(PROMPT), 3, do_sample=True, seed=seed)


def _self_check(answer):
    from lib.exercises import check_number
    return check_number(answer, 2.0, tol=0.01, what="The value")


def _choice_check(answer):
    from lib.exercises import check_choice
    return check_choice(answer, ["Tarso", "Cefa"], "Tarso", right="right", wrong="wrong")


def _whole_check(answer):
    from lib.exercises import check_whole_number
    return check_whole_number(answer, 12, what="The count")


# ----------------------------------------------------------------------------- the runner
@pytest.fixture
def tripwire(monkeypatch):
    """Training replaced by an alarm: bad input must be refused before training starts."""
    import lib.shipped.retrain as retrain

    def alarm(*args, **kwargs):
        raise AssertionError("training started before the input was checked")
    monkeypatch.setattr(retrain, "train", alarm)


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_bad_input_gets_one_clear_line(row, course_data, tripwire, run_in_process):
    if row.damage is not None:
        row.damage(course_data)
    if row.call is not None:
        if row.refusal is None:
            assert row.answer(row.call())
            return
        with pytest.raises(CourseError) as caught:
            row.call()
        message = str(caught.value)
        assert "\n" not in message and row.refusal in message, message
        return
    args = [a.replace("{data}", str(course_data)) for a in row.args]
    code, out, err = run_in_process(*args)
    if row.refusal is None:
        assert code == 0 and err == "", err
        assert row.answer(out)
        return
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and lines[0].startswith("error: "), (code, out, err)
    assert row.refusal in lines[0], lines[0]


def test_the_table_is_long_enough():
    """The issue counted 62 bad inputs; the table keeps at least as many."""
    assert len(ROWS) >= 62
