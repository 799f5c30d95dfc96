"""Part 1's index page (chapters/part1/index.md) and the intro read in an order a newcomer can follow
(issue 39 item 4, issue 34 item 6): the game before the machine, and every term of the machine map
explained in one line where it stands, or left to the chapter that teaches it."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
INDEX = (ROOT / "chapters" / "part1" / "index.md").read_text()
INTRO = (ROOT / "intro.md").read_text()

# The map's words, each given a line on the page (in bold where it is explained) before it is used.
EXPLAINED = ("token", "results page", "residual stream", "write", "attention head", "pattern", "MLP",
             "logit", "unembedding", "bias", "softmax", "logit lens")
# Words the map leaves to the chapters that teach them.
LATER = ("LayerNorm", "hook point", "ablation", "direct logit", "query", "queries")


def prose(text: str) -> str:
    """The page's prose: no code cells, no front matter, no links' addresses."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"\]\([^)]*\)", "]", text)   # a link's address is not read
    return re.sub(r"^---\n.*?\n---\n", "", text, flags=re.S)


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end >= 0 else len(text)]


def test_the_game_comes_before_the_machine():
    page = prose(INDEX)
    assert page.index("## First, the game") < page.index("(part1-machine)=") < page.index("## The machine at a glance")
    game = section(page, "## First, the game")
    for rule in ("Tarso", "Cefa", "capo", "vice", "<BOS>", "<SEP>", "<EOS>", "perde", "[The calling game]"):
        assert rule in game, rule
    # The intro gives the game before the parts, and says every part studies its model.
    assert INTRO.index("## The running example") < INTRO.index("## The three parts")
    assert "Parts 2 and 3 study" not in INTRO and "All three parts" in INTRO


def test_every_term_of_the_map_is_explained_before_it_is_used_or_left_out():
    page = prose(INDEX)
    opening = page[page.index("# Part 1 in outline"):page.index("## The chapters")]
    machine = section(page, "## The machine at a glance")
    read = opening + machine
    for term in EXPLAINED:
        bold = re.search(rf"\*\*[^*]*?(?<!\w){re.escape(term)}s?(?!\w)[^*]*\*\*", read, re.I)
        assert bold, f"the map's word {term!r} is never explained in bold on the page"
        plain = re.search(rf"(?<![\w*]){re.escape(term)}s?(?![\w*])", read[:bold.start()], re.I)
        assert not plain, f"{term!r} is used before the line that explains it: ...{read[max(0, plain.start() - 60):plain.end()]}"
    for term in LATER:
        assert term.lower() not in machine.lower(), f"the map uses {term!r}, which a later chapter teaches"
