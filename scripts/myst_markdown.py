"""The chapters' MyST Markdown turned into the plain Markdown that a notebook renders.

JupyterLab, Binder, a hub, Colab and VS Code render CommonMark with math and a little HTML; none
of them knows MyST's roles and directives, and none can read a glued value. This module rewrites
one Markdown cell of a chapter into that plain Markdown: glued values written in (formatted as
the website formats them), citations as author-year text, links to other pages pointing at their
notebooks, notes and admonitions as quoted blocks with a bold title, glossaries as lists.

Exercises and solutions are not written out here: they come back as events (`Exercise`,
`SolutionStart`, `SolutionEnd`) for the notebook builder, which decides how a solution is shown
(folded, or left out). Anything this module does not know raises `Unrenderable`, naming the
construct and the page, so that a new directive cannot slip raw MyST into a learner's notebook.
"""
from __future__ import annotations

import html
import posixpath
import re
from dataclasses import dataclass, field
from typing import Callable

import yaml
from markdown_it.renderer import RendererHTML
from myst_nb.core.variables import format_plain_text
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser

from chapter_cache import MYST_EXTENSIONS  # the MyST extensions of _config.yml

_PARSER = create_md_parser(MdParserConfig(enable_extensions=MYST_EXTENSIONS), RendererHTML)

# What a learner must never see in a notebook's prose: the test of every generated notebook.
RAW_MYST = re.compile(r"\{glue|\{cite|:::\{|```\{|\{doc\}|\{ref\}|\{numref\}|\{term\}|^\s*\([\w.:-]+\)=\s*$")
# A section target, `(label)=` on its own line above a heading: the website makes it an anchor;
# a notebook has nothing to show for it.
SECTION_TARGET_LINE = re.compile(r"^\([\w.:-]+\)=[ \t]*\n?", re.M)

ADMONITION_TITLES = {"note": "Note", "tip": "Tip", "hint": "Hint", "important": "Important",
                     "warning": "Warning", "caution": "Caution", "attention": "Attention",
                     "danger": "Danger", "error": "Error", "seealso": "See also"}


class Unrenderable(ValueError):
    """A construct of a chapter that has no notebook rendering (yet)."""


@dataclass(frozen=True)
class Exercise:
    label: str
    kind: str          # the directive's :class: (write, predict, investigate), or ""
    text: str          # the task, already plain Markdown


@dataclass(frozen=True)
class SolutionStart:
    label: str         # the exercise it solves


@dataclass(frozen=True)
class SolutionEnd:
    pass


@dataclass
class Page:
    """What the rewriting needs to know about the page and the book around it."""
    docname: str                                       # e.g. chapters/part3/search-by-hand
    glue: dict = field(default_factory=dict)           # key -> the glued output's mime bundle
    titles: dict = field(default_factory=dict)         # docname -> title, every page of the book
    labels: dict = field(default_factory=dict)         # label -> (docname, text) for {ref} and {numref}
    cite: Callable[[str, list[str]], str] | None = None  # (role, keys) -> text; records what was cited
    bibliography: Callable[[], str] | None = None      # the whole reference list, as Markdown
    tags: frozenset = frozenset()                      # the build's tags an {only} reads (class_site)

    def link(self, target_doc: str, anchor: str = "") -> str:
        """The relative path from this page's notebook to another page's notebook."""
        here = posixpath.dirname(self.docname)
        return posixpath.relpath(target_doc, here or ".") + ".ipynb" + anchor

    def resolve(self, target: str) -> str:
        """A {doc} target or a relative .md link, as a docname (the book's root is '/')."""
        target = target.removesuffix(".md")
        if target.startswith("/"):
            return posixpath.normpath(target.lstrip("/"))
        return posixpath.normpath(posixpath.join(posixpath.dirname(self.docname), target))


# ----------------------------------------------------------------------------- inline: roles, links
ROLE_OR_CODE = re.compile(r"\{(?P<role>[A-Za-z][\w:+-]*)\}(?P<tick>`+)(?P<text>.+?)(?P=tick)"
                          r"|(?P<code>(?P<ctick>`+).+?(?P=ctick))", re.S)
MD_LINK = re.compile(r"\]\((?P<target>(?!https?:|mailto:|#)[^)\s]+?)\.md(?P<anchor>#[^)\s]*)?\)")
EXPLICIT_TITLE = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.S)


def glued_text(page: Page, key: str, fmt: str) -> str:
    if key not in page.glue:
        raise Unrenderable(f"{page.docname}: no glued value named {key!r} (glue it in a code cell above)")
    data = page.glue[key]
    if "text/plain" not in data:
        raise Unrenderable(f"{page.docname}: the glued value {key!r} has no text form")
    return as_markdown_text(format_plain_text(data["text/plain"], fmt))


MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]])")


def as_markdown_text(text: str) -> str:
    """Plain text that Markdown shows as it is: a glued "<SEP>" is a token, not an HTML tag."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def role(page: Page, name: str, text: str) -> str:
    """One role, as the website shows it."""
    if name in ("glue", "glue:", "glue:any", "glue:text"):
        # myst-nb splits "key:format" at the last colon; without one, the text role formats with "s".
        key, colon, fmt = text.rpartition(":")
        if not colon:
            key, fmt = text, ("s" if name == "glue:text" else "")
        return glued_text(page, key, fmt)
    if name == "glue:md":
        data = page.glue.get(text, {})
        if "text/markdown" not in data:
            raise Unrenderable(f"{page.docname}: no glued Markdown named {text!r}")
        return convert_inline(page, data["text/markdown"])
    if name.startswith("cite"):
        if page.cite is None:
            raise Unrenderable(f"{page.docname}: a citation, but no bibliography was given")
        return page.cite(name.partition(":")[2] or "p", [k.strip() for k in text.split(",")])
    if name == "doc":
        m = EXPLICIT_TITLE.match(text)
        title, target = (m["title"], m["target"]) if m else (None, text)
        doc = page.resolve(target)
        if doc not in page.titles:
            raise Unrenderable(f"{page.docname}: {{doc}} points to {target!r}, which is not a page of the book")
        return f"[{title or page.titles[doc]}]({page.link(doc)})"
    if name in ("ref", "numref"):
        m = EXPLICIT_TITLE.match(text)
        title, label = (m["title"], m["target"]) if m else (None, text)
        if label not in page.labels:
            raise Unrenderable(f"{page.docname}: {{{name}}} points to the unknown label {label!r}")
        doc, shown = page.labels[label]
        return f"[{title or shown}]({page.link(doc)})"
    if name == "math":
        return f"${text}$"
    if name in ("term", "abbr"):
        return EXPLICIT_TITLE.match(text)["title"] if EXPLICIT_TITLE.match(text) else text
    if name in ("sub", "sup"):
        return f"<{name}>{text}</{name}>"
    raise Unrenderable(f"{page.docname}: the role {{{name}}} has no notebook rendering")


def convert_inline(page: Page, text: str) -> str:
    """Roles and links to other pages in a run of Markdown; code spans are left as they are."""
    def replace(m: re.Match) -> str:
        return m["code"] if m["code"] else role(page, m["role"], m["text"])

    text = SECTION_TARGET_LINE.sub("", ROLE_OR_CODE.sub(replace, text))

    def relink(m: re.Match) -> str:
        doc = page.resolve(m["target"])
        return f"]({page.link(doc, m['anchor'] or '')})" if doc in page.titles else m.group(0)

    return MD_LINK.sub(relink, text)


# ----------------------------------------------------------------------------- blocks: directives
DIRECTIVE = re.compile(r"^\{(?P<name>[\w:-]+)\}\s*(?P<argument>.*)$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")


def split_directive(content: str) -> tuple[dict, str]:
    """A directive's options (`:key: value` lines, or a `---` YAML block) and its body."""
    lines = content.split("\n")
    options = {}
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        options = yaml.safe_load("\n".join(lines[1:end])) or {}
        return options, "\n".join(lines[end + 1:]).strip("\n")
    i = 0
    while i < len(lines) and OPTION.match(lines[i]):
        m = OPTION.match(lines[i])
        options[m["key"]] = m["value"].strip()
        i += 1
    return options, "\n".join(lines[i:]).strip("\n")


def quoted(title: str, body: str) -> str:
    """A note or admonition: a quoted block with a bold title, as every notebook viewer renders it."""
    lines = [f"> **{title}**", ">"] + [f"> {line}" if line else ">" for line in body.split("\n")]
    return "\n".join(lines)


def glossary(page: Page, body: str) -> str:
    """Terms at the margin, definitions indented below them: a list of bold terms."""
    items, term, definition = [], None, []
    for line in body.split("\n") + [""]:
        if line and not line.startswith((" ", "\t")):
            if term:
                items.append((term, definition))
            term, definition = line.strip(), []
        elif line.strip():
            definition.append(line.strip())
    if term:
        items.append((term, definition))
    return "\n".join(f"- **{convert_inline(page, t)}**: {convert_inline(page, ' '.join(d))}" for t, d in items)


def directive(page: Page, name: str, argument: str, content: str) -> list:
    """One directive as Markdown text, or as an event for the notebook builder."""
    options, body = split_directive(content)
    if name == "exercise":
        if "label" not in options:
            raise Unrenderable(f"{page.docname}: an exercise without a :label: (grading needs one)")
        return [Exercise(options["label"], str(options.get("class", "")).strip(), convert(page, body, text_only=True))]
    if name == "solution-start":
        return [SolutionStart(argument.strip())]
    if name == "solution-end":
        return [SolutionEnd()]
    if name in ADMONITION_TITLES:
        title = ADMONITION_TITLES[name] + (f": {convert_inline(page, argument)}" if argument else "")
        return [quoted(title, convert(page, body, text_only=True))]
    if name == "admonition":
        return [quoted(convert_inline(page, argument) or "Note", convert(page, body, text_only=True))]
    if name == "glossary":
        return [glossary(page, body)]
    if name == "bibliography":
        if page.bibliography is None:
            raise Unrenderable(f"{page.docname}: a bibliography, but none was given")
        return [page.bibliography()]
    if name == "math":
        return [f"$$\n{body}\n$$"]
    if name in ("code-block", "code", "sourcecode"):
        return [f"```{argument}\n{body}\n```"]
    if name == "only":        # the text of one site (the class site, or the default one), as Sphinx decides it
        from sphinx.util.tags import Tags  # deferred: Sphinx's own reading of the condition, for this directive alone

        return convert(page, content) if Tags(list(page.tags)).eval_condition(argument) else []
    raise Unrenderable(f"{page.docname}: the directive {{{name}}} has no notebook rendering")


def convert(page: Page, text: str, text_only: bool = False) -> list:
    """A Markdown cell of a chapter as a list of plain Markdown strings and events.

    Directives are recognised at the top level of the cell (where the chapters write them);
    one nested in a list or a quote would stay raw, and `check_rendered` catches that.
    With `text_only`, events are not allowed (the body of a note or of an exercise).
    """
    lines = text.split("\n")
    out, done = [], 0

    def flush(upto: int) -> None:
        chunk = "\n".join(lines[done:upto]).strip("\n")
        if chunk.strip():
            out.append(convert_inline(page, chunk))

    for token in _PARSER.parse(text):
        if token.level != 0 or token.map is None or token.type not in ("fence", "colon_fence"):
            continue
        m = DIRECTIVE.match(token.info.strip())
        if not m:
            continue  # a plain code block: left as it is
        start, end = token.map
        flush(start)
        out.extend(directive(page, m["name"], m["argument"], token.content.rstrip("\n")))
        done = end
    flush(len(lines))
    if text_only:
        events = [e for e in out if not isinstance(e, str)]
        if events:
            raise Unrenderable(f"{page.docname}: {type(events[0]).__name__} inside another directive")
        return "\n\n".join(out)
    return out


def check_rendered(docname: str, markdown: str) -> None:
    """Refuse Markdown that still holds MyST syntax a notebook would show raw."""
    for line in markdown.split("\n"):
        m = RAW_MYST.search(line)
        if m:
            raise Unrenderable(f"{docname}: raw MyST left in a notebook cell: {line.strip()[:100]!r}")
