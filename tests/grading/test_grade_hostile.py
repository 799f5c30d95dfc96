"""One learner costs only their own row: a class where every learner but one returned something
malformed or hostile, graded for real, and the honest learner still gets every mark.

The honest learner (amy) also works as honest learners do: she replaced her first answer cell whole
(the stub's `import ... as check` line gone with it), computed one answer in the cell below its stub,
answered another in a copy of its answer cell (the stub left as it was), and left a blank draft of
the notebook in a `backup/` folder. Every other learner returned one thing the grader must survive:
a label that is a list, a cell of 30,000 terms, garbage and a 200 MB line on the run's pipe, a FIFO,
a link to amy's notebook, a file too large, a device, JSON nested too deep, a notebook whose fields
have the wrong types, and a cell that ignores its CPU timer and loops. The gradebook is still
written, the grader's own memory stays under its budget (lib/budgets.py, as the grader reports it),
and no learner's text reaches the notes raw.

These learners are graded in one class with test_grade.py's (tests/grading/conftest.py).
"""
import os
import re
import stat
import sys

import nbformat
import pytest

from lib.budgets import BUDGETS

from .test_grade import LABELS, NAME, ROOT, answer_cells, insert_above, solutions, student_notebook

MARKER = "PWNED-MARKER"
LEARNERS = ["amy", "l-below", "b-list-label", "c-deep", "d-pipe", "e-fifo", "f-link", "g-huge", "h-device",
            "i-nested", "j-types", "k-sigprof"]

PIPE_GARBAGE = (
    "import os, json\n"
    f"os.write(3, b'not json at all {MARKER}\\n')\n"
    f"os.write(3, b'{{\"crash\": true, \"crash_type\": \"{MARKER} x\", \"text\": \"' + b'x' * 200000 + b'\"}}\\n')\n"
    "os.write(3, b'[' * 100000 + b'\\n')\n"
    f"os.write(3, json.dumps({{'label': 'ex-search-score', 'taken': 'cell', 'problem': '{MARKER} ' * 1000}}).encode() + b'\\n')\n"
    "try:\n"
    "    chunk = b'x' * 2 ** 20\n"
    "    os.write(3, b'{')\n"
    "    for _ in range(200):\n"
    "        os.write(3, chunk)\n"
    "except OSError:\n"
    "    pass\n")


def hand_in_hostile(class_dir):
    """This file's learners, their notebooks (and FIFOs, links, devices) written into `class_dir`."""
    student = student_notebook()
    worked = solutions()

    def notebook(change=None):
        nb = nbformat.reads(nbformat.writes(student), 4)
        if change:
            change(nb)
        return nb

    def hand_in(learner, nb, relative=NAME):
        path = class_dir / learner / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        return path

    def honest(nb):
        cells = answer_cells(nb)
        for label, cell in cells.items():
            cell.source = worked[label]
        # The whole first answer cell replaced: no `from ... import checks as check` line left (the
        # worked solution uses `check` for the exercise's query, and calls the check).
        cells["ex-search-score"].source = "\n".join(line for line in worked["ex-search-score"].splitlines()
                                                    if "import" not in line)
        assert "check." in cells["ex-search-score"].source
        # The winner computed in the cell below the stub (the stub left blank).
        stub = next(c["source"] for c in grade_spec()["cells"] if c["label"] == "ex-search-winner")
        cells["ex-search-winner"].source = stub
        index = nb.cells.index(cells["ex-search-winner"])
        nb.cells.insert(index + 1, nbformat.v4.new_code_cell(worked["ex-search-winner"]))
        # The page answered in a copy of its answer cell, the stub left as it was.
        page_stub = next(c["source"] for c in grade_spec()["cells"] if c["label"] == "ex-search-page")
        copy = nbformat.v4.new_code_cell(worked["ex-search-page"], metadata=dict(cells["ex-search-page"].metadata))
        cells["ex-search-page"].source = page_stub
        nb.cells.insert(nb.cells.index(cells["ex-search-page"]) + 1, copy)

    amy = hand_in("amy", notebook(honest), f"assignment/{NAME}")
    hand_in("amy", notebook(), f"backup/{NAME}")                    # a blank draft beside the real one
    hand_in("amy", notebook(honest), "my-search.ipynb")             # under a name of her own
    os.utime(class_dir / "amy" / "backup" / NAME, (2e9, 2e9))        # and newer: newest is not the rule's first say

    def below(nb):
        """Honest too: the function written in a new cell below its untouched stub, and the scale first
        answered wrong in its answer cell, then put right in a cell below."""
        cells = answer_cells(nb)
        nb.cells.insert(nb.cells.index(cells["ex-search-page"]) + 1, nbformat.v4.new_code_cell(worked["ex-search-page"]))
        cells["ex-search-scale"].source = cells["ex-search-scale"].source.replace("= ...", "= -1")
        nb.cells.insert(nb.cells.index(cells["ex-search-scale"]) + 1, nbformat.v4.new_code_cell(worked["ex-search-scale"]))
    hand_in("l-below", notebook(below))

    def list_label(nb):
        for cell in answer_cells(nb).values():
            cell.metadata["course"]["exercise"] = ["ex-search-score"]
    hand_in("b-list-label", notebook(list_label))

    def deep(nb):
        # 60 kB: read for forgeries (a cell over 128 kB is not: test_grade_fair.py), too deep for the parser.
        answer_cells(nb)["ex-search-score"].source = "answer = " + "+".join(["1"] * 30_000)
    hand_in("c-deep", notebook(deep))

    def pipe(nb):
        insert_above(nb, PIPE_GARBAGE)
    late = hand_in("d-pipe", notebook(pipe))
    os.utime(late, (2e9, 2e9))                                       # changed in 2033: after the due date

    (class_dir / "e-fifo").mkdir()
    os.mkfifo(class_dir / "e-fifo" / NAME)

    (class_dir / "f-link").mkdir()
    os.symlink(amy, class_dir / "f-link" / NAME)

    (class_dir / "g-huge").mkdir()
    with open(class_dir / "g-huge" / NAME, "wb") as f:              # 20 MB, sparse: no disk spent
        f.truncate(20 * 2 ** 20)

    (class_dir / "h-device").mkdir()
    if os.geteuid() == 0:
        os.mknod(class_dir / "h-device" / NAME, stat.S_IFCHR | 0o600, os.makedev(1, 3))   # as /dev/null
    else:
        (class_dir / "h-device" / NAME).write_text("[" * 100_000)

    (class_dir / "i-nested").mkdir()
    (class_dir / "i-nested" / NAME).write_text("[" * 100_000 + "]" * 100_000)

    (class_dir / "j-types").mkdir()
    (class_dir / "j-types" / NAME).write_text(
        '{"nbformat": 4, "nbformat_minor": 5, "metadata": [], "cells": ['
        '{"cell_type": "code", "source": 12, "metadata": {}},'
        '{"cell_type": "code", "source": ["x = 1\\n", 2], "metadata": "course"},'
        '{"cell_type": "code", "source": "y = 2", "metadata": {"course": ["answer"]}},'
        '{"cell_type": "code", "source": "z = 3", "metadata": {"course": {"role": "answer", "exercise": {"a": 1}}}},'
        '7, null]}')

    def ignores_timer(nb):
        answer_cells(nb)["ex-search-score"].source = (
            "import signal\nsignal.signal(signal.SIGPROF, signal.SIG_IGN)\nwhile True:\n    pass\n")
    hand_in("k-sigprof", notebook(ignores_timer))



@pytest.fixture(scope="module")
def hostile_class(search_class):
    """This file's learners' rows of the class graded once for the session (tests/grading/conftest.py),
    the grader's own peak memory as it reports it, and each learner's feedback."""
    rows = {name: row for name, row in search_class["rows"].items() if name in LEARNERS}
    found = re.search(r"the grader's own peak memory (\d+) MB", search_class["stdout"])
    assert found, search_class["stdout"][-2000:]
    peak_mb = int(found.group(1))
    print(f"the grader's own peak memory: {peak_mb} MB (budget {BUDGETS['grade_memory_mb']:.0f} MB)")
    feedback = {name: text for name, text in search_class["feedback"].items() if name in LEARNERS}
    return rows, search_class["text"], peak_mb, feedback


def grade_spec():
    sys.path.insert(0, str(ROOT / "scripts"))
    from grading.chapters import chapters
    return chapters()[NAME]


def verdicts(row):
    return {label: row[label] for label in LABELS}


def test_the_honest_learner_gets_every_mark_among_hostile_classmates(hostile_class):
    rows, *_ = hostile_class
    amy = rows["amy"]
    assert verdicts(amy) == dict.fromkeys(LABELS, "correct"), amy["notes"]
    # The duplicate, the copied answer cell and the answer found below its stub are each said.
    assert f"2 notebooks named {NAME}: graded \"assignment/{NAME}\"" in amy["notes"], amy["notes"]
    assert f"not graded: \"backup/{NAME}\"" in amy["notes"]
    assert "a second answer cell labelled ex-search-page" in amy["notes"]
    assert '"my-search.ipynb" is not the notebook of a chapter with exercises: not graded' in amy["notes"]
    assert "ex-search-winner: graded the value `winner` holds after the cells below its answer cell" in amy["notes"]
    assert sorted(rows) == sorted(LEARNERS)
    # A function written below its untouched stub, and a wrong value put right below its cell: each
    # found as the learner's kernel holds it, and said.
    below = rows["l-below"]
    assert below["ex-search-page"] == below["ex-search-scale"] == "correct", below["notes"]
    assert below["ex-search-score"] == "not answered" and below["correct"] == "2"
    for label, name in (("ex-search-page", "search_page"), ("ex-search-scale", "k")):
        assert f"{label}: graded the value `{name}` holds after the cells below its answer cell" in below["notes"]


def test_each_hostile_learner_costs_only_their_own_row_with_a_note(hostile_class):
    rows, *_ = hostile_class
    expected = {
        "b-list-label": "an answer cell whose exercise label is not text",
        "c-deep": "nested too deep to read for forgeries",
        "d-pipe": "the run wrote more than the grader reads",
        "e-fifo": "is a FIFO, not a regular file: refused",
        "f-link": "is a link (not followed): refused",
        "g-huge": "is larger than 16 MB: refused",
        "h-device": "is a device, not a regular file: refused" if os.geteuid() == 0 else "not a readable notebook",
        "i-nested": "not a readable notebook",
        "j-types": "its source is not text: left out",
        "k-sigprof": "stopped from outside: one cell used more than 4 s of CPU",
    }
    for name, note in expected.items():
        assert note in rows[name]["notes"], (name, rows[name]["notes"])
        assert rows[name]["correct"] == "0" or name in ("c-deep", "d-pipe"), (name, rows[name])
    # Its answer cells, their labels unreadable, are found by their content: the untouched stubs.
    assert verdicts(rows["b-list-label"]) == dict.fromkeys(LABELS, "not answered")
    assert "found by its content (it makes the stub's check call)" in rows["b-list-label"]["notes"]
    assert rows["c-deep"]["ex-search-score"] == "error" and "the cell raised RecursionError" in rows["c-deep"]["notes"]
    assert rows["k-sigprof"]["ex-search-score"] == "timed out"      # a time limit: not wrong, to review
    assert "ex-search-score" in rows["k-sigprof"]["to review"].split()


def test_no_learner_text_reaches_the_notes_raw_and_the_grader_stays_in_its_memory(hostile_class):
    """The grader reports its own peak memory (VmHWM of its process, its runs not counted); the whole
    class of the session, these hostile learners among 25, stays within lib/budgets.py's bound."""
    rows, text, peak_mb, _ = hostile_class
    assert MARKER not in text
    assert max(len(row["notes"]) for row in rows.values()) < 4000
    assert 20 < peak_mb < BUDGETS["grade_memory_mb"], f"the grader's own peak: {peak_mb} MB"


def test_each_learner_gets_feedback_and_late_work_is_marked(hostile_class):
    rows, _, _, feedback = hostile_class
    assert sorted(feedback) == sorted(rows)
    amy = feedback["amy"]
    assert f"{len(LABELS)} of {len(LABELS)} exercises correct" in amy
    for label in LABELS:
        assert re.search(rf"- \*\*{label}\*\*: correct \([\d.]+ of [\d.]+ points?\): ", amy)   # its points, then the check's sentence
    assert rows["d-pipe"]["late"] == NAME and "late, changed 2033-" in rows["d-pipe"]["notes"]
    assert all(row["late"] == "" for name, row in rows.items() if name != "d-pipe")
    # The open exercises amy answered, and the one taken from below its cell, are for a person to read.
    assert "ex-search-winner" in rows["amy"]["to review"].split()


def test_the_answer_key_names_every_exercise_by_label_with_its_worked_solution(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    import grade
    from grading.exports import write_answer_key
    key = write_answer_key(tmp_path, ["search-by-hand"]).read_text()
    worked = solutions()
    for label in LABELS:
        assert f"### {label} (" in key
        assert worked[label].strip().splitlines()[-1] in key
    assert grade.key_main([str(tmp_path), "--chapters", "no-such-chapter"]) == 2


def test_a_due_date_that_is_no_date_gets_one_line(tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "scripts"))
    import grade
    assert grade.main([str(tmp_path), "--due", "next friday"]) == 2
    err = capsys.readouterr().err
    assert "--due 'next friday' is not a date" in err and "Traceback" not in err
