"""One class graded once for the session: test_grade.py's learners (every verdict, forgeries, escapes),
test_grade_hostile.py's (malformed and hostile returns beside an honest learner) and test_grade_fair.py's
(runs that spin, fork or wait; honest work found by content, copied, raising; partial credit), 34
learners of search-by-hand in one run of the grader, as `make grade SUBMISSIONS=DIR
CHAPTERS=search-by-hand DUE=2030-01-01T00:00+00:00` runs it, with small limits (8 s of CPU a notebook,
an idle limit of 3 s) so that the attacks cost the tests little. Each file reads its own learners' rows; grading them together
costs one chapter's run and one checker instead of two. The test processes (xdist workers, which
take these files apart) share it as tests/conftest.py's `fresh_runs` shares its runs: the first to
get the lock grades, the other reads what it wrote.
"""
import csv
import json
import os
import subprocess
import sys

import pytest

from .test_grade import CHECK_FILE, ROOT, hand_in_class
from .test_grade_fair import IDLE, NOTEBOOK_CPU, hand_in_fair
from .test_grade_hostile import hand_in_hostile


@pytest.fixture(scope="session")
def search_class(tmp_path_factory):
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    shared = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root
    saved = shared / "search-class.json"
    with FileLock(str(saved) + ".lock"):
        if not saved.is_file():
            saved.write_text(json.dumps(grade_the_class(shared / "search-class")))
    return {**json.loads(saved.read_text()), "class_dir": shared / "search-class"}


def grade_the_class(class_dir):
    class_dir.mkdir()
    check_before = CHECK_FILE.read_bytes()
    kept = hand_in_class(class_dir)
    hand_in_hostile(class_dir)
    hand_in_fair(class_dir)
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), str(class_dir),
                             "--chapters", "search-by-hand", "--cell-timeout", "2", "--notebook-timeout",
                             str(NOTEBOOK_CPU), "--idle-timeout", str(IDLE), "--wall-timeout", "300",
                             "--due", "2030-01-01T00:00+00:00"],
                            capture_output=True, text=True, timeout=1200,
                            env={**os.environ, "GRADER_TEST_SECRET": "s3cret"})
    assert result.returncode == 0, result.stderr[-3000:]
    with (class_dir / "gradebook.csv").open() as f:
        text = f.read()
        f.seek(0)
        rows = {row["learner"]: row for row in csv.DictReader(f)}
    feedback = {path.stem: path.read_text() for path in (class_dir / "feedback").iterdir()}
    return {"rows": rows, "text": text, "stdout": result.stdout, "stderr": result.stderr, "feedback": feedback,
            "kept": {name: data.decode("latin-1") for name, data in kept.items()},
            "check_file_unchanged": CHECK_FILE.read_bytes() == check_before}
