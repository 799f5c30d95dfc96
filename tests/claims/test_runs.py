"""Claims over training runs (lib/claims/runs.py, `python -m lib claims --runs`): every claim says its scope, a
claim about the recipe reads only the models it names, and each run is measured in a process of its own.
(The panel of shipped runs, and a run trained here, are tests/claims/test_panel.py's.)"""
import json

import pytest

from lib import claims as registry
from lib.claims import panel, runs
from lib.model import store



def test_every_claim_says_its_scope_and_what_it_reads():
    for c in registry.claims():
        assert c.scope in registry.SCOPES, c.id
        if c.scope == registry.EVERY_RUN:
            assert c.models and set(c.models) <= set(store.shipped_names()), c.id
        if c.scope == registry.NO_RUN:
            assert not c.models, c.id


def test_most_claims_about_trained_models_are_lessons_about_the_recipe():
    """The course teaches the recipe, not one run: of the claims about the course's trained models, most are
    measured on the panel."""
    about_training = [c for c in registry.claims() if c.models]
    every = [c for c in about_training if c.scope == registry.EVERY_RUN]
    assert len(every) > len(about_training) / 2, (len(every), len(about_training))


def test_use_run_reads_the_named_folder_and_gives_the_shipped_one_back():
    shipped = store.load("zero-layer")
    other = panel.folder_of("zero-layer", 1)
    with store.use_run("zero-layer", other):
        inside = store.load("zero-layer")
    assert inside is not shipped and store.load("zero-layer") is shipped
    a, b = shipped.model.state_dict()["W_E"], inside.model.state_dict()["W_E"]
    assert float((a - b).abs().max()) > 1e-3, "another training seed gives other weights"


def test_each_run_is_measured_in_a_process_of_its_own(monkeypatch, tmp_path):
    """More runs than jobs: no worker measures a second run with the first one's cached model."""
    monkeypatch.setenv("COURSE_CLAIMS_CACHE", str(tmp_path))
    two = {f"seed {s}": panel.run_of(s, ["calling-game"]) for s in (1, 2)}
    got = runs.measure_runs(two, ["circuits.rank"], [0], jobs=1)
    tails = [got[label]["circuits.rank"]["0"]["numbers"]["tail"] for label in two]
    assert tails[0] != pytest.approx(tails[1], rel=1e-6), "the second run was measured with the first run's weights"


@pytest.mark.parametrize("make, says", [
    (lambda tmp: tmp / "nothing-here", "no such folder"),
    (lambda tmp: tmp, "is not a trained model"),
])
def test_a_folder_that_is_not_a_trained_model_is_one_line_and_status_2(run_in_process, tmp_path, make, says):
    code, out, err = run_in_process("claims", "--runs", str(make(tmp_path)))
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err


def test_a_run_measures_only_the_claims_that_read_it_and_says_why_one_fails(run_in_process):
    """`claims --runs` on a shipped run of the zero-layer model: the claims about the recipe that read the
    zero-layer model, and no other claim; each with the panel's count, its numbers, and, where it fails, which
    words and why (a copy of the panel's own run, so nothing contradicts its page)."""
    folder = panel.folder_of("zero-layer", 3)
    code, out, err = run_in_process("claims", "--runs", str(folder), "--seeds", str(panel.PROMPT_SEED), "--json")
    data = json.loads(out)
    ids = {c["id"] for c in data["claims"]}
    assert ids == {i for i in panel.every_run_ids() if "zero-layer" in registry.get(i).models}
    for c in data["claims"]:
        assert set(c["holds"]) == {str(folder)} and not c["errors"], c
        assert c["panel"]["runs"] == len(panel.claim_seeds(c["id"]))
        if tuple(registry.get(c["id"]).models) == ("zero-layer",):    # the panel's seed 3 of the others reads
            kept = panel.per_run(c["id"])[3]                           # their seed-3 runs too, not the shipped
            assert not panel.differences(kept, c["numbers"][str(folder)][str(panel.PROMPT_SEED)]), c["id"]
        if not c["holds"][str(folder)]:
            assert c["why"][str(folder)] and not c["contradicts"] or not c["panel"]["every"], c
    assert code == 0, err


def test_a_model_no_claim_reads_is_refused(run_in_process, tmp_path):
    """A folder that replaces a shipped model no claim about the recipe reads: one line, status 2. Every shipped
    model is read by some chapter's lessons, so the test asks of one chapter (`--chapter`) a model none of its
    lessons reads."""
    import shutil

    def reads(chapter):
        return {m for c in registry.claims(chapter) if c.scope == registry.EVERY_RUN for m in c.models}
    chapter, unread = next((ch, n) for ch in registry.chapters() if reads(ch)
                           for n in store.shipped_names() if n not in reads(ch))
    shutil.copytree(store.models_dir() / unread, tmp_path / "m")
    code, out, err = run_in_process("claims", "--runs", str(tmp_path / "m"), "--chapter", chapter)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"is a model {unread!r} that no claim about the recipe reads" in err and ", ".join(sorted(reads(chapter))) in err
