"""An answer read as a learner writes it (lib.exercises.reading), and the page reading it the same way.

The forms a learner writes (a decimal comma, a percent, a fraction, "≈", a unit, a full stop; case,
spaces and quotes in a text) each read as meant, the one ambiguous form ("1,234" in a box that is not a
count) is answered with a sentence of its own, and the page's twin (rules.js: typedAnswer, spelled) reads
a battery of texts, hand-written and random, exactly as Python does (Node, fast tier).
"""
from __future__ import annotations

import json
import math
import random
import shutil
import subprocess

import pytest

from lib.exercises import check_choice, check_number, check_whole_number, spelled
from lib.exercises.reading import Unread, read_number, read_text
from lib.exercises.site import typed_answer
from lib.explorers import web

NODE = shutil.which("node")
GAME_WORDS = ("<BOS>", "<SEP>", "<EOS>", "Pietro", "Paolo", "chiama", "perde", "Vice", "capo", "Tarso", "3", "4")


@pytest.mark.parametrize("text,value", [
    ("0.482", 0.482), ("0,482", 0.482), (",5", 0.5), ("48.2%", 0.482), ("48,2 %", 0.482), ("48.2 percent", 0.482),
    ("≈0.48", 0.48), ("≈ 0,48", 0.48), ("~0.48", 0.48), ("about 0.48", 0.48), ("About 0.48.", 0.48),
    ("0.48.", 0.48), ("0.48!", 0.48), ("1/4", 0.25), ("3 / 4", 0.75), ("−0.5", -0.5), ("-1/3", -1 / 3),
    ("1,234.5", 1234.5), ("1.234,5", 1234.5), ("1.234.567", 1234567), ("27 126", 27126), ("27\u202f126", 27126),
    ("1e-3", 0.001), ("1_000", 1000), ("3.", 3), ("= 0.5", 0.5), ("12,34", 12.34), ("'0.5'", "'0.5'"),
])
def test_a_number_reads_as_meant(text, value):
    got = read_number(text)
    assert got == value if isinstance(value, str) else math.isclose(got, value, rel_tol=1e-12), (text, got)


def test_the_comma_rule_for_counts_and_for_probabilities():
    # A count: a comma before three digits separates thousands; anything else with a comma is a decimal.
    assert read_number("27,126", whole=True) == 27126 and isinstance(read_number("27,126"), Unread)
    assert read_number("1,234", whole=True) == 1234 and read_number("1,234,567", whole=True) == 1234567
    assert read_number("12,5", whole=True) == 12.5            # then "should be a whole number"
    # A probability: a leading 0 or more or fewer than three decimals make the comma a decimal comma...
    assert read_number("0,482") == 0.482 and read_number("1,5") == 1.5 and read_number("1,2345") == 1.2345
    # ...and the one form that could be either is not guessed.
    r = read_number("1,234")
    assert isinstance(r, Unread) and "1234" in r.message and "1.234" in r.message
    assert check_number("1,234", 1.234, tol=0.01, what="The logit").message == r.message
    assert check_number("0,482", 0.482, tol=0.005, what="The probability").ok
    assert check_number("48.2%", 0.482, tol=0.005, what="The probability").ok
    assert check_whole_number("27 126 tokens", 27126, what="The count", units=("tokens",)).ok
    assert not check_whole_number("27 126 bytes", 27126, what="The count", units=("tokens",)).ok


def test_units_are_the_boxs_own():
    assert read_number("1.5 GB", units=("GB",)) == 1.5 == read_number("1.5GB.", units=("GB",))
    assert read_number("1.5 gb", units=("GB",)) == 1.5
    assert read_number("1.5 MB", units=("GB",)) == "1.5 MB"          # another unit is not this box's number
    assert read_number("12 tokens", units=("tokens", "token")) == 12


def test_text_and_choices_read_as_a_learner_writes_them():
    assert read_text("  “Vice  <SEP> 3 perde <EOS>.”  ", GAME_WORDS) == "Vice <SEP> 3 perde <EOS>"
    assert read_text("vice <sep> 3 PERDE <eos>", GAME_WORDS) == "Vice <SEP> 3 perde <EOS>"
    assert read_text("'Vice <SEP>'") == "Vice <SEP>"
    assert read_text("banana split", GAME_WORDS) == "banana split"
    assert spelled("“L0H3”.") == spelled("'l0h3'") == spelled("L0 H3") == "l0h3"
    assert spelled(".") == "." and spelled("?") == "?"              # punctuation alone stays itself
    assert check_choice("«Tarso».", ["Tarso", "Cefa"], "Tarso", right="yes", wrong="no").ok
    assert typed_answer("“L0H3”, 2", "tuple") == ("L0H3", 2)


# ----------------------------------------------------------------------------- the page reads alike

HAND = ["0.482", "0,482", "48.2%", "48,2 %", "≈ 0.48", "~.5", "about 0,5", "1/4", "1 / 0", "3/4.", "−3", "–3",
        "1,234", "-1,234", "1,234.5", "1.234,5", "1.234.567", "27,126", "27 126", "27\u00a0126", "27\u2009126",
        "0,5e-3", "1e400", "nan", "-inf", "Infinity", "1_000", "1__0", "12345678901234567890123", "1e-3%",
        "12345678901234567890123%", "banana", "", "   ", "'0.5'", "“0.5”", "0.5 GB", "0.5gb", "0.5 MB", "12 tokens",
        "12 token", "tokens", "%", "≈", "3.", "3..", ".", "..5", "1,2,3", "1,,2", "0,", ",", "00,482", "+1,234",
        "1 234,5", "1 2345", "١٢٣", "12,5", "12.5", "1/3", "2/3 %", "= 7", "approx. 7", "ca. 7", "7 ?", "7!",
        "Vice <SEP> 3 perde <EOS>", "vice <sep> 3 PERDE <eos>.", "“Vice <SEP> 3”", "'Pietro'", "L0H3, 2",
        "(“L0H3”, 2)", "[1, 2, 3, 4]", "L0H3 and 2", "l0h3 2", "(1, 2", "()", "'L1H2', 'x'", "«Tarso»",
        "Tarso.", "?", "...", "x" * 80, "😀", "0.5😀", "1,5 percent", "1.5 per cent"]
ALPHABET = list("0123456789") * 3 + list(",.,. %/-−≈~'\"“”«»eE_ ") + ["about ", "GB", "tokens", "Vice", "<SEP>"]


def battery(count: int = 1500, seed: int = 49) -> list[str]:
    rng = random.Random(seed)
    return HAND + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 9))) for _ in range(count)]


# (how the box is read, its units, its words)
READINGS = [("number", [], None), ("whole", [], None), ("number", ["GB"], None), ("whole", ["tokens", "token"], None),
            ("choice", [], None), ("text", [], None), ("text", [], list(GAME_WORDS)), ("tuple", [], None)]


def _as_page(value, text: str, rule: str, units) -> dict:
    """Python's reading in the page's shape ({kind, value, unread})."""
    if value is ...:
        return None
    if isinstance(value, tuple):
        return {"kind": "tuple", "value": [_as_page(v, "", "tuple", ()) for v in value]}
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(value)
    if isinstance(value, int):
        return {"kind": "int", "value": str(value)}
    if isinstance(value, float):
        return {"kind": "float", "value": value if math.isfinite(value) else repr(value)}
    out = {"kind": "str", "value": value}
    if rule in ("number", "whole"):
        r = read_number(text, rule == "whole", units)
        if isinstance(r, Unread):
            out["unread"] = r.message
    return out


def _plain(reading):
    """A reading with its floats as floats (JSON writes 1.2e20 from the page as a whole number)."""
    if reading is None:
        return None
    if reading["kind"] == "tuple":
        return {"kind": "tuple", "value": [_plain(v) for v in reading["value"]]}
    if reading["kind"] == "float" and not isinstance(reading["value"], str):
        return {"kind": "float", "value": float(reading["value"])}
    return reading


PAGE_READS = """
const rules = await import(process.argv[2]);
const cases = JSON.parse(require("fs").readFileSync(process.argv[3], "utf8"));
const plain = (a) => a === null ? null : a.kind === "tuple" ? { kind: "tuple", value: a.value.map(plain) }
  : a.kind === "int" ? { kind: "int", value: a.value.toString() }
  : a.kind === "float" ? { kind: "float", value: Number.isFinite(a.value) ? a.value : (Number.isNaN(a.value) ? "nan" : a.value > 0 ? "inf" : "-inf") }
  : a.unread === undefined ? { kind: "str", value: a.value } : { kind: "str", value: a.value, unread: a.unread };
console.log(JSON.stringify(cases.map(([text, rule, units, words]) =>
  [plain(rules.typedAnswer(text, rule, { units, words })), rules.spelled(text)])));
"""


@pytest.mark.skipif(NODE is None, reason="Node.js runs the page's modules; install it (README)")
def test_the_page_reads_every_text_as_the_library_does(tmp_path):
    web.install(tmp_path)
    cases = [(t, rule, units, words) for t in battery() for rule, units, words in READINGS]
    (tmp_path / "cases.json").write_text(json.dumps(cases, ensure_ascii=False))
    script = tmp_path / "reads.mjs"
    script.write_text('import { createRequire } from "module";\nconst require = createRequire(import.meta.url);\n'
                      + PAGE_READS)
    run = subprocess.run([NODE, str(script), (tmp_path / "rules.js").as_uri(), str(tmp_path / "cases.json")],
                         capture_output=True, text=True, check=True)
    got = json.loads(run.stdout)
    differ = []
    for (text, rule, units, words), (page, page_spelled) in zip(cases, got):
        value = typed_answer(text, rule, tuple(units), tuple(words) if words else None)
        mine = _as_page(value, text, rule, tuple(units))
        same = _plain(mine) == _plain(page)
        if not same or spelled(text) != page_spelled:
            differ.append((text, rule, units, mine, page, spelled(text), page_spelled))
    assert not differ, "\n".join(map(repr, differ[:8]))
    assert len(cases) > 12_000
