"""A class graded fairly: each learner's run costs only its own row, in memory, CPU and time; honest
work is always counted or noted; points are the instructor's, with partial credit.

The learners of this file are graded in the session's class (tests/grading/conftest.py), beside
test_grade.py's and test_grade_hostile.py's, with limits made small so that the attacks cost the test
little: 8 s of CPU a notebook, an idle limit of 3 s. They return what issue 48 lists:
- four cells, each a list literal of 1,048,006 characters, within every stated limit (1 MiB a cell, 4 MiB
  of code), which once drove the grader to 1,212 MB: the grader's own memory stays within its budget
  (the run ends before the cells run: only the reading of them is tried here);
- a run that forks 100 spinning children and sleeps, and a fork bomb: each stopped at its CPU limit,
  counted over all its processes, while the honest learners beside them get every mark;
- a sleep and a read of a FIFO no one writes: each stopped at the idle limit, timed out, not wrong;
- an answer re-typed into a fresh cell without the cell's label (found by its content), a copied answer
  cell after a wrong draft (its value counts, though a later cell binds the name again), an answer cell
  that raises after it bound the answer (the value counts) and one that raises before (an error, with
  its note);
- a function right on some of a write check's inputs: the instructor's points file gives the exercise
  4 points, and the gradebook and the feedback give the share.
"""
import csv
import re
import sys

import nbformat
import pytest

from lib.budgets import BUDGETS

from .test_grade import LABELS, NAME, ROOT, answer_cells, insert_above, solutions, student_notebook

LITERAL_CHARS = 1_048_006
LEARNERS = ["m-literals", "n-spinner", "o-sleeper", "p-fifo", "q-forkbomb", "t-retyped", "u-copied", "v-raises",
            "w-partial"]
HONEST = ["amy", "ada", "l-below", "t-retyped", "u-copied", "v-raises", "w-partial"]
PAGE_POINTS = 4
# The class's limits (conftest.py passes them to the grader).
NOTEBOOK_CPU, IDLE = 8, 3
OVERFLOWS = ("import numpy as np\n\ndef search_page(query, dictionary):\n    scores = dictionary @ query\n"
             "    e = np.exp(scores)           # no largest score taken away: a long query overflows\n"
             "    return e / e.sum()\n\ncheck.search_page(search_page)")


def pids_limited() -> bool:
    """The machine gives the grader a process limit per run (a pids control group): without one a fork
    bomb is held only by its CPU limit, too late for a test machine."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from grading.walls import Cgroups

    return "pids" in Cgroups.own()


def hand_in_fair(class_dir):
    """This file's learners, and the instructor's points file, written into `class_dir`."""
    worked = solutions()

    def hand_in(learner, change):
        nb = student_notebook()
        for label, cell in answer_cells(nb).items():
            cell.source = worked[label]
        change(nb)
        (class_dir / learner).mkdir(parents=True)
        nbformat.write(nb, class_dir / learner / NAME)

    def literals(nb):
        nb.cells.append(nbformat.v4.new_code_cell("import os\nos._exit(0)"))
        for i in range(4):
            head = f"x{i} = ["
            body = "1," * ((LITERAL_CHARS - len(head) - 2) // 2)
            source = head + body + "1]"
            source += " " * (LITERAL_CHARS - len(source))
            nb.cells.append(nbformat.v4.new_code_cell(source))
    hand_in("m-literals", literals)
    hand_in("n-spinner", lambda nb: insert_above(nb, "import os, time\nfor _ in range(100):\n    if os.fork() == 0:\n"
                                                     "        while True:\n            pass\ntime.sleep(10 ** 6)"))
    hand_in("o-sleeper", lambda nb: insert_above(nb, "import time\ntime.sleep(10 ** 6)"))
    hand_in("p-fifo", lambda nb: insert_above(nb, "import os\nos.mkfifo('nobody-writes')\nopen('nobody-writes').read()"))
    if pids_limited():
        hand_in("q-forkbomb", lambda nb: insert_above(nb, "import os\nwhile True:\n    try:\n        os.fork()\n"
                                                          "    except OSError:\n        pass"))

    def retyped(nb):
        """Two answers typed into fresh cells, the answer cells (their labels) deleted: one with the
        stub's check call, one that only binds the answer's name."""
        cells = answer_cells(nb)
        for label, source in (("ex-search-score", worked["ex-search-score"]),
                              ("ex-search-winner", worked["ex-search-winner"].replace("check.winner_for_query(winner)", ""))):
            nb.cells[nb.cells.index(cells[label])] = nbformat.v4.new_code_cell(source)
    hand_in("t-retyped", retyped)

    def copied(nb):
        """A wrong draft in the answer cell, a copy of the cell (its label with it) below it put right,
        and at the end a cell that binds the name again."""
        cell = answer_cells(nb)["ex-search-scale"]
        cell.source = "k = -1\ncheck.smallest_scale(k)"
        copy = nbformat.v4.new_code_cell(worked["ex-search-scale"], metadata=dict(cell.metadata))
        nb.cells.insert(nb.cells.index(cell) + 1, copy)
        nb.cells.append(nbformat.v4.new_code_cell("for k in range(3):\n    pass"))
    hand_in("u-copied", copied)

    def raises(nb):
        insert_above(nb, "1 / 0")
        cells = answer_cells(nb)
        cells["ex-search-score"].source += "\nraise ValueError('after the answer')"
        cells["ex-search-winner"].source = "winner = undefined_name\ncheck.winner_for_query(winner)"
    hand_in("v-raises", raises)

    def partial(nb):
        answer_cells(nb)["ex-search-page"].source = OVERFLOWS
    hand_in("w-partial", partial)
    (class_dir / "points.csv").write_text(f"exercise,points\nex-search-page,{PAGE_POINTS}\n")


@pytest.fixture(scope="module")
def fair_class(search_class):
    return search_class


def rows_of(search_class):
    return search_class["rows"]


def verdicts(row):
    return {label: row[label] for label in LABELS}


def test_the_grader_stays_in_its_memory_whatever_a_learner_returns(fair_class):
    """Four cells of a 1 MiB list literal each: read by the reader, within its limits, and not parsed;
    the grader's own peak stays within the budget, and the learner's answers are graded."""
    found = re.search(r"the grader's own peak memory (\d+) MB", fair_class["stdout"])
    assert found and int(found.group(1)) < BUDGETS["grade_memory_mb"], fair_class["stdout"][-2000:]
    row = rows_of(fair_class)["m-literals"]
    assert verdicts(row) == dict.fromkeys(LABELS, "correct"), row["notes"]
    assert "longer than the grader reads for forgeries" in row["notes"] and "notebook" in row["to review"].split()


def test_runs_that_spin_fork_or_wait_are_stopped_at_their_own_limits(fair_class):
    rows = rows_of(fair_class)
    # The cell that spins uses up the cell's CPU (2 s, and the watch's margin) before the notebook's 8 s.
    cpu_note = "one cell used more than 4 s of CPU, counted over all its processes"
    idle_note = f"stopped after waiting {IDLE} s without using the CPU"
    for name, note in {"n-spinner": cpu_note, "o-sleeper": idle_note, "p-fifo": idle_note}.items():
        row = rows[name]
        assert note in row["notes"], (name, row["notes"])
        # Not reached: timed out, not wrong, and listed for a person to read.
        assert verdicts(row) == dict.fromkeys(LABELS, "timed out"), (name, row["notes"])
        assert row["to review"].split() == LABELS
    if "q-forkbomb" in rows:
        # 128 copies of the learner's process, each writing over the memory they share, may use up the
        # run's memory before its CPU: either limit ends it, and the note says which.
        row = rows["q-forkbomb"]
        assert cpu_note in row["notes"] or "the kernel ended" in row["notes"], row["notes"]
        assert set(verdicts(row).values()) <= {"timed out", "error"}, row["notes"]


def test_honest_learners_beside_them_get_every_mark(fair_class):
    rows = rows_of(fair_class)
    for name in ("amy", "ada", "t-retyped", "u-copied"):
        assert verdicts(rows[name]) == dict.fromkeys(LABELS, "correct"), (name, rows[name]["notes"])
    assert "ran with" not in rows["ada"]["notes"], rows["ada"]["notes"]     # every wall and limit raised here


def test_honest_work_is_found_by_content_and_the_last_value_of_a_copy_counts(fair_class):
    rows = rows_of(fair_class)
    retyped = rows["t-retyped"]
    assert "ex-search-score: no answer cell labelled ex-search-score: graded cell" in retyped["notes"]
    assert "found by its content (it makes the stub's check call)" in retyped["notes"]
    assert "found by its content (it binds `winner`)" in retyped["notes"]
    assert {"ex-search-score", "ex-search-winner"} <= set(retyped["to review"].split())
    copied = rows["u-copied"]
    assert "ex-search-scale: graded the value `k` holds after the cells below its answer cell, the last of them " \
           "that binds it (the answer cell left another value)" in copied["notes"], copied["notes"]


def test_a_cell_that_raises_counts_what_it_bound_or_says_why(fair_class):
    row = rows_of(fair_class)["v-raises"]
    assert verdicts(row) == {**dict.fromkeys(LABELS, "correct"), "ex-search-winner": "error"}, row["notes"]
    assert "ex-search-score: the cell raised ValueError after it bound `answer`: the value it bound counts" in row["notes"]
    assert "ex-search-winner: the cell raised NameError" in row["notes"]


def test_every_exercise_not_graded_has_a_note_that_says_why(fair_class):
    """Across the whole session's class (every hostile and malformed learner of the three files): an
    exercise that is missing, an error or timed out always has a note naming it or its notebook."""
    for name, row in rows_of(fair_class).items():
        for label in LABELS:
            if row[label] in ("missing", "error", "timed out"):
                assert label in row["notes"] or NAME in row["notes"], (name, label, row[label], row["notes"])


def test_points_per_exercise_and_a_write_checks_share(fair_class):
    """The instructor's points file gives ex-search-page 4 points; a function right on some of its
    inputs gets the share, in the gradebook and the feedback. The share expected is the library's own
    count of the inputs the function gets right, in this process."""
    from lib.chapters.part3.search_by_hand import checks
    from lib.exercises import writing

    namespace = {"check": checks}
    exec(OVERFLOWS.replace("check.search_page(search_page)", ""), namespace)
    feedback, right = writing.case_results(namespace["search_page"], checks.search_page)
    assert not feedback.ok and 0 < sum(right) < len(right)
    share = PAGE_POINTS * sum(right) / len(right)
    sys.path.insert(0, str(ROOT / "scripts"))
    from grading.gradebook import number

    rows = rows_of(fair_class)
    row = rows["w-partial"]
    assert row["ex-search-page"] == "not yet" and row["ex-search-page points"] == number(share), row
    assert row["of points"] == str(PAGE_POINTS + len(LABELS) - 1)
    assert row["points"] == number(len(LABELS) - 1 + share)
    assert rows["amy"]["points"] == rows["amy"]["of points"] == str(PAGE_POINTS + len(LABELS) - 1)
    said = fair_class["feedback"]["w-partial"]
    assert (f"- **ex-search-page**: not yet ({number(share)} of {PAGE_POINTS} points: right on {sum(right)} of "
            f"{len(right)} inputs): ") in said, said
    assert f"{number(len(LABELS) - 1 + share)} of {PAGE_POINTS + len(LABELS) - 1} points" in said


def test_the_grader_shows_its_progress(fair_class):
    lines = [line for line in fair_class["stderr"].splitlines() if line.startswith("grading [")]
    assert lines and "learners done" in lines[-1] and "done in" in lines[-1], fair_class["stderr"][-2000:]
    assert re.search(r"(\d+)/\1 learner-chapters, (\d+)/\2 learners done", lines[-1]), lines[-1]


def test_a_points_file_with_a_mistake_gets_one_line(tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "scripts"))
    import grade

    (tmp_path / "class" / "ada").mkdir(parents=True)
    for text, message in (("label,score\n", "the first line should be `exercise,points`"),
                          ("exercise,points\nex-no-such,2\n", "line 2: no exercise is labelled 'ex-no-such'"),
                          ("exercise,points\nex-search-page,-1\n", "should be a number, 0 or more"),
                          ("exercise,points\nex-search-page,lots\n", "should be a number, 0 or more")):
        (tmp_path / "points.csv").write_text(text)
        assert grade.main([str(tmp_path / "class"), "--points", str(tmp_path / "points.csv")]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    out = tmp_path / "written.csv"
    assert grade.main(["points", str(out)]) == 0
    with out.open() as f:
        rows = list(csv.DictReader(f))
    assert {"ex-search-page", "ex-page-softmax"} <= {r["exercise"] for r in rows} and {r["points"] for r in rows} == {"1"}
