"""The library's layers: each thing has one home, and the computation never depends on its pictures."""
import re
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib"
IMPORT = re.compile(r"^\s*(?:from|import)\s+(lib(?:\.\w+)*)", re.M)
# What each layer may not import: the model and the content know nothing of analyses or explorers,
# the analyses nothing of explorers (a view of a computation lives beside the computation).
FORBIDDEN = {"model": ("lib.analysis", "lib.explorers", "lib.exercises"),
             "content": ("lib.analysis", "lib.explorers", "lib.exercises"),
             "analysis": ("lib.explorers", "lib.exercises")}


def test_no_layer_imports_one_above_it():
    found = []
    for layer, banned in FORBIDDEN.items():
        for path in sorted((LIB / layer).rglob("*.py")):
            for name in IMPORT.findall(path.read_text()):
                if name.startswith(banned):
                    found.append(f"{path.relative_to(LIB.parent)} imports {name}")
    assert not found, found


def test_the_rule_can_fail():
    assert IMPORT.findall("    from lib.explorers.boxes import parse_seed\nimport lib.analysis") == \
        ["lib.explorers.boxes", "lib.analysis"]
