"""The gradebook on a fabricated class: every verdict, no learner's notebook stops the others, and
no forged verdict counts.

One chapter (search-by-hand, five exercises, a write among them) handed back by learners who are
all right, all wrong, kill their run, loop forever in an answer cell, delete and move answer cells,
return nothing or no notebook; and by dishonest learners who display a verdict, redefine the check,
patch lib.exercises or builtins from a cell above, answer with a value equal to everything, or try
to reach the gradebook, the other learners' notebooks, the course's files, the network and the
grader's environment from their run.
"""
import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import grade  # noqa: E402
from grading.chapters import chapters  # noqa: E402
from grading.gradebook import as_text  # noqa: E402
import notebooks  # noqa: E402

CHAPTER = "chapters/part3/search-by-hand"
NAME = "search-by-hand.ipynb"
# In the chapter's order: a verdict after a dead run depends on what came before.
LABELS = ["ex-search-score", "ex-search-winner", "ex-search-page", "ex-search-scale", "ex-search-temperature"]
CHECK_FILE = ROOT / "lib" / "chapters" / "part3" / "search_by_hand" / "checks.py"


def answer_cells(nb):
    return {c.metadata["course"]["exercise"]: c for c in nb.cells
            if c.metadata.get("course", {}).get("role") == "answer"}


def student_notebook():
    """The code cells `make student` hands out (the grader's own reading of the chapter: solutions left
    out, answer cells labelled in their metadata), as a notebook."""
    spec = chapters()[NAME]
    cells = [nbformat.v4.new_code_cell(c["source"], metadata={"course": {"exercise": c["label"], "role": "answer"}}
                                       if c["label"] else {}) for c in spec["cells"]]
    return nbformat.v4.new_notebook(cells=cells)


def solutions() -> dict:
    """Each exercise's worked solution code, read from the chapter's source."""
    return notebooks.solution_code(ROOT / (CHAPTER + ".md"))


# The forgeries the grading tests share: wrong answers, a verdict displayed in an answer's place, and
# a cell above the exercises that rewrites the library's checks (`extra`: more lines of it).
def answer_wrong(nb):
    for cell in answer_cells(nb).values():     # a value of -1, and a function that returns -1
        cell.source = cell.source.replace("= ...", "= -1").replace("    ...", "    return -1")


DISPLAYED_VERDICT = ("from IPython.display import HTML, display\n"
                     "display(HTML('<div class=\"course-feedback\" data-verdict=\"correct\">Correct</div>'))")


def insert_above(nb, source: str):
    """A cell of the learner's own, just above the first exercise."""
    nb.cells.insert(nb.cells.index(answer_cells(nb)["ex-search-score"]), nbformat.v4.new_code_cell(source))


def insert_checks_patch(nb, extra: str = ""):
    insert_above(nb, (
        "import lib.exercises, lib.chapters.part3.search_by_hand.checks as sbh\n"
        "lib.exercises.Feedback.verdict = lambda self: 'correct'\n"
        "for name in dir(sbh):\n"
        "    if not name.startswith('_') and callable(getattr(sbh, name)):\n"
        "        setattr(sbh, name, lambda *a, **k: lib.exercises.Feedback(True, 'fine'))\n" + extra))


ESCAPES = r'''
import os, socket, pathlib
escaped = []
class_dir = pathlib.Path({class_dir!r})
for attempt in (lambda: (class_dir / "gradebook.csv").write_text("learner,forged"),
                lambda: (class_dir / "ada" / "note.txt").write_text("x"),
                lambda: open({check_file!r}, "a").write("\n# patched"),
                lambda: socket.create_connection(("127.0.0.1", 22), timeout=2),
                lambda: socket.create_connection(("1.1.1.1", 53), timeout=2)):
    try:
        attempt()
        escaped.append(attempt)
    except Exception:
        pass
if os.listdir(class_dir) or any(k not in ("HOME", "TMPDIR", "PATH", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                            "OPENBLAS_NUM_THREADS", "MPLBACKEND") for k in os.environ):
    escaped.append("sees")
if pathlib.Path(os.environ["HOME"]).resolve() != pathlib.Path.cwd().resolve():
    escaped.append("home")
if os.getppid() != 0:       # in a process namespace of its own, the run's parent is out of sight
    escaped.append("parent visible")
import gc                  # another learner's answers or code, anywhere in this process's memory
marker = "ada-" + "own-work"
for o in gc.get_objects():
    items = o.values() if isinstance(o, dict) else o if isinstance(o, (list, tuple)) else ()
    try:
        if any(isinstance(x, str) and marker in x and x is not marker for x in items):
            escaped.append("a classmate's work")
            break
    except Exception:
        pass
(pathlib.Path.cwd() / "scratch.txt").write_text("the working folder is writable")
'''


LEARNERS = ["ada", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy", "jon", "kim", "nat", "=lee"]


def hand_in_class(class_dir):
    """This file's learners, their notebooks written into `class_dir`; graded in one class with
    test_grade_hostile.py's learners (tests/grading/conftest.py). Returns what the test compares after."""
    student = student_notebook()
    worked = solutions()
    assert set(worked) == set(LABELS)

    def hand_in(learner, change=None, subfolder=""):
        nb = nbformat.reads(nbformat.writes(student), 4)
        if change:
            change(nb)
        folder = class_dir / learner / subfolder
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / NAME)

    def right(nb):
        for label, cell in answer_cells(nb).items():
            cell.source = worked[label]

    wrong = answer_wrong

    def kernel_dies(nb):
        right(nb)
        answer_cells(nb)["ex-search-scale"].source = "import os\nos._exit(1)"

    def loops(nb):
        right(nb)
        answer_cells(nb)["ex-search-score"].source += "\nwhile True:\n    pass\n"

    def deleted_and_moved(nb):
        right(nb)
        cells = answer_cells(nb)
        nb.cells.remove(cells["ex-search-scale"])
        # Grading goes by the label in the cell's metadata, not by position: the last answer cell
        # moves to the very end, after a cell the learner added.
        nb.cells.remove(cells["ex-search-temperature"])
        nb.cells.append(nbformat.v4.new_code_cell("scratch = 1 + 1"))
        nb.cells.append(cells["ex-search-temperature"])

    def displays_verdict(nb):            # every answer cell replaced by a verdict of its own
        for cell in answer_cells(nb).values():
            cell.source = DISPLAYED_VERDICT

    def redefines_check(nb):             # a wrong answer, and a check that says yes to it
        wrong(nb)
        for cell in answer_cells(nb).values():
            cell.source = ("from lib.exercises import Feedback\n"
                           "class check:\n"
                           "    def __getattr__(self, name):\n"
                           "        return lambda *a: Feedback(True, 'fine')\n"
                           "check = check()\n" + cell.source)

    def patches_checks(nb):              # a cell above the exercises rewrites the library's checks
        wrong(nb)
        insert_checks_patch(nb, "import lib.exercises.writing as w\n"
                                "lib.exercises.Feedback.__bool__ = lambda self: True\n"
                                "w.same = lambda *a, **k: True\n")

    def patches_builtins(nb):            # wrong answers, and comparisons that always agree
        wrong(nb)
        insert_above(nb, (
            "import builtins, numpy\n"
            "builtins.abs = lambda x: 0.0\n"
            "numpy.allclose = numpy.isclose = lambda *a, **k: True\n"))

    def equals_everything(nb):           # answers that are equal to anything they are compared with
        insert_above(nb, (
            "class Yes(float):\n"
            "    __eq__ = lambda self, other: True\n"
            "    __ne__ = lambda self, other: False\n"
            "    __sub__ = __rsub__ = lambda self, other: 0.0\n"
            "    __hash__ = float.__hash__\n"
            "class Word(str):\n"
            "    __eq__ = lambda self, other: True\n"
            "    __hash__ = str.__hash__\n"))
        cells = answer_cells(nb)
        cells["ex-search-score"].source = cells["ex-search-score"].source.replace("= ...", "= Yes(-1)")
        cells["ex-search-winner"].source = cells["ex-search-winner"].source.replace("= ...", "= Word('nobody')")
        cells["ex-search-scale"].source = cells["ex-search-scale"].source.replace("= ...", "= Yes(999)")
        cells["ex-search-temperature"].source = cells["ex-search-temperature"].source.replace("= ...", "= Yes(99)")

    def tries_to_escape(nb):             # right answers, kept only if every way out is closed
        right(nb)
        insert_above(nb, (
            ESCAPES.format(class_dir=str(class_dir), check_file=str(CHECK_FILE))))
        for cell in answer_cells(nb).values():
            cell.source += ("\nif escaped or not os.path.exists('scratch.txt'):\n"
                            "    raise SystemExit(f'escaped: {escaped}')\n")

    def right_and_signed(nb):
        right(nb)
        for cell in answer_cells(nb).values():
            cell.source += "\n# ada-own-work"

    hand_in("ada", right_and_signed, subfolder="search-by-hand-assignment")   # a hub's collected layout
    hand_in("bob", wrong)
    hand_in("cat", kernel_dies)
    hand_in("dan", loops)
    hand_in("eve", deleted_and_moved)
    (class_dir / "fay").mkdir()                                     # returned nothing
    (class_dir / "gus").mkdir()
    (class_dir / "gus" / NAME).write_text("{ this is not a notebook")
    hand_in("hal", displays_verdict)
    hand_in("ivy", redefines_check)
    hand_in("jon", patches_checks)
    hand_in("kim", patches_builtins)
    hand_in("nat", equals_everything)
    hand_in("=lee", tries_to_escape)     # a name a spreadsheet would run as a formula
    # bob also returned another chapter's notebook: the class is graded with --chapters search-by-hand,
    # so it counts for nothing (no column, no note, not in `of`).
    nbformat.write(nbformat.v4.new_notebook(), class_dir / "bob" / "bigrams.ipynb")
    return {"ada": (class_dir / "ada" / "search-by-hand-assignment" / NAME).read_bytes()}


@pytest.fixture(scope="module")
def graded(search_class):
    """This file's learners' rows of the class graded once for the session (tests/grading/conftest.py),
    after the checks that no run changed a file outside it."""
    class_dir = search_class["class_dir"]
    assert search_class["check_file_unchanged"]
    assert (class_dir / "ada" / "search-by-hand-assignment" / NAME).read_bytes().decode("latin-1") == search_class["kept"]["ada"]
    assert not (class_dir / "ada" / "note.txt").exists()
    rows = {name: row for name, row in search_class["rows"].items() if name.lstrip("'") in LEARNERS}
    return rows, search_class["stdout"], search_class["text"]


def verdicts_of(rows):
    return {name: {label: row[label] for label in LABELS} for name, row in rows.items()}


def test_the_gradebook_has_a_row_per_learner_and_a_column_per_exercise(graded):
    rows, out, _ = graded
    assert sorted(rows) == sorted(["ada", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy", "jon", "kim",
                                   "nat", "'=lee"])
    assert all(label in rows["ada"] for label in LABELS)
    assert f"ada: {len(LABELS)}/{len(LABELS)} correct" in out and "gradebook.csv" in out


def test_every_verdict(graded):
    rows, _, _ = graded
    verdicts = verdicts_of(rows)
    every = dict.fromkeys(LABELS, "correct")
    assert verdicts["ada"] == every, rows["ada"]["notes"]
    assert rows["ada"]["notes"] == ""            # an honest notebook: nothing found, nothing missing
    assert verdicts["bob"] == dict.fromkeys(LABELS, "not yet")
    # The run ends in ex-search-scale's answer: what came before stands, what follows did not run.
    dies_at = LABELS.index("ex-search-scale")
    assert verdicts["cat"] == {label: "correct" if i < dies_at else "error" for i, label in enumerate(LABELS)}
    assert "ended Python" in rows["cat"]["notes"]
    # The loop is stopped by the cell's time limit (timed out, not wrong); the rest of the notebook still runs.
    assert verdicts["dan"] == {**every, "ex-search-score": "timed out"}
    assert "ran too long" in rows["dan"]["notes"]
    assert verdicts["eve"] == {**every, "ex-search-scale": "missing"}
    assert verdicts["fay"] == dict.fromkeys(LABELS, "missing") and "not returned" in rows["fay"]["notes"]
    assert verdicts["gus"] == dict.fromkeys(LABELS, "error") and "not a readable notebook" in rows["gus"]["notes"]
    assert rows["ada"]["correct"] == str(len(LABELS)) and rows["bob"]["correct"] == "0"


def test_no_forgery_earns_a_mark_and_the_notes_say_what_was_found(graded):
    rows, _, _ = graded
    verdicts = verdicts_of(rows)
    assert verdicts["hal"] == dict.fromkeys(LABELS, "not answered")
    assert "writes verdict HTML of its own" in rows["hal"]["notes"] and "check call removed" in rows["hal"]["notes"]
    assert verdicts["ivy"] == dict.fromkeys(LABELS, "not yet") and "redefines the check" in rows["ivy"]["notes"]
    assert verdicts["jon"] == dict.fromkeys(LABELS, "not yet") and "patches lib.exercises" in rows["jon"]["notes"]
    assert verdicts["kim"] == dict.fromkeys(LABELS, "not yet") and "patches builtins" in rows["kim"]["notes"]
    # A value equal to everything is read as the plain number or word it holds.
    assert verdicts["nat"] == {**dict.fromkeys(LABELS, "not yet"), "ex-search-page": "not answered"}
    for name in ("hal", "ivy", "jon", "kim", "nat"):
        assert rows[name]["correct"] == "0"


def test_a_run_reaches_nothing_outside_its_working_folder(graded):
    """An honest answer stays right while the same notebook tries to write the gradebook, another
    learner's folder and the course's checks, open a connection, read the grader's environment, see
    its parent process, and find another learner's code or answers in its memory: every one of them
    failed (the fixture also holds the files unchanged)."""
    rows, _, text = graded
    lee = rows["'=lee"]
    assert verdicts_of(rows)["'=lee"] == dict.fromkeys(LABELS, "correct"), lee["notes"]
    assert "ran with" not in lee["notes"], lee["notes"]     # every containment step worked on this machine
    assert "s3cret" not in text


def test_a_cell_a_spreadsheet_would_run_is_written_as_text():
    for value, shown in (("=1+1", "'=1+1"), ("+A1", "'+A1"), ("-2", "'-2"), ("@SUM(A1)", "'@SUM(A1)"),
                         ("ada", "ada"), (3, "3")):
        assert as_text(value) == shown


def test_every_chapter_names_its_checks():
    """Every exercise's answer cell calls one check with the answer and the chapter's models only."""
    specs = chapters()
    labels = [label for spec in specs.values() for label in spec["order"]]
    from lib.exercises.catalogue import catalogue
    assert sorted(labels) == sorted(e.label for e in catalogue())


def test_chapters_grades_only_the_chapters_asked_for(graded):
    """The class is graded with `--chapters search-by-hand` (`make grade ... CHAPTERS=search-by-hand`),
    and bob also returned bigrams.ipynb: no column of it, no note, `of` counts search-by-hand only."""
    rows, _, text = graded
    assert text.splitlines()[0].split(",") == ["learner", *LABELS, *(f"{label} points" for label in LABELS), "correct",
                                               "of", "points", "of points", "to review", "late", "notes"]
    assert all(row["of"] == str(len(LABELS)) for row in rows.values())
    assert "bigrams" not in rows["bob"]["notes"]


def test_make_grade_passes_chapters_on():
    if not shutil.which("make"):
        pytest.skip("no make here")
    dry = subprocess.run(["make", "-n", "grade", "SUBMISSIONS=returned", "CHAPTERS=search-by-hand,lever"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert 'scripts/grade.py "returned" --chapters "search-by-hand,lever"' in dry.stdout, dry.stdout[-2000:]


def test_every_worked_solution_answers_as_its_stub_does():
    """Each exercise's worked solution (the answer key's, and the honest learners' of `make bench-grade`)
    binds the stub's answer names (an own-text exercise's two) and makes the stub's check call: a solution that passed its answer to
    the check as a literal was graded "not answered" with "check call rewritten" for every honest
    learner of the bench (ex-induction-ablate, the bench's unexplained "not answered")."""
    import ast
    wrong = []
    for spec in chapters().values():
        worked = notebooks.solution_code(ROOT / (spec["doc"] + ".md"))
        for label in spec["order"]:
            stub = spec["answers"][label]
            tree = ast.parse(worked.get(label, ""))
            bound = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets
                     if isinstance(t, ast.Name)} | {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
            answers = {a["name"] for a in stub["args"] if a["role"] == "answer"}
            if not answers <= bound or stub["call"] not in [ast.dump(n) for n in ast.walk(tree) if isinstance(n, ast.Call)]:
                wrong.append(label)
    assert wrong == []


def test_bad_input_gets_one_line(tmp_path, capsys):
    (tmp_path / "class" / "ada").mkdir(parents=True)
    for args, message in (([str(tmp_path / "nowhere")], "is not a folder"),
                          ([str(tmp_path / "class" / "ada")], "no learner's folder"),
                          ([str(tmp_path / "class"), "--jobs", "0"], "at least 1"),
                          ([str(tmp_path / "class"), "--wall-timeout", "-1"], "must be positive"),
                          ([str(tmp_path / "class"), "--chapters", "search-by-hand,no-such-chapter"],
                           "no exercises in no-such-chapter.ipynb; chapters with exercises: ")):
        assert grade.main(args) == 2, args
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "search-by-hand, " in err or ", search-by-hand" in err     # the line lists the chapters allowed
    # And as a command, once: the script's own exit code and one line.
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), str(tmp_path / "nowhere")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "is not a folder" in result.stderr and "Traceback" not in result.stderr


# ----------------------------------------------------------------------------- the stub's scaffolding
def test_the_checks_import_sits_outside_every_answer_cell():
    """In every chapter's handout (the grader reads the chapter as the notebooks hand it out) the line
    that imports the checks as `check` is a cell of its own above the answer cell, never in it."""
    setups = 0
    for name, spec in chapters().items():
        bound = False
        for cell in spec["cells"]:
            if cell["label"]:
                assert not notebooks.CHECK_IMPORT.search(cell["source"]), (name, cell["label"])
                assert bound, f"{name}: {cell['label']} calls `check` before any cell above it imports it"
            elif notebooks.CHECK_IMPORT.search(cell["source"]):
                bound, setups = True, setups + 1
    assert setups >= len(chapters())
    stub = "from lib.chapters.part3.search_by_hand import checks as check\n\nanswer = ...   # x\ncheck.logit_of_cefa(answer)"
    setup, answer = notebooks.stub_cells(stub, "ex-search-score", "predict")
    assert setup.source == stub.splitlines()[0] and answer.source == "answer = ...   # x\ncheck.logit_of_cefa(answer)"
    assert (setup.metadata["course"]["role"], answer.metadata["course"]["role"]) == ("setup", "answer")
    assert answer.metadata["course"]["exercise"] == setup.metadata["course"]["exercise"] == "ex-search-score"
    assert [c.source for c in notebooks.stub_cells("winner = ...\ncheck.winner_for_query(winner)", "x")] == \
        ["winner = ...\ncheck.winner_for_query(winner)"]


KERNEL = r"""
import json, sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.showtraceback = lambda *a, **k: None
out = []
for layout, first_error_only in json.load(sys.stdin):
    shell.reset()
    errors, verdicts = [], []
    for i, (source, is_answer) in enumerate(layout):
        r = shell.run_cell(source, silent=False, store_history=False)
        if not r.success:
            errors.append(type(r.error_in_exec or r.error_before_exec).__name__ + f" in cell {i}: {r.error_in_exec}"[:200])
            if first_error_only:
                break
        elif is_answer:
            verdicts.append(getattr(r.result, "verdict", lambda: None)())
    out.append({"errors": errors, "verdicts": verdicts})
print("RESULT " + json.dumps(out))
"""


def test_a_learner_who_replaces_every_answer_cell_whole_keeps_the_checks():
    """In the learner's own kernel (IPython, as Jupyter runs it): every answer cell replaced whole by a
    worked solution without any import line still finds `check` and is correct. The same answers in
    the old layout, the import inside the stub, raise NameError (the test can fail)."""
    spec = chapters()[NAME]
    worked = {label: "\n".join(line for line in code.splitlines() if not notebooks.CHECK_IMPORT.match(line))
              for label, code in solutions().items()}
    handout = [(worked[c["label"]] if c["label"] else c["source"], bool(c["label"])) for c in spec["cells"]]
    first = next(i for i, c in enumerate(spec["cells"]) if c["label"])
    old = [cell for i, cell in enumerate(handout) if i != first - 1]     # no setup cell: the import was in the stub
    assert notebooks.CHECK_IMPORT.match(spec["cells"][first - 1]["source"])
    result = subprocess.run([sys.executable, "-c", KERNEL], input=__import__("json").dumps([[handout, False], [old, True]]),
                            capture_output=True, text=True, timeout=300, cwd=ROOT,
                            env={**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    now, before = __import__("json").loads(result.stdout.rsplit("RESULT ", 1)[1])
    assert now == {"errors": [], "verdicts": ["correct"] * len(LABELS)}, now
    assert before["errors"][0].startswith("NameError"), before     # at the first answer cell
