"""Shipped models: saving, listing, loading and verifying the weights in `data/models/`.

Each model is a folder holding `model.safetensors` (tensors only: loading runs no code) and
`meta.json` (config, vocabulary, training recipe, final loss, measured behaviour, and the
SHA-256 of the weights file). The folder is found next to the package, or under $COURSE_DATA.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from lib.model.config import ModelConfig
from lib.errors import CourseError, require
from lib.model.transformer import Transformer
from lib.model.vocab import Vocabulary

WEIGHTS, META = "model.safetensors", "meta.json"


def data_dir() -> Path:
    env = os.environ.get("COURSE_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "data"


def models_dir() -> Path:
    return data_dir() / "models"


def shipped_names() -> list[str]:
    root = models_dir()
    return sorted(p.name for p in root.iterdir() if (p / META).is_file()) if root.is_dir() else []


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
                f"the prompt has {len(ids)} tokens but {self.name} reads at most {self.model.cfg.n_ctx}")
        return ids


def save_model(folder: Path, model: Transformer, vocab: Vocabulary, meta: dict) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}
    save_file(tensors, str(folder / WEIGHTS))
    meta = dict(meta)
    meta["config"] = model.cfg.to_dict()
    meta["vocab"] = vocab.to_list()
    meta["n_params"] = model.n_params()
    meta["sha256"] = sha256(folder / WEIGHTS)
    (folder / META).write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def model_folder(name: str) -> Path:
    folder = models_dir() / str(name)
    if not (folder / META).is_file():
        known = ", ".join(shipped_names()) or "none found in " + str(models_dir())
        raise CourseError(f"unknown model {name!r}; shipped models: {known}")
    return folder


_LOADED: dict[tuple[str, str], LoadedModel] = {}


def load(name: str, folder: Path | None = None) -> LoadedModel:
    """A shipped model by name, ready to run (cached: chapters may call this freely)."""
    folder = Path(folder) if folder is not None else model_folder(name)
    key = (name, str(folder.resolve()))
    if key not in _LOADED:
        meta = json.loads((folder / META).read_text())
        model = Transformer(ModelConfig.from_dict(meta["config"]))
        state = load_file(str(folder / WEIGHTS))
        missing = set(model.state_dict()) ^ set(state)
        require(not missing, f"the weights of {name} do not match its config: {sorted(missing)}")
        model.load_state_dict(state)
        model.eval()
        for p in model.parameters():
            p.requires_grad_(False)
        _LOADED[key] = LoadedModel(name, model, Vocabulary(meta["vocab"]), meta)
    return _LOADED[key]
