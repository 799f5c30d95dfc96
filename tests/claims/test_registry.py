"""The claims registry and `python -m lib claims`: every claim re-measured on seeds the pages never use."""
import json
import time

import pytest

from lib import claims
from lib.claims.registry import PAGE_SEEDS, Span, claim, REGISTRY
from lib.claims.words import Q
from lib.errors import CourseError

# Seeds no page prints a claim over (the pages use PAGE_SEEDS).
FRESH = (7, 11, 13)


def test_fresh_seeds_are_not_the_pages():
    assert not set(FRESH) & set(PAGE_SEEDS)


def _check_run(code, out, chapter=None):
    """Every claim holds as its page states it: a this-run or no-run claim on every seed; an every-run claim on
    the shipped run wherever the kept panel says it holds on the pages' run (on the others it may fail, as the
    panel says it does), with the reasons where it does not."""
    data = json.loads(out)
    assert data["seeds"] == list(FRESH)
    failing = [(c["id"], c["why"]) for c in data["claims"] if not c["agrees"]]
    assert code == 0 and not failing, failing
    expected = {c.id for c in claims.claims(chapter)}
    assert {c["id"] for c in data["claims"]} == expected
    for c in data["claims"]:
        assert {"id", "chapter", "statement", "scope", "model", "holds", "why", "agrees"} <= set(c)
        assert list(c["holds"]) == [str(s) for s in FRESH]
        assert c["statement"] and "{" not in c["statement"]
        assert set(c["why"]) == {s for s, ok in c["holds"].items() if not ok}


def test_every_claim_holds_on_three_fresh_seeds(run_in_process):
    # About 17 s on the course's idle 2-core machine (28 s of processor time); a machine loaded by
    # other work stretched it to 2.5 minutes. The bound is on processor time, not wall-clock time.
    start = time.process_time()
    code, out, err = run_in_process("claims", "--seeds", ",".join(map(str, FRESH)), "--json")
    _check_run(code, out)
    assert time.process_time() - start < 480


def test_one_chapters_claims_alone(run_in_process):
    code, out, err = run_in_process("claims", "--seeds", ",".join(map(str, FRESH)), "--chapter", "hand-wired",
                                    "--json")
    _check_run(code, out, "hand-wired")


def test_every_chapter_with_claims_has_at_least_one_and_ids_name_their_chapter():
    chapters = claims.chapters()
    assert len(chapters) >= 6
    for c in claims.claims():
        assert c.id.startswith(c.chapter + "."), c.id


@pytest.mark.parametrize("args, says", [
    (("--seeds", "1,x"), "--seeds must be whole numbers"),
    (("--seeds", "-3"), "--seeds must be whole numbers"),
    (("--chapter", "no-such-chapter"), "no claims for chapter 'no-such-chapter'"),
])
def test_bad_input_is_one_line_and_status_2(run_in_process, args, says):
    code, out, err = run_in_process("claims", *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and says in err


def test_a_failing_claim_exits_1_and_says_which_words_fail(run_in_process):
    claim("three-ways.test-only-false", "three-ways", "{x:.0f}, more than 2", words={"more than 2": Q("x") > 2},
          seeded=False, scope="no run")(lambda seed: {"x": 1})
    try:
        code, out, err = run_in_process("claims", "--chapter", "three-ways", "--seeds", "7")
        assert code == 1 and "FAILS" in out and "'more than 2': x = 1, not above 2" in out
        code, out, err = run_in_process("claims", "--chapter", "three-ways.md", "--seeds", "7", "--json")
        assert code == 1
        rows = {c["id"]: c for c in json.loads(out)["claims"]}
        assert rows["three-ways.test-only-false"]["holds"] == {"7": False}
        assert rows["three-ways.test-only-false"]["why"] == {"7": ["'more than 2': x = 1, not above 2"]}
    finally:
        del REGISTRY["three-ways.test-only-false"]


def test_a_statement_takes_its_numbers_from_one_sample_and_a_span_can_give_its_bound():
    """Numbers that go together (a count and what it counts) come from the first seed's one sample, never from
    ranges taken apart; a range over runs gives both ends, or one end when the statement names a bound."""
    assert format(Span(3, 5), ".0f") == "3 to 5"
    assert format(Span(0.123, 0.1234), ".2f") == "0.12"
    assert format(Span(1e-7, 3e-7), "max:.0e") == "3e-07" and format(Span(1, 2), "min:.0f") == "1"
    claim("three-ways.test-only-range", "three-ways", "{a:.0f} of {n:.0f} and {b:.1%} and {t}",
          words={"and": Q("a") >= 0}, scope="no run")(lambda seed: {"a": seed, "n": 10 + seed, "b": 0.5, "t": "same"})
    try:
        assert claims.statement("three-ways.test-only-range", [1, 4]) == "1 of 11 and 50.0% and same"
    finally:
        del REGISTRY["three-ways.test-only-range"]


def test_a_role_a_measurement_does_not_find_is_a_measured_no_with_its_reason():
    def measure(seed):
        raise claims.Absent("no layer-0 copier: the copier is L1H1")
    claim("three-ways.test-only-absent", "three-ways", "{x:.0f} above 0", words={"above 0": Q("x") > 0},
          seeded=False, scope="no run")(measure)
    try:
        c = claims.get("three-ways.test-only-absent")
        got = c.measure(0)
        assert got == {"absent": "no layer-0 copier: the copier is L1H1"}
        assert not c.holds(got) and c.failing(got) == [("", "no layer-0 copier: the copier is L1H1")]
    finally:
        del REGISTRY["three-ways.test-only-absent"]


def test_a_claim_cannot_be_registered_twice_nor_with_words_its_statement_lacks():
    existing = next(iter(REGISTRY))
    with pytest.raises(CourseError):
        claim(existing, "x", "y", words={"y": Q("y") > 0}, scope="no run")(lambda seed: {})
    with pytest.raises(CourseError, match="not in its statement"):
        claim("three-ways.test-only-words", "three-ways", "{x} apples", words={"more": Q("x") > 0}, scope="no run")
    with pytest.raises(CourseError, match="holds no number"):
        claim("three-ways.test-only-setup", "three-ways", "{x} apples, more", words={"more": Q("x") > 0},
              setup=("{x} apples",), scope="no run")


def test_glue_name_is_a_plain_identifier():
    assert claims.glue_name("real-language.analogy-no-win") == "claim_real_language__analogy_no_win"


def _chapter_texts():
    from pathlib import Path
    root = Path(__file__).resolve().parents[2] / "chapters"
    return {p: p.read_text(encoding="utf-8") for p in sorted(root.glob("*/*.md"))}


def test_every_glued_claim_is_registered_and_glued_where_the_page_prints_it():
    import re
    ids = set(claims.get(c.id).id for c in claims.claims())
    for path, text in _chapter_texts().items():
        glued = re.findall(r'glue_claim\("([^"]+)"\)', text)
        assert set(glued) <= ids, (path, set(glued) - ids)
        printed = set(re.findall(r"\{glue:text\}`(claim_[A-Za-z0-9_]+)", text))
        # Each glued claim prints under its name, its count of runs under NAME_runs and on how many it holds
        # under NAME_count (lib.claims.glue).
        allowed = ({claims.glue_name(i) for i in glued} | {claims.glue_name(i) + "_runs" for i in glued}
                   | {claims.glue_name(i) + "_count" for i in glued})
        assert printed <= allowed, (path, printed - allowed)


def test_no_page_speaks_of_its_own_earlier_editions():
    import re
    pattern = re.compile(r"earlier edition|previous edition|this edition|used to (say|end|claim)|chapter once said",
                         re.IGNORECASE)
    for path, text in _chapter_texts().items():
        assert not pattern.search(text), (path, pattern.search(text).group(0))


def test_a_claim_measured_once_is_kept_for_the_next_process(monkeypatch, tmp_path):
    """The build, the tests and the grader measure a claim on the shipped runs once between them: a process
    that has not measured it reads the kept numbers (here doctored, to show they are read, not measured
    again). A new process is this one with its in-memory measurements forgotten."""
    from lib.claims import registry

    monkeypatch.setenv("COURSE_CLAIMS_CACHE", str(tmp_path))
    id, seed = "search-by-hand.long-when-sure", 5
    monkeypatch.setattr(registry, "_CACHE", {})
    first = registry.measure(id, seed)
    [path] = tmp_path.glob(f"claim-{id}-{seed}-*.json")
    kept = json.loads(path.read_text())
    assert kept["value"] == first
    kept["value"]["n_open"] = -1
    path.write_text(json.dumps(kept))
    monkeypatch.setattr(registry, "_CACHE", {})
    assert registry.measure(id, seed)["n_open"] == -1


def test_no_claim_is_kept_under_another_run():
    from lib import kept
    from lib.model import store

    assert kept.shipped_key("claim-x-0") is not None
    with store.use_run("zero-layer", store.shipped_runs("zero-layer")[1]):
        assert kept.shipped_key("claim-x-0") is None


def test_part1_states_its_conclusions_as_registered_claims_and_picks_no_head_by_name():
    import re
    from pathlib import Path
    from lib import claims
    chapters = {"why-attention", "bigrams", "one-head", "many-heads", "circuits", "ablation"}
    found = [c for c in claims.claims() if c.chapter in chapters]
    assert len(found) >= 18 and {c.chapter for c in found} == chapters
    # No ranking leaves a head out by name (`n != "L0H0"`): the evidence is every head.
    by_name = re.compile(r"""(!=|not in|==)\s*\(?\s*["']L\d+H\d+["']""")
    for path in sorted((Path(__file__).resolve().parents[2] / "chapters" / "part1").glob("*.md")):
        code = "\n".join(re.findall(r"```\{code-cell\}.*?```", path.read_text(encoding="utf-8"), re.S))
        assert not by_name.search(code), (path.name, by_name.search(code).group(0))
