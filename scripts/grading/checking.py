"""The grader's side of the verdicts: one checker process per chapter (grading/checker.py), fresh, that
judges the answers the runs wrote down with this copy of the course's checks.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile

from grading.chapters import ROOT
from grading.running import CPU, HERE, clean_env

def check_chapter(spec: dict, runs: dict[str, dict], labels: dict[str, list[str]]) -> tuple[list[dict], str | None]:
    """The verdicts of one chapter, from a fresh checker process; and what went wrong with it, if it
    stopped (the learners it gave no verdict are then marked as errors, the rest stand)."""
    job = {"answers": spec["answers"],
           "learners": [{"name": name, "records": run["records"], "labels": labels[name], "stopped": run.get("stopped")}
                        for name, run in runs.items() if name in labels]}
    try:
        result = subprocess.run([sys.executable, str(HERE / "checker.py")], input=json.dumps(job),
                                capture_output=True, text=True, env={**clean_env(), "HOME": tempfile.gettempdir()},
                                cwd=str(ROOT), timeout=3600)
    except subprocess.TimeoutExpired:
        return [], "the checker ran past an hour"
    items = []
    for line in result.stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("timing"), dict):
            CPU.add("checkers", item["timing"].get("checker"))
        if isinstance(item, dict) and item.get("learner") in labels and item.get("label") in spec["answers"]:
            items.append(item)
    problem = None
    if result.returncode != 0:
        problem = "the checker stopped: " + ((result.stderr.strip().splitlines() or ["no message"])[-1])[:200]
    return items, problem
