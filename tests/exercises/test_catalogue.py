"""The exercise catalogue (lib.exercises.catalogue): every exercise with its kind and its self-check."""

from pathlib import Path

import pytest

from lib import chapters

ROOT = Path(__file__).resolve().parents[2]


def test_the_catalogue_reads_kinds_and_refuses_a_misspelt_one(tmp_path):
    from lib.errors import CourseError
    from lib.exercises.catalogue import catalogue

    (tmp_path / "_toc.yml").write_text("root: intro\nchapters:\n- file: ch\n")
    exercise = ":::{{exercise}}\n:class: {kind}\n:label: ex-{n}\n\nDo it.\n:::\n"
    (tmp_path / "ch.md").write_text("# A chapter\n\n" + exercise.format(kind="predict", n=1)
                                    + exercise.format(kind="investigate extra", n=2))
    assert [(e.label, e.kind, e.kind_label) for e in catalogue(tmp_path)] == [
        ("ex-1", "predict", "Predict, then check"), ("ex-2", "investigate", "Investigate")]
    (tmp_path / "ch.md").write_text("# A chapter\n\n" + exercise.format(kind="wirte", n=3))
    with pytest.raises(CourseError, match="did you mean 'write'"):
        catalogue(tmp_path)


def test_the_catalogue_lists_every_exercise_with_its_self_check():
    from lib.exercises.catalogue import catalogue

    listed = catalogue()
    written = sum(p.read_text().count(":::{exercise}") for p in (ROOT / "chapters").rglob("*.md")
                  if not any(part.startswith(".") for part in p.parts))
    assert len(listed) == written >= 39
    kinds = {e.label: e.kind for e in listed}
    assert kinds["ex-page-softmax"] == "write" and kinds["ex-page-hot"] == "predict"
    assert kinds["ex-page-hot-rounds"] == "investigate"
    assert set(kinds.values()) <= {"write", "predict", "investigate", None}
    assert len({e.label for e in listed}) == len(listed), "exercise labels are unique"
    assert all(e.checks for e in listed), [e.label for e in listed if not e.checks]
    for e in listed:
        module = chapters.checks(e.chapter)
        for name in e.checks:
            assert callable(getattr(module, name, None)), f"{e.label}: the chapter's checks have no {name}"


def test_every_exercise_in_the_catalogue_has_a_kind():
    """Every exercise on the pages names its kind (write, predict or investigate): the website labels it and
    the plans count it. An exercise without one fails here, naming it."""
    from lib.exercises.catalogue import KINDS, catalogue

    listed = catalogue()
    assert listed
    assert [f"{e.chapter}: {e.label}" for e in listed if e.kind not in KINDS] == []
