"""Citations for the notebooks, written as the website writes them (author-year).

The website's citations come from sphinxcontrib-bibtex with `bibtex_reference_style:
author_year`: `{cite:p}` gives "[Holtzman et al., 2020]" and `{cite:t}` gives "Holtzman et al.
[2020]", each a link to the book's references page. A notebook gets the same text, a link to the
references notebook, and a list of the works it cites at its end (pybtex formats the entries, as
it does for the website).
"""
from __future__ import annotations

from pathlib import Path

from pybtex.database import parse_file
from pybtex.plugin import find_plugin
from pybtex.richtext import Text

from myst_markdown import Unrenderable


class Bibliography:
    def __init__(self, bibfile: Path, references_doc: str):
        self.entries = parse_file(str(bibfile)).entries
        self.references_doc = references_doc   # the docname of the page that lists every work
        self._style = find_plugin("pybtex.style.formatting", "unsrt")()
        # One backend of each kind, made once: `render_as(name)` looks its plugin up again on every
        # call, and each lookup reads every installed package's entry points (36 s of a 76-s test).
        self._text = find_plugin("pybtex.backends", "text")()
        self._markdown = find_plugin("pybtex.backends", "markdown")()
        self._authors: dict[str, str] = {}

    def authors(self, key: str) -> str:
        """One author's last name, two joined by "and", three or more as "First et al."."""
        if key not in self._authors:
            self._authors[key] = self._format_authors(key)
        return self._authors[key]

    def _format_authors(self, key: str) -> str:
        entry = self.entries[key]
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [Text.from_latex(" ".join(p.last_names)).render(self._text) for p in people]
        if not names:
            return Text.from_latex(entry.fields.get("organization", key)).render(self._text)
        if len(names) == 1:
            return names[0]
        if len(names) == 2 and names[1] != "others":
            return f"{names[0]} and {names[1]}"
        return f"{names[0]} *et al.*"

    def year(self, key: str) -> str:
        return self.entries[key].fields.get("year", "n.d.")

    def citer(self, link: str, cited: list[str]):
        """A function for `myst_markdown.Page.cite`: it writes the citation, linked to `link`,
        and records each key in `cited` (in order, once)."""
        def cite(kind: str, keys: list[str]) -> str:
            for key in keys:
                if key not in self.entries:
                    raise Unrenderable(f"the citation key {key!r} is not in the bibliography")
                if key not in cited:
                    cited.append(key)
            if kind == "t":
                return ", ".join(f"{self.authors(k)} [[{self.year(k)}]]({link})" for k in keys)
            inner = ", ".join(f"{self.authors(k)}, {self.year(k)}" for k in keys)
            return f"[[{inner}]]({link})"
        return cite

    def listing(self, keys: list[str] | None = None) -> str:
        """The works as a Markdown list, formatted by pybtex (every work when `keys` is None)."""
        chosen = [self.entries[k] for k in (keys if keys is not None else sorted(self.entries))]
        formatted = self._style.format_entries(chosen)
        return "\n".join(f"- {' '.join(e.text.render(self._markdown).split())}" for e in formatted)
