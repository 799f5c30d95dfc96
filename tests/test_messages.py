"""Every sentence a reader's mistake gets (lib.messages), written once for the library and the page: each
template has plain named fields only; every `say(...)` in the library's Python and in the page's JavaScript
names a sentence that exists and fills exactly its fields; every sentence is said somewhere."""
import ast
import re
import string
from pathlib import Path

import pytest

from lib.messages import MESSAGES, say

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib"
JS_SAY = re.compile(r"\bsay\(\s*\"(\w+)\"\s*(?:,\s*\{([^{}]*)\})?\s*\)")


def fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def python_calls():
    """(where, name, fields given or None when they come from a ** mapping) of every say() with a literal name."""
    for path in sorted(LIB.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            # `say(...)` or `messages.say(...)`; a site check's own `.say` (its sentences, lib.exercises.site) is not this
            if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                    and (getattr(node.func, "id", None) == "say"
                         or (isinstance(node.func, ast.Attribute) and node.func.attr == "say"
                             and getattr(node.func.value, "id", None) == "messages"))):
                given = None if any(k.arg is None for k in node.keywords) else {k.arg for k in node.keywords}
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node.args[0].value, given


def object_keys(body: str) -> set[str]:
    """The keys of a JavaScript object literal's body (`a: f(x, y), b` -> {a, b}): split at the commas
    outside brackets, each part's name before its colon (or the part itself, written shorthand)."""
    parts, depth, current = [], 0, ""
    for ch in body:
        depth += ch in "([" and 1 or ch in ")]" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return {p.split(":", 1)[0].strip() for p in parts if p.strip()}


def js_calls():
    for path in sorted(LIB.rglob("*.js")):
        text = path.read_text(encoding="utf-8")
        for m in JS_SAY.finditer(text):
            yield f"{path.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}", m.group(1), object_keys(m.group(2) or "")


def test_the_reading_finds_keys_not_values():
    assert object_keys(" position: String(n - 1), allowed: shown(a, b), got ") == {"position", "allowed", "got"}


def test_every_template_has_plain_named_fields_only():
    """The page fills `{name}` fields with a regular expression: no other braces, no format specs."""
    for name, text in MESSAGES.items():
        assert re.sub(r"\{\w+\}", "", text).count("{") == 0 and "}" not in re.sub(r"\{\w+\}", "", text), name
    assert say("top_k", got="0") == "top-k must be a whole number of at least 1, got 0"


@pytest.mark.parametrize("calls", [python_calls, js_calls], ids=["python", "javascript"])
def test_every_call_names_a_sentence_and_fills_exactly_its_fields(calls):
    found = list(calls())
    assert len(found) > 20, "the reading finds the calls"
    bad = [f"{where}: say({name!r}) " + ("names no sentence" if name not in MESSAGES else
                                          f"fills {sorted(given)}, the sentence has {sorted(fields(MESSAGES[name]))}")
           for where, name, given in found
           if name not in MESSAGES or (given is not None and given != fields(MESSAGES[name]))]
    assert not bad, "\n".join(bad)


def test_every_sentence_is_said_somewhere():
    said = {name for _, name, _ in [*python_calls(), *js_calls()]}
    # A sentence may also be named by a variable holding its key (a table of keys in the library or a page).
    text = "\n".join(p.read_text(encoding="utf-8") for p in [*LIB.rglob("*.py"), *LIB.rglob("*.js")]
                     if p.name != "messages.py")
    unsaid = [name for name in MESSAGES if name not in said and f'"{name}"' not in text]
    assert not unsaid, f"sentences nothing says (remove them, or say them): {unsaid}"
