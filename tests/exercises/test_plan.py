"""The chapter plans (lib.exercises.plan) and the instructor page's plan of every chapter with exercises."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

from lib import chapters


def _fabricated_chapter(tmp_path, exercises: str):
    """A book of one chapter, `ch`, with some prose, two code cells and the given exercises."""
    (tmp_path / "_toc.yml").write_text("root: intro\nchapters:\n- file: ch\n")
    prose = " ".join(["word"] * 240)
    (tmp_path / "ch.md").write_text(
        "---\njupytext:\n  formats: md:myst\n---\n\n# A chapter\n\n" + prose + "\n\n"
        "```{code-cell} ipython3\n:tags: [hide-input]\n\nprint('a table to study, not words to read')\n```\n\n"
        "```{code-cell} ipython3\n:tags: [remove-cell]\n\nhidden = 'set-up the reader never sees'\n```\n\n"
        "## Exercises\n\n" + exercises)


def _exercise(label, kind, call, module="results_page"):
    option = f":class: {kind}\n" if kind else ""
    return (f":::{{exercise}}\n:label: {label}\n{option}\nDo it.\n:::\n\n"
            f"```{{code-cell}} ipython3\n:tags: [remove-cell, exercise-stub]\n\n"
            f"from {chapters.unit(module).package} import checks as check\nanswer = ...\ncheck.{call}\n```\n\n")


def test_a_chapter_plan_counts_kinds_and_lists_the_exercises_that_suit_grading(tmp_path):
    from lib.exercises import plan as teaching

    _fabricated_chapter(tmp_path, "".join([
        _exercise("ex-write", "write", "softmax_with_temperature(answer)"),
        _exercise("ex-predict", "predict", "top_prob_at(lm, answer)"),
        _exercise("ex-value", "investigate", "broken_rounds(lm, answer)"),
        _exercise("ex-open", "investigate", "confident_impossible(lm, answer)", module="hallucination"),
        _exercise("ex-unkinded", None, "smallest_scale(answer)", module="search_by_hand"),
        _exercise("ex-predict-2", "predict", "survivors_after_top_k(lm, answer)"),
    ]))
    [plan] = teaching.chapter_plans(tmp_path)
    assert (plan.chapter, plan.title) == ("ch", "A chapter")
    assert plan.counts == {"write": 1, "predict": 2, "investigate": 2, None: 1}
    assert list(plan.counts) == ["write", "predict", "investigate", None], "in the book's order of kinds"
    # The open investigation (a prompt of the learner's own) is the one left out.
    assert plan.graded == ("ex-write", "ex-predict", "ex-value", "ex-unkinded", "ex-predict-2")
    # Words of prose before the exercises only: not the front matter, the code or the tasks.
    assert (plan.words, plan.outputs) == (242, 1)
    m = teaching.MINUTES_PER_EXERCISE
    assert plan.exercise_minutes == m["write"] + 2 * m["predict"] + 2 * m["investigate"] + m[None]
    assert plan.reading_minutes == round(242 / teaching.WORDS_PER_MINUTE + teaching.MINUTES_PER_OUTPUT)
    assert plan.minutes % teaching.ROUND_TO == 0
    assert plan.reading_minutes + plan.exercise_minutes <= plan.minutes < (
        plan.reading_minutes + plan.exercise_minutes + teaching.ROUND_TO)
    text = teaching.plan_markdown(plan)
    assert "1 write, 2 predict, 2 investigate, 1 without a kind yet" in text
    assert "{ref}`ex-unkinded <ex-unkinded>`" in text and "ex-open" not in text
    assert f"about {plan.minutes} minutes" in text and "242 words, 1 table, figure or explorer" in text


def test_an_exercise_set_in_the_text_is_timed_as_an_exercise_not_read_as_prose(tmp_path):
    from lib.exercises import plan as teaching

    # A predict placed before the explorer that checks it: its task, answer cell and solution sit in
    # the prose; the plan counts it once, as an exercise.
    in_text = (_exercise("ex-early", "predict", "top_prob_at(lm, answer)")
               + ":::{solution-start} ex-early\n:class: dropdown\n:::\n\nWhy, in five more words.\n\n"
               "```{code-cell} ipython3\nanswer = 0.5\n```\n\n:::{solution-end}\n:::\n\nThen two words.\n\n")
    _fabricated_chapter(tmp_path, _exercise("ex-write", "write", "softmax_with_temperature(answer)"))
    text = (tmp_path / "ch.md").read_text().replace("## Exercises", in_text + "## Exercises")
    (tmp_path / "ch.md").write_text(text)
    [plan] = teaching.chapter_plans(tmp_path)
    assert [e for e in plan.counts if plan.counts[e]] == ["write", "predict"]
    assert (plan.words, plan.outputs) == (242 + 3, 1), "the prose after it is read; the exercise is not"


def test_a_chapter_plan_refuses_a_misspelt_kind_and_a_check_that_is_not_there(tmp_path):
    from lib.errors import CourseError
    from lib.exercises import plan as teaching
    from lib.exercises.catalogue import Exercise

    _fabricated_chapter(tmp_path, _exercise("ex-1", "predcit", "top_prob_at(lm, answer)"))
    with pytest.raises(CourseError, match="did you mean 'predict'"):
        teaching.chapter_plans(tmp_path)
    with pytest.raises(CourseError, match="'wirte' is not a kind of exercise"):
        teaching.count_by_kind([Exercise("ch", "A chapter", "ex-1", "wirte", "Do it.", ("f",), "results_page")])
    _fabricated_chapter(tmp_path, _exercise("ex-1", "investigate", "no_such_check(answer)"))
    with pytest.raises(CourseError, match="no_such_check is not in the checks of chapter results_page"):
        teaching.chapter_plans(tmp_path)
    with pytest.raises(CourseError, match="not a chapter with exercises"):
        teaching.plan_of("chapters/part9/nowhere", [])


def instructor_page_sections() -> dict[str, str]:
    """The instructor page's ### sections, by the chapter whose plan each one prints."""
    text = (ROOT / "instructors.md").read_text()
    sections = {}
    for section in re.split(r"^(?=#{2,3} )", text, flags=re.M):
        for chapter in re.findall(r'^plan\("([^"]+)"\)', section, re.M):
            assert chapter not in sections, f"{chapter} has two plan entries on the instructor page"
            sections[chapter] = section
    return sections


def test_every_chapter_with_exercises_has_a_plan_on_the_instructor_page():
    from lib.exercises.catalogue import catalogue

    chapters = {e.chapter: e.title for e in catalogue()}
    sections = instructor_page_sections()
    assert set(chapters) - set(sections) == set(), "chapters with exercises but no plan on instructors.md"
    assert set(sections) - set(chapters) == set(), "plans on instructors.md for chapters without exercises"
    for chapter, section in sections.items():
        assert section.startswith(f"### {chapters[chapter]}\n"), f"{chapter}: the section is headed by its title"
        assert f"{{doc}}`the chapter <{chapter}>`, a learner can:" in section, chapter
        assert len(re.findall(r"^- \S", section, re.M)) >= 2, f"{chapter}: at least two things a learner can do"
        assert "**Before it:**" in section and "Mathematics:" in section, f"{chapter}: its prerequisites"
