"""Shipped models: saving, listing, loading and verifying the weights in `data/models/`.

Each model is a folder holding `model.safetensors` (tensors only: loading runs no code) and
`meta.json` (config, vocabulary, training recipe, final loss, measured behaviour, and the
SHA-256 of the weights file). The folder is found next to the package, or under $COURSE_DATA.

Loading trusts nothing on disk: the checksum is verified on every load (the files are small:
it costs well under a millisecond), and every way a folder can be damaged (a file missing or
cut short, meta.json malformed or edited, a config that does not fit the tensors, numbers that
are not finite) ends in one `CourseError` that names the model, the fault and the remedy.
Saving is atomic: the new folder is written beside the old one and renamed into place, so an
interrupted save leaves the old model whole.
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load as tensors_from_bytes
from safetensors.torch import save_file

from lib.data import PACKAGE_DATA, data_dir  # noqa: F401  (where the models live)
from lib.model.config import ModelConfig
from lib.messages import say
from lib.errors import CourseError, require
from lib.model import smollm2
from lib.model.transformer import Transformer
from lib.model.vocab import Vocabulary

from lib.model.catalog import (META, WEIGHTS, damaged, models_dir, read_meta, shipped_names,  # noqa: F401
                               unknown_model)  # (named here too)
# Snapshots of the weights over training, in float16 (a model trained with `TrainConfig.checkpoints`):
# each tensor named "STEP/NAME", e.g. "250/blocks.0.attn.W_Q"; meta.json's "checkpoints" lists the
# steps and the file's SHA-256.
CHECKPOINTS = "checkpoints.safetensors"
CHECKPOINT_DTYPE = torch.float16


# ----------------------------------------------------------------------------- training runs
# A recipe's lesson is measured on several training runs, not one: besides the run the pages draw
# (training seed 0, in data/models/NAME) each trainable model ships other runs of the same recipe in
# data/runs/NAME/seed-S/ (the same two files). `use_run` makes `load(NAME)` read one of them, so that
# every measurement written against the shipped model can be taken again on another run unchanged.
RUN_PREFIX = "seed-"


def runs_dir() -> Path:
    return data_dir() / "runs"


def shipped_runs(name: str) -> list[Path]:
    """Every shipped training run of a model: its shipped folder first (the pages' run), then the
    others in the order of their training seeds."""
    first = model_folder(name)
    root = runs_dir() / name
    others = [p for p in root.glob(RUN_PREFIX + "*") if (p / META).exists()] if root.is_dir() else []
    return [first] + sorted(others, key=lambda p: int(p.name[len(RUN_PREFIX):]) if
                            p.name[len(RUN_PREFIX):].isdigit() else 1 << 30)


def run_label(folder: Path) -> str:
    """How a run is named in tables: `seed 3` (its training seed, from its metadata)."""
    try:
        return f"seed {json.loads((Path(folder) / META).read_text())['train']['seed']}"
    except (OSError, ValueError, KeyError, TypeError):
        return Path(folder).name


_RUN: dict[str, Path] = {}


class use_run:
    """`with use_run("calling-game", folder):` makes `load("calling-game")` read `folder` instead of
    the shipped run. Measurements cache what they compute (per process), so a run other than the
    shipped one is best measured in a process of its own (as `python -m lib claims --runs` does)."""

    def __init__(self, name: str, folder: Path | str):
        model_folder(name)               # the name must be a shipped model's
        self.name, self.folder = name, Path(folder)

    def __enter__(self):
        self.before = _RUN.get(self.name)
        _RUN[self.name] = self.folder
        return self

    def __exit__(self, *exc):
        if self.before is None:
            _RUN.pop(self.name, None)
        else:
            _RUN[self.name] = self.before


def in_use_folder(name: str) -> Path:
    """The folder `load(name)` reads: the one `use_run` names, else the shipped run's."""
    return _RUN.get(name) or model_folder(name)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class LoadedModel:
    name: str
    model: Transformer
    vocab: Vocabulary
    meta: dict

    def encode(self, text) -> list[int]:
        ids = self.vocab.encode(text)
        require(len(ids) <= self.model.cfg.n_ctx,
                say("reads_at_most", n=len(ids), model=self.name, n_ctx=self.model.cfg.n_ctx))
        return ids


def model_folder(name) -> Path:
    """The folder of a shipped model, by its name; a path is not a name."""
    if not isinstance(name, str) or name not in shipped_names():
        raise CourseError(unknown_model(name))
    return models_dir() / name


# ----------------------------------------------------------------------------- loading
# Each reader raises a CourseError naming one fault; `load` adds the model's name and the remedy.
_read_meta = read_meta      # (lib.model.catalog: read without torch, for `models` too)


def _read_weights(folder: Path, expected_sha: str, file: str = WEIGHTS) -> dict[str, torch.Tensor]:
    path = folder / file
    require(path.exists(), f"{file} is missing")
    require(path.is_file(), f"{file} is not a file")
    data = path.read_bytes()       # read once: the checksum and the tensors see the same bytes
    require(hashlib.sha256(data).hexdigest() == expected_sha,
            f"{file} ({len(data):,} bytes) does not match the checksum in {META}, so it changed after it was saved")
    try:
        return tensors_from_bytes(data)
    except Exception as e:  # safetensors raises its own error type, and others on odd headers
        raise CourseError(f"{file} cannot be read as safetensors ({str(e).splitlines()[0]})") from None


def _build(meta: dict, state: dict[str, torch.Tensor]) -> tuple[Transformer, Vocabulary]:
    try:
        cfg = ModelConfig.from_dict(meta["config"])
        vocab = Vocabulary(meta["vocab"])
    except CourseError as e:
        raise CourseError(f"{META}: {e}") from None
    require(len(vocab) == cfg.vocab_size,
            f"{META} lists {len(vocab)} vocab tokens but its config says vocab_size {cfg.vocab_size}")
    model = Transformer(cfg)
    expected = model.state_dict()
    missing, unexpected = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    require(not (missing or unexpected), "the tensors do not match the config: " + "; ".join(
        f"{label} {', '.join(names)}" for label, names in (("missing", missing), ("unexpected", unexpected)) if names))
    for key, tensor in state.items():
        require(tensor.shape == expected[key].shape, f"the tensors do not match the config: {key} is "
                f"{list(tensor.shape)} but the config makes it {list(expected[key].shape)}")
        require(tensor.is_floating_point(), f"tensor {key} holds {tensor.dtype}, not floating-point numbers")
        require(bool(torch.isfinite(tensor).all()), f"tensor {key} holds numbers that are not finite")
    model.load_state_dict(state)
    # Frozen: nothing a chapter computes from a shipped model should carry gradients.
    model.eval().requires_grad_(False)
    return model, vocab


def read_model(name: str, folder: Path | None = None) -> LoadedModel:
    """A model read from disk and verified (checksum, metadata, shapes, finite numbers)."""
    folder = Path(folder) if folder is not None else model_folder(name)
    try:
        meta = _read_meta(folder)
        model, vocab = _build(meta, _read_weights(folder, meta["sha256"]))
    except CourseError as e:
        raise damaged(name, folder, str(e)) from None
    return LoadedModel(name, model, vocab, meta)


_LOADED: dict[tuple[str, str], LoadedModel] = {}


def load(name: str, folder: Path | None = None) -> LoadedModel:
    """A shipped model by name, ready to run (cached: chapters may call this freely).

    Read from disk, and verified, once per session and folder; the folder is the shipped run's
    unless `use_run` names another. "smollm2" is the real next-token model, read from its own
    package (`lib.model.smollm2`), not from data/."""
    if name == smollm2.NAME and folder is None:
        return smollm2.load()
    folder = Path(folder) if folder is not None else _RUN.get(name) or model_folder(name)
    key = (name, str(folder.resolve()))
    if key not in _LOADED:
        _LOADED[key] = read_model(name, folder)
    return _LOADED[key]


def load_checkpoints(lm: LoadedModel, folder: Path | None = None) -> list[tuple[int, Transformer]]:
    """The snapshots of a model over training, (step, model) from step 0 to the last, verified like
    the weights (checksum, shapes, finite numbers); widened from float16 to float32."""
    folder = Path(folder) if folder is not None else model_folder(lm.name)
    info = lm.meta.get("checkpoints")
    require(isinstance(info, dict) and isinstance(info.get("steps"), list) and isinstance(info.get("sha256"), str),
            f"the model {lm.name} was saved without checkpoints over training")
    try:
        tensors = _read_weights(folder, info["sha256"], CHECKPOINTS)
        out = []
        for step in info["steps"]:
            state = {k.split("/", 1)[1]: v.float() for k, v in tensors.items() if k.split("/", 1)[0] == str(step)}
            model, _ = _build(lm.meta, state)
            out.append((int(step), model))
    except CourseError as e:
        raise CourseError(f"the checkpoints of {lm.name} are damaged: {e}; restore {folder} from the course's "
                          f"repository") from None
    return out


# ----------------------------------------------------------------------------- saving
def inside(path: Path, folder: Path) -> bool:
    path, folder = Path(path).resolve(), Path(folder).resolve()
    return path == folder or folder in path.parents


def check_save_folder(folder, replace_shipped: bool = False) -> Path:
    """Refuse, before any work is done, a folder a model cannot or must not be saved to.

    The shipped models are replaced only when asked (`replace_shipped`); an existing folder is
    replaced only if it is empty or holds a saved model, never a folder of other files."""
    require(folder is not None and str(folder).strip() != "",
            "--out must name a folder, got an empty path (the default is ./retrained/MODEL)")
    folder = Path(folder).expanduser()
    if not replace_shipped:
        for shipped in {data_dir(), PACKAGE_DATA}:
            require(not inside(folder, shipped),
                    f"--out {folder} is inside the course's data folder {shipped}; the shipped models are "
                    "replaced only on request: `python -m lib train MODEL --replace-shipped`")
    if folder.exists():
        require(folder.is_dir(), f"--out {folder} is a file; give a folder (new, or one a model was saved to)")
        others = sorted(p.name for p in folder.iterdir() if p.name not in (WEIGHTS, META, CHECKPOINTS))
        require(not others, f"--out {folder} holds other files ({', '.join(others[:3])}); give a new folder, "
                            "or one a model was saved to (it is replaced whole)")
    ancestor = folder.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    require(ancestor.is_dir(), f"--out {folder} cannot be created: {ancestor} is a file, not a folder")
    require(os.access(ancestor, os.W_OK | os.X_OK), f"--out {folder} cannot be created: no permission to write in {ancestor}")
    # The permission bits do not tell everything (root may "write" in /proc, a disk may be read-only):
    # the folder is made now, before the work, so a folder that cannot be made costs no training.
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CourseError(f"--out {folder} cannot be created: {e.strerror or e} ({ancestor}); give a folder you "
                          "can write, or leave --out out for ./retrained/MODEL") from None
    return folder


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_model(folder: Path, model: Transformer, vocab: Vocabulary, meta: dict,
               checkpoints: list[tuple[int, dict]] | None = None) -> dict:
    """Write the model into `folder`, whole or not at all: the files go into a temporary folder
    beside it, which then takes its place with a rename. `checkpoints`, (step, state dict) pairs,
    are saved in float16 beside the weights."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.with_name(f".{folder.name}.saving-{os.getpid()}-{secrets.token_hex(4)}")
    staging.mkdir()
    try:
        tensors = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}
        save_file(tensors, str(staging / WEIGHTS))
        meta = dict(meta)
        meta["config"] = model.cfg.to_dict()
        meta["vocab"] = vocab.to_list()
        meta["n_params"] = model.n_params()
        meta["sha256"] = sha256(staging / WEIGHTS)
        files = [WEIGHTS, META]
        if checkpoints:
            save_file({f"{step}/{k}": v.detach().to(CHECKPOINT_DTYPE).contiguous() for step, state in checkpoints
                       for k, v in state.items()}, str(staging / CHECKPOINTS))
            meta["checkpoints"] = {"steps": [int(step) for step, _ in checkpoints], "dtype": "float16",
                                   "sha256": sha256(staging / CHECKPOINTS)}
            files.append(CHECKPOINTS)
        (staging / META).write_text(json.dumps(meta, indent=2) + "\n")
        # safetensors creates its file readable by its owner only; give it the mode of any other file.
        for name in files:
            os.chmod(staging / name, (staging / META).stat().st_mode)
            _sync(staging / name)
        _swap_into_place(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for key in [k for k in _LOADED if k[1] == str(folder.resolve())]:
        del _LOADED[key]          # a later load() must see the new weights, not a cached copy
    return meta


def _swap_into_place(staging: Path, folder: Path) -> None:
    """Rename `staging` to `folder`. An old folder is first moved aside, and moved back if the
    second rename fails or is interrupted, so at every moment one whole model is in place."""
    old = None
    if folder.exists():
        old = folder.with_name(f".{folder.name}.replaced-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        os.rename(folder, old)
    try:
        os.rename(staging, folder)
    except BaseException:
        if old is not None:
            os.rename(old, folder)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
