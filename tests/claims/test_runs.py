"""Claims over training runs (lib/claims/runs.py, `python -m lib claims --runs`): every claim says its
scope; a claim about the recipe holds on every shipped run and on runs trained with seeds the course
never ships."""
import json

import pytest

from lib import claims as registry
from lib.claims import runs
from lib.model import store
from tests.conftest import FRESH_TRAINING_SEED

FRESH_PROMPT_SEED = 7         # a prompt-set seed the pages never print (they use 0, 1, 2)


def test_every_claim_says_its_scope_and_what_it_reads():
    for c in registry.claims():
        assert c.scope in registry.SCOPES, c.id
        if c.scope == registry.EVERY_RUN:
            assert c.models and set(c.models) <= set(store.shipped_names()), c.id
        if c.scope == registry.NO_RUN:
            assert not c.models, c.id


def test_most_claims_are_lessons_about_the_recipe():
    """The course teaches the recipe, not one run: of the claims about the course's trained models, most
    hold on every run."""
    about_training = [c for c in registry.claims() if c.models]
    every = [c for c in about_training if c.scope == registry.EVERY_RUN]
    assert len(every) > len(about_training) / 2, (len(every), len(about_training))


def test_every_trainable_model_ships_at_least_five_runs():
    for name in {m for c in registry.claims() for m in c.models}:
        folders = store.shipped_runs(name)
        assert len(folders) >= 5, (name, folders)
        seeds = [json.loads((f / store.META).read_text())["train"]["seed"] for f in folders]
        assert seeds[0] == 0 and len(set(seeds)) == len(seeds), seeds
        for f in folders:
            store.read_model(name, f)           # whole: checksum, shapes, finite numbers


def test_use_run_reads_the_named_folder_and_gives_the_shipped_one_back():
    shipped = store.load("zero-layer")
    other = store.shipped_runs("zero-layer")[1]
    with store.use_run("zero-layer", other):
        inside = store.load("zero-layer")
    assert inside is not shipped and store.load("zero-layer") is shipped
    a = shipped.model.state_dict()["W_U"] if "W_U" in shipped.model.state_dict() else next(iter(shipped.model.state_dict().values()))
    b = inside.model.state_dict()["W_U"] if "W_U" in inside.model.state_dict() else next(iter(inside.model.state_dict().values()))
    assert float((a - b).abs().max()) > 1e-3, "another training seed gives other weights"


def test_each_run_is_measured_in_a_process_of_its_own(monkeypatch, tmp_path):
    """More runs than jobs: no worker measures a second run with the first one's cached model."""
    monkeypatch.setenv("COURSE_CLAIMS_CACHE", str(tmp_path))
    two = {f"seed {s}": runs.shipped_run(["calling-game"], s) for s in (1, 2)}
    got = runs.measure_runs(two, ["circuits.rank"], [0], jobs=1)
    tails = [got[label]["circuits.rank"]["0"]["numbers"]["tail"] for label in two]
    assert tails[0] != pytest.approx(tails[1], rel=1e-6), "the second run was measured with the first run's weights"


@pytest.mark.slow
def test_every_claim_about_the_recipe_holds_on_runs_trained_with_a_fresh_seed(fresh_runs, run_process):
    """`python -m lib claims --runs A,B,C`: each folder trained with a seed no shipped run uses, on a
    prompt-set seed no page prints."""
    folders = ",".join(str(fresh_runs[name]) for name in fresh_runs)
    r = run_process("claims", "--runs", folders, "--seeds", str(FRESH_PROMPT_SEED), "--json")
    data = json.loads(r.stdout)
    assert data["runs"] == folders.split(",")
    every = [c for c in data["claims"] if c["scope"] == registry.EVERY_RUN]
    assert every, "no claim about the recipe was measured"
    failing = [(c["id"], run) for c in every for run, ok in c["holds"].items() if not ok]
    assert not failing, f"claims about the recipe that fail on training seed {FRESH_TRAINING_SEED}: {failing}"
    trained = set(fresh_runs)
    for c in every:
        assert set(c["holds"]) <= set(data["runs"]), c
        # A lesson is measured on each run that replaces a model it reads (none for the induction model's).
        assert bool(c["holds"]) == bool(set(registry.get(c["id"]).models) & trained), c
    for c in data["claims"]:
        if c["scope"] != registry.EVERY_RUN:
            assert list(c["holds"]) == [runs.SHIPPED], c
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("make, says", [
    (lambda tmp: tmp / "nothing-here", "no such folder"),
    (lambda tmp: tmp, "is not a trained model"),
])
def test_a_folder_that_is_not_a_trained_model_is_one_line_and_status_2(run_in_process, tmp_path, make, says):
    code, out, err = run_in_process("claims", "--runs", str(make(tmp_path)))
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err


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
