"""Where a chapter's execution time goes: processor seconds per cell, read inside its kernel.

    python scripts/chapter_profile.py [CHAPTER.md ...] [--top N] [--json FILE] [--keep-caches] [--fresh]

Each chapter runs in a kernel of its own, one at a time, as the build runs it (myst-nb's reader, the
chapter's folder as working directory, one arithmetic thread, a fork of the warm process that has imported
the heavy packages once: scripts/warm_python.py; `--fresh`: a fresh kernel that imports them itself). A first cell added to the copy that
runs registers IPython's cell events; every cell then records the kernel's processor time (user and
system, its own and its waited-for children's: the processes a claim over runs starts) and wall time.
Processor seconds, not wall time, since the machine may be shared: they are what a second core cannot
hide. The kernel's start (interpreter, ipykernel) is the processor time spent before the first cell.

The measurements the build keeps on disk (lib.kept: the claims over runs; the real model's menu) are
kept in a new, empty folder for the whole run, as in a fresh clone, unless --keep-caches; the shipped runs'
claims are then measured first, as the build measures them (chapter_cache.claim_runs), and their processor
time printed. With the warm process, a kernel's figure is its own (after the fork); the warm process's
imports, paid once a build, are printed apart.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import warm_python
from chapter_cache import ROOT, SINGLE_THREAD, chapters, claim_runs, measure_claim_run, read_chapter

# The kernel side: each cell's processor time (self and children) and wall time, kept in the kernel.
_HOOKS = """
import resource as _r, time as _t
def _cpu():
    s, c = _r.getrusage(_r.RUSAGE_SELF), _r.getrusage(_r.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
_PROFILE = {"start": _cpu(), "cells": []}
def _pre(info):
    _PROFILE["now"] = (_cpu(), _t.perf_counter())
def _post(result):
    cpu, wall = _PROFILE.pop("now", (_cpu(), _t.perf_counter()))
    _PROFILE["cells"].append((_cpu() - cpu, _t.perf_counter() - wall))
get_ipython().events.register("pre_run_cell", _pre)
get_ipython().events.register("post_run_cell", _post)
"""
_REPORT = """
import json as _j
print("PROFILE", _j.dumps({"start": _PROFILE["start"], "cells": _PROFILE["cells"][1:],
                           "peak_mb": _r.getrusage(_r.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def profile(path: Path, env: dict[str, str], kernel: str = "python3") -> dict:
    """One chapter executed in a kernel of its own (`kernel`): its cells' processor and wall seconds."""
    from nbclient import NotebookClient

    nb = read_chapter(path)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    run = nbformat.from_dict(json.loads(json.dumps(nb)))
    run.cells = [nbformat.v4.new_code_cell(_HOOKS)] + [run.cells[i] for i in code] + [nbformat.v4.new_code_cell(_REPORT)]
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        start = time.perf_counter()
        NotebookClient(run, timeout=900, kernel_name=kernel,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        wall = time.perf_counter() - start
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    text = "".join(o.get("text", "") for o in run.cells[-1].outputs if o.get("output_type") == "stream")
    got = json.loads(text.split("PROFILE", 1)[1])
    lines = nb.metadata.get("source_map", [])
    cells = []
    for (cpu, seconds), i in zip(got["cells"], code):
        first = next((ln for ln in nb.cells[i].source.splitlines() if ln.strip() and not ln.startswith(":")), "")
        cells.append({"line": lines[i] if i < len(lines) else None, "cpu": cpu, "wall": seconds, "code": first[:70]})
    return {"chapter": str(path.relative_to(ROOT)), "wall": wall, "start_cpu": got["start"], "peak_mb": got["peak_mb"],
            "cpu": got["start"] + sum(c["cpu"] for c in cells), "cells": cells}


def _children_cpu() -> float:
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return c.ru_utime + c.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("chapters", nargs="*", help="chapter files (default: every chapter of _toc.yml)")
    ap.add_argument("--top", type=int, default=4, help="the most expensive cells shown per chapter")
    ap.add_argument("--json", help="write every chapter's cells to this file")
    ap.add_argument("--keep-caches", action="store_true", help="read and write the build's kept measurements")
    ap.add_argument("--fresh", action="store_true", help="fresh kernels, not forks of the warm process")
    args = ap.parse_args(argv)
    paths = [Path(p).resolve() for p in args.chapters] or chapters()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(SINGLE_THREAD)
        if not args.keep_caches:
            env.update(COURSE_CLAIMS_CACHE=f"{tmp}/claims", COURSE_REAL_CACHE=f"{tmp}/real")
        results = []
        os.environ.update(env)          # the claims' processes and the warm process read them
        if not args.fresh:
            cpu = _children_cpu()
            with warm_python.started(dict(os.environ)):
                pass
            print(f"the warm process's imports: cpu {_children_cpu() - cpu:.1f} s", flush=True)
        if not args.keep_caches:
            # Each shipped run's claims, measured before the chapters as the build does (chapter_cache.claim_runs).
            cpu = _children_cpu()
            with warm_python.started(dict(os.environ)) if not args.fresh else contextlib.nullcontext() as warm:
                todo = claim_runs()
                for run, ids, seeds in todo:
                    measure_claim_run(run, ids, seeds, warm.python() if warm is not None else None)
            print(f"{len(todo)} runs' claims: cpu {_children_cpu() - cpu:.1f} s (with the warm process's imports)", flush=True)
        with warm_python.started(dict(os.environ)) if not args.fresh else contextlib.nullcontext() as warm:
            for path in paths:
                r = profile(path, env, warm.kernel_name if warm is not None else "python3")
                results.append(r)
                print(f"{r['chapter']:45s} cpu {r['cpu']:7.1f} s  wall {r['wall']:7.1f} s  start {r['start_cpu']:4.1f} s  "
                      f"peak {r['peak_mb']:6.0f} MB", flush=True)
                for c in sorted(r["cells"], key=lambda c: -c["cpu"])[:args.top]:
                    print(f"    line {c['line']!s:>4}  cpu {c['cpu']:6.1f}  wall {c['wall']:6.1f}  {c['code']}", flush=True)
    total = sum(r["cpu"] for r in results)
    print(f"{len(results)} chapters: {total:.1f} processor seconds; load average {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
