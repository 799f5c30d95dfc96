"""Where the shipped data lives: `data/` next to the package, or the folder $COURSE_DATA names.

The models (`lib.model.store`), the real-language rows (`lib.content.real_words`), the stored
t-SNE runs (`lib.analysis.maps.tsne_store`) and SmolLM2's stored continuations
(`lib.chapters.part3.real_model.decoding`) are all read from here.
"""
from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DATA = Path(__file__).resolve().parents[1] / "data"


def data_dir() -> Path:
    env = os.environ.get("COURSE_DATA")
    return Path(env) if env else PACKAGE_DATA
