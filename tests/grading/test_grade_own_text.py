"""Own-text exercises graded: a check call that takes two answers a learner writes (a line of their own
and a prediction about it, `check.copies_without_heads(my_text, still_copies)`), judged by running
SmolLM2 on the learner's own line in the checker.

One chapter (induction), learners who return only what they need (the checks' import, a write
exercise, the own-text exercise), so the chapter's own cells do not run: an honest learner, one who
typed the answer into a fresh cell (found by its content), one whose prediction is garbage, one who
left the prediction out, one whose line is empty, and one whose line is too long for the model's
check. Each costs that exercise only, with a note or message that says why; the honest write
exercise beside it is graded as ever. The Otter export grades the same exercise with both answers.
"""
import csv
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from .test_grade import ROOT, grade, notebooks
from .test_grade_otter import otter_scores

CHAPTER = "chapters/part1/induction"
NAME = "induction.ipynb"
OWN, WRITE = "ex-induction-own-text", "ex-induction-prefix"
SETUP = "from lib.chapters.part1.induction import checks as check\nimport numpy as np"
ZORK = "Zork plinth umber quasar, Mavis Oduya and Teodor Brnčić"


def worked() -> dict:
    return notebooks.solution_code(ROOT / (CHAPTER + ".md"))


def own_cell(text_line: str, prediction_line: str | None) -> str:
    lines = [text_line] + ([prediction_line] if prediction_line is not None else [])
    return "\n".join(lines + ["check.copies_without_heads(my_text, still_copies)"])


def notebook(own_source: str | None, labelled: bool = True):
    """The checks' import, the write exercise's worked solution and the own-text answer cell."""
    answer = lambda label: {"course": {"exercise": label, "role": "answer"}}   # noqa: E731
    cells = [nbformat.v4.new_code_cell(SETUP),
             nbformat.v4.new_code_cell(worked()[WRITE], metadata=answer(WRITE))]
    if own_source is not None:
        cells.append(nbformat.v4.new_code_cell(own_source, metadata=answer(OWN) if labelled else {}))
    return nbformat.v4.new_notebook(cells=cells)


LEARNERS = {
    "ada": (worked()[OWN], True),                                           # the worked solution
    "bea": (worked()[OWN], False),                                          # typed into a fresh cell
    "cy": (own_cell(f"my_text = {ZORK!r}", "still_copies = 42"), True),     # a garbage prediction
    "dan": (own_cell(f"my_text = {ZORK!r}", None), True),                   # no prediction at all
    "eve": (own_cell('my_text = ""', 'still_copies = "no"'), True),         # an empty line
    "fay": (own_cell("my_text = ' '.join(f'w{i}' for i in range(60))", 'still_copies = "no"'), True),  # too long
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    class_dir = tmp_path_factory.mktemp("own-text-class")
    for learner, (source, labelled) in LEARNERS.items():
        (class_dir / learner).mkdir()
        nbformat.write(notebook(source, labelled), class_dir / learner / NAME)
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), str(class_dir), "--chapters",
                             "induction", "--wall-timeout", "300"], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    with (class_dir / "gradebook.csv").open() as f:
        rows = {row["learner"]: row for row in csv.DictReader(f)}
    feedback = {path.stem: path.read_text() for path in (class_dir / "feedback").iterdir()}
    return rows, feedback, result.stdout


def test_an_honest_learner_gets_the_mark_on_an_own_text_exercise(graded):
    rows, _, _ = graded
    for name in ("ada", "bea"):
        assert (rows[name][OWN], rows[name][WRITE]) == ("correct", "correct"), (name, rows[name]["notes"])
    assert f"{OWN}: no answer cell labelled {OWN}: graded cell 3, found by its content (it makes the stub's " \
           "check call)" in rows["bea"]["notes"], rows["bea"]["notes"]


def test_a_missing_or_garbage_answer_costs_that_exercise_only_and_says_why(graded):
    rows, feedback, _ = graded
    for name in ("cy", "dan", "eve", "fay"):
        assert rows[name][WRITE] == "correct", (name, rows[name]["notes"])
        assert rows[name][OWN] != "correct", (name, rows[name]["notes"])
    # The prediction is no choice the check offers: the check's own message, which names what it allows.
    assert rows["cy"][OWN] == "not yet"
    assert "the answer should be one of 'yes', 'no'; got 42." in feedback["cy"]
    # No prediction: the cell's check call fails, and the note names the answer that is not there.
    assert rows["dan"][OWN] == "error"
    assert f"{OWN}: the cell raised NameError; no `still_copies` after it" in rows["dan"]["notes"], rows["dan"]["notes"]
    # An empty line, and one longer than the check reads: the check refuses them, and its message says why.
    assert rows["eve"][OWN] == "error"
    assert f"{OWN}: the cell raised CourseError: the check's message says why" in rows["eve"]["notes"], rows["eve"]["notes"]
    assert "the prompt is empty" in feedback["eve"], feedback["eve"]
    assert "this explorer reads at most 64" in feedback["fay"], feedback["fay"]


def test_a_long_own_text_is_refused_in_the_checks_words_and_the_next_learner_is_checked():
    """The check runs SmolLM2 on the learner's own text in the checker: the lens on a text of 1,000 tokens
    took 23 s of CPU and 11 GB unbounded. The check reads at most the page's 128 tokens (the page's own
    sentence, lib.explorers.smollm2.page_ids), so that text is 'not yet' with the check's message, costs a
    tokenization, and the next learner's answer is checked as ever (the checker's memory limit,
    CHECKER_MEMORY_MB beyond the model, stays for what a check may still do)."""
    from grading import wire
    from grading.chapters import chapters

    spec = chapters()["real-model.ipynb"]["answers"]["ex-real-own-lens"]
    texts = {"long": " ".join(["alpha beta gamma delta"] * 250),
             "honest": "Anna and Tom went to the market. At the market, Anna gave an apple to"}
    job = {"answers": {"ex-real-own-lens": spec}, "learners": []}
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in texts.items():
            path = Path(tmp) / f"{name}.jsonl"
            record = {"label": "ex-real-own-lens", "problem": None, "taken": "cell", "rebound": True,
                      "answers": {"my_text": {"value": wire.encode(text)}, "block": {"value": wire.encode(27)}}}
            path.write_text(json.dumps(record) + "\n")
            job["learners"].append({"name": name, "records": str(path), "labels": ["ex-real-own-lens"], "stopped": None})
        result = subprocess.run([sys.executable, str(ROOT / "scripts" / "grading" / "checker.py")], input=json.dumps(job),
                                capture_output=True, text=True, timeout=600, cwd=ROOT)
    verdicts = {item["learner"]: item for item in map(json.loads, result.stdout.splitlines()) if "learner" in item}
    assert verdicts["long"]["verdict"] == "not yet", result.stdout[-2000:] + result.stderr[-2000:]
    assert "1000 tokens long" in verdicts["long"]["message"] and "at most 128" in verdicts["long"]["message"], verdicts
    assert "the check refused" in verdicts["long"]["note"], verdicts
    assert verdicts["honest"]["verdict"] in ("correct", "not yet") and "note" not in verdicts["honest"], verdicts


def test_the_model_is_loaded_once_per_chapter_not_once_per_learner(graded):
    """SmolLM2 is loaded in the chapter's process before the runs are forked: a learner's run, whose
    answer cell runs the check on the learner's line, costs well under the model's load (about 2.6 s)."""
    _, _, stdout = graded
    found = re.search(r"the learners' runs (\d+) s \((\d+) runs, ([\d.]+) s each", stdout)
    assert found and int(found.group(2)) == len(LEARNERS), stdout[-2000:]
    assert float(found.group(3)) < 2.0, stdout[-2000:]


def test_the_otter_export_grades_an_own_text_exercise(tmp_path):
    """The exported test gives the check both answers the notebook binds: an honest notebook scores, one
    with a garbage prediction does not."""
    assert grade.export_main(["--otter", str(tmp_path / "assignment"), "--chapters", "induction"]) == 0
    zip_path = tmp_path / "assignment" / "induction" / "autograder.zip"
    scores = otter_scores(zip_path, {learner: notebook(LEARNERS[learner][0]) for learner in ("ada", "cy")}, tmp_path,
                          NAME)
    assert (scores["ada"][OWN], scores["ada"][WRITE]) == (1, 1), scores
    assert (scores["cy"][OWN], scores["cy"][WRITE]) == (0, 1), scores
