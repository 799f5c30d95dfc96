"""The calling game's rules checker: the library's (read_round) and the page's twin (game.js) agree.

Generated rounds (valid, and cut short), rounds broken one token at a time (a token changed, dropped,
added or two swapped) and random strings of the vocabulary: the same verdict, position, rule, allowed
tokens and sentence in both.
"""
import json
import random
import shutil
import subprocess

import pytest

from lib.content.corpora import calling_game as cg
from lib.explorers import web

NODE = shutil.which("node")


def rounds(count: int, seed: int = 25) -> list[list[str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        r = cg.sample_round(rng)
        kind = rng.randrange(7)
        i = rng.randrange(len(r))
        if kind == 0:
            pass                                                    # a valid round
        elif kind == 1:
            r = r[:i]                                               # cut short
        elif kind == 2:
            r = r[:i] + [rng.choice(cg.TOKENS)] + r[i + 1:]         # one token changed
        elif kind == 3:
            r = r[:i] + r[i + 1:]                                   # one dropped
        elif kind == 4:
            r = r[:i] + [rng.choice(cg.TOKENS)] + r[i:]             # one added
        elif kind == 5:
            j = rng.randrange(len(r))
            r[i], r[j] = r[j], r[i]                                 # two swapped
        else:
            r = [rng.choice(cg.TOKENS) for _ in range(rng.randint(0, 50))]   # garbage
        out.append(r)
    return out


def verdict(tokens) -> dict:
    v = cg.read_round(tokens)
    return {"status": v.status, "position": v.position, "rule": v.rule, "message": v.message,
            "allowed": list(v.allowed), "turns": list(v.turns)}


def test_generated_rounds_are_valid_and_every_kind_of_break_is_named():
    seen = {"valid": 0, "unfinished": 0, "broken": 0}
    rules = set()
    for r in rounds(3000):
        v = cg.read_round(r)
        seen[v.status] += 1
        rules.add(v.rule)
        if v.status == "broken":
            assert v.message.startswith(f"position {v.position}:") and r[v.position] not in v.allowed
            # everything before the break keeps the rules: the prefix is a round's beginning
            assert cg.read_round(r[:v.position]).status == ("valid" if not v.allowed else "unfinished")
    assert all(n > 200 for n in seen.values()), seen
    assert rules >= {None, *cg.RULES}, rules


@pytest.mark.skipif(NODE is None, reason="Node.js runs the page's modules; install it (README)")
def test_the_pages_checker_is_the_librarys(tmp_path):
    web.install(tmp_path)
    cases = rounds(4000, seed=7) + [[], ["<BOS>"], "<BOS> Pietro chiama Pietro capo".split(), ["x'y"]]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    script = (f"import('{(tmp_path / 'game.js').as_uri()}').then((g) => {{"
              f"const cases = JSON.parse(require('fs').readFileSync('{tmp_path / 'cases.json'}', 'utf8'));"
              "console.log(JSON.stringify(cases.map((c) => g.readRound(c)))); })")
    got = json.loads(subprocess.run([NODE, "-e", script], capture_output=True, text=True, check=True).stdout)
    differ = [(c, verdict(c), g) for c, g in zip(cases, got) if verdict(c) != g]
    assert not differ, differ[:3]


def why_not_a_prefix(tokens) -> str | None:
    try:
        cg.next_token_distribution(tokens)
        return None
    except cg.CourseError as e:
        return str(e)


@pytest.mark.skipif(NODE is None, reason="Node.js runs the page's modules; install it (README)")
def test_the_pages_prefix_reading_is_the_librarys(tmp_path):
    """game.js's whyNotAPrefix (the answer boxes' reading of a typed prompt) and next_token_distribution:
    the same prompts allowed, the same sentence for each one forbidden."""
    web.install(tmp_path)
    cases = rounds(4000, seed=11) + [[], ["<BOS>"], "<BOS> Pietro chiama Pietro capo".split(),
                                     "<BOS> Paolo chiama Pietro".split(), ["x'y"]]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    script = (f"import('{(tmp_path / 'game.js').as_uri()}').then((g) => {{"
              f"const cases = JSON.parse(require('fs').readFileSync('{tmp_path / 'cases.json'}', 'utf8'));"
              "console.log(JSON.stringify(cases.map((c) => g.whyNotAPrefix(c)))); })")
    got = json.loads(subprocess.run([NODE, "-e", script], capture_output=True, text=True, check=True).stdout)
    want = [why_not_a_prefix(c) for c in cases]
    assert sum(w is None for w in want) > 300 and sum(w is not None for w in want) > 300
    differ = [(c, w, g) for c, w, g in zip(cases, want, got) if w != g]
    assert not differ, differ[:3]


@pytest.mark.skipif(NODE is None, reason="Node.js runs the page's modules; install it (README)")
def test_the_pages_token_roles_are_the_librarys(tmp_path):
    """game.js's tokenRoles (how the page matches mean and resample ablation's reference by role) and
    token_roles: the same role at every position of rounds valid, broken and random, and of tokens no
    round holds."""
    web.install(tmp_path)
    cases = rounds(3000, seed=13) + [[], ["<BOS>"], ["constructor", "toString", "<PAD>", "<SEP>", "x"]]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    script = (f"import('{(tmp_path / 'game.js').as_uri()}').then((g) => {{"
              f"const cases = JSON.parse(require('fs').readFileSync('{tmp_path / 'cases.json'}', 'utf8'));"
              "console.log(JSON.stringify(cases.map((c) => g.tokenRoles(c)))); })")
    got = json.loads(subprocess.run([NODE, "-e", script], capture_output=True, text=True, check=True).stdout)
    want = [cg.token_roles(c) for c in cases]
    assert len({r for w in want for r in w}) >= len(cg.TOKEN_ROLES)
    differ = [(c, w, g) for c, w, g in zip(cases, want, got) if w != g]
    assert not differ, differ[:3]
