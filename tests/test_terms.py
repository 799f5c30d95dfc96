"""Every term of the glossaries is defined where a reader first meets it.

The terms are the entries of the three parts' glossaries (chapters/partN/glossary.md). The pages are read
in the book's order (_toc.yml: the introduction, then Part 1, 2 and 3), prose only: code, headings,
directive options and comments left out, and the previews that name what is to come (the introduction's
"The three parts", a part's list of its chapters) left out too, since they promise that each term "is
explained where it first comes up"; a list of chapters, each item a link to its page, is such a preview;
the words of a link to another page are its title, not a use). A term is defined where it is marked: in
emphasis (`*prompt*`, `**prompt**`, as the course writes a term it defines; an emphasis that holds the
term, "**RMSNorm instead of LayerNorm**", counts) or as a link to its glossary entry (`{term}`).
The test finds each term's first use and fails when it comes before the term's first definition (in an
earlier page, or earlier in the same paragraph's page but in another paragraph).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GLOSSARIES = [ROOT / "chapters" / part / "glossary.md" for part in ("part1", "part2", "part3")]
# Sections that preview what later pages explain (their words are names of what is to come).
PREVIEWS = ("The three parts", "The chapters")
# Entries whose heading is a word that the pages also use in its everyday sense before the term comes up
# ("a prior question", "pushes the answer up"): the everyday sense is not the term. Each is defined where
# its chapter introduces it (the emphasis the test looks for there is checked all the same).
EVERYDAY = {"Prior", "Push", "Sampling", "Harness"}


# Entries that name several terms in everyday words, searched by the forms given here.
FORMS = {"Query, key, value": ["query", "queries"],
         "Rank and singular values": ["singular value"], "Peer and subordinate epithets": ["peer epithet",
         "subordinate epithet"], "Bits and nats": ["nats"], "Aleatoric and epistemic uncertainty": ["aleatoric",
         "epistemic"]}


def glossary_terms() -> list[tuple[str, list[str]]]:
    """Each entry's heading and the forms searched for: the heading, an abbreviation in brackets beside it
    ("Expected calibration error (ECE)"), or the forms FORMS gives."""
    out = []
    for path in GLOSSARIES:
        for block in re.findall(r"```\{glossary\}\n(.*?)\n```", path.read_text(), re.S):
            for heading in (line.strip() for line in block.split("\n") if line and not line[0].isspace()):
                short = re.fullmatch(r"(.*?) \((\w[\w-]*)\)", heading)
                out.append((heading, FORMS.get(heading) or ([short[1], short[2]] if short else [heading])))
    return out


def reading_order() -> list[Path]:
    toc = (ROOT / "_toc.yml").read_text()
    names = [re.search(r"root:\s*(\S+)", toc)[1]] + re.findall(r"file:\s*(\S+)", toc)
    return [ROOT / f"{n}.md" for n in names if (ROOT / f"{n}.md").exists() and not n.endswith("glossary")]


def paragraphs(path: Path) -> list[str]:
    """The page's prose, paragraph by paragraph, in order (what the test reads)."""
    text = path.read_text()
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    text = re.sub(r"^(`{3,}|~{3,})\{?[\w-]*\}?.*?^\1\s*$", "", text, flags=re.S | re.M)     # code and code cells
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"^:[\w-]+:.*$", "", text, flags=re.M)                             # directive options
    text = re.sub(r"^:{3,}.*$", "", text, flags=re.M)                                # directive fences
    text = re.sub(r"^\([\w-]+\)=$", "", text, flags=re.M)                           # targets, (part1-machine)=
    out, skip = [], False
    for block in re.split(r"\n\s*\n", text):
        heading = re.match(r"#+ (.*)", block.strip())
        if heading:
            skip = heading[1].strip() in PREVIEWS
            block = block.strip().split("\n", 1)[1] if "\n" in block.strip() else ""
        if skip or not block.strip() or all(PREVIEW_ITEM.match(line) or line.startswith(" ")
                                            for line in block.strip().split("\n")):
            continue
        # A link's words name another page (its title), and a citation or a reference names its target.
        out.append(re.sub(r"\[[^\]]*\]\([^)]*\)|\{(?:doc|ref|cite:\w+|numref)\}`[^`]*`", "", block))
    return out


# An item of a list of chapters: a link to the chapter's page first.
PREVIEW_ITEM = re.compile(r"\s*(?:\d+\.|[-*]) \[[^\]]*\]\([^)]*\.md\)")


def _pattern(form: str) -> re.Pattern:
    return re.compile(r"(?<![\w-])" + re.escape(form) + r"(?:s|es)?(?![\w-])", re.I)


def _defined(form: str, paragraph: str) -> bool:
    """Whether the paragraph marks `form` as a definition: in emphasis or as a glossary link."""
    word = r"(?<![\w-])" + re.escape(form) + r"(?:s|es)?(?![\w-])"
    return bool(re.search(rf"(\*\*?)[^*\n]*?{word}[^*\n]*?\1", paragraph, re.I)
                or re.search(rf"\{{term\}}`[^`]*{word}[^`]*`", paragraph, re.I))


def first_uses() -> dict[str, tuple]:
    """For each term: (where it is first used, where first defined), each (page, paragraph index, excerpt) or None."""
    pages = [(p.relative_to(ROOT).as_posix(), paragraphs(p)) for p in reading_order()]
    out = {}
    for heading, forms in glossary_terms():
        used = defined = None
        for page, paras in pages:
            for i, para in enumerate(paras):
                for form in forms:
                    m = _pattern(form).search(para)
                    if m and used is None:
                        used = (page, i, " ".join(para[max(0, m.start() - 60):m.end() + 30].split()))
                    if defined is None and _defined(form, para):
                        defined = (page, i, "")
                if used and defined:
                    break
            if used and defined:
                break
        out[heading] = (used, defined)
    return out


def test_the_glossaries_hold_the_terms_the_course_leans_on():
    headings = {h for h, _ in glossary_terms()}
    assert {"Prompt", "Transformer", "Seed", "Claim", "Token", "Logit"} <= headings, headings


def test_every_term_is_defined_where_it_is_first_used():
    order = {p.relative_to(ROOT).as_posix(): k for k, p in enumerate(reading_order())}
    late = []
    for term, (used, defined) in first_uses().items():
        if used is None or term.split(":")[0] in EVERYDAY:
            continue
        if defined is None or (order[defined[0]], defined[1]) > (order[used[0]], used[1]):
            late.append(f"{term}: first used in {used[0]} ({used[2]!r}), "
                        + (f"defined later in {defined[0]}" if defined else "never marked as defined"))
    assert not late, "\n".join(late)


@pytest.mark.parametrize("term", sorted(EVERYDAY))
def test_a_term_with_an_everyday_sense_is_still_defined(term):
    used, defined = first_uses()[term]
    assert defined is not None, f"{term} is never marked as defined in the pages"


def test_head_names_are_explained_where_first_shown():
    """The first page that shows a head by its name (L0H3, in its prose, its code or its explorer's picture: the
    machine map draws every head's box) says in its prose what the name means."""
    shows = re.compile(r"\bL\d+H\d+\b|machine_explorer\(")
    first = next(p for p in reading_order() if shows.search(p.read_text()))
    prose = "\n".join(paragraphs(first))
    assert re.search(r"L(\d+)H(\d+) is layer \1, head \2", prose), f"{first.name} shows head names without explaining them"
