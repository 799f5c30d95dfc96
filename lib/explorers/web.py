"""The explorers' page files, shipped with the library, and the constants the page shares with Python.

`js/` beside this file holds the page's core modules (the forward pass, the read-out, the helpers
the page twins share, the renderer's kit, the page's script) and their style sheet; each chapter's
unit (lib/chapters/PART/UNIT/) holds its own page twins (`page.js`: its explorers' views and its
checks' computations) and pictures (`pictures.js`). They are package data: the kernel's widget and
the website serve the same installed files.

When the site is built (`install`), two modules are generated that gather the units by walking them
(`lib.units.units()`, no list by hand): `units.js` (every unit's page.js, each in a function of
its own, its imports of the core read from the installed core; their VIEWS and COMPUTE merged with
the core's, and each unit's exports under its part/name in UNITS; views.js and checks.js read it) and
`unit-pictures.js` (every `pictures(kit)` the same way; render.js reads it). A page thus fetches two
modules for all the chapters, not two per chapter. The tests run the same installed files in Node
(tests/explorers/test_twins.py: every twin held to the library).

What the page and the library must agree on (colours and the heatmaps' ramp, the read-out's limits,
the sentences a reader's mistake gets) is written once in Python, in its own home, and generated into
one module, `constants.js`. The kernel's widget, which loads the renderer as a single module, gets
the same constants and every unit's pictures written in front of it (`kernel_renderer`).
"""
from __future__ import annotations

import hashlib
import json
import posixpath
import re
import shutil
from pathlib import Path

from lib import units
from lib.explorers import smollm2
from lib.analysis.inventory import MAX_COUNT
from lib.analysis.patching import MIN_CHANGE, SMALL_MOVE
from lib.content.corpora.calling_game import page_constants as game
from lib.exercises import reading
from lib.messages import MESSAGES
from lib.model.readout import MAX_SEED, MIN_TEMPERATURE, TOP_P_FLOOR
from lib.pictures import colours

JS = Path(__file__).resolve().parent / "js"
CONSTANTS = "constants.js"
# Generated when the site is built: every chapter's page twins (its page.js's VIEWS and COMPUTE)
# merged with the core's, and every chapter's pictures (its pictures.js) for the renderer.
UNITS = "units.js"
UNIT_PICTURES = "unit-pictures.js"
UNIT_FILES = ("page.js", "pictures.js")      # what a chapter's unit gives the page
# The core modules page.js imports, directly or not (fetched together instead of one layer at a time);
# MODULES adds the generated ones.
CORE_MODULES = ("model.js", "readout.js", "render.js", "views.js", "twins.js", "rules.js", "share.js", "dom.js",
                "vocab.js", "python.js", "game.js", "real.js")
_IMPORT_CONSTANTS = re.compile(r'^import \{[^}]*\} from "(?:\./|(?:\.\./)+explorers/js/)constants\.js";\n', re.M)
# A unit's import of the core: `import { a, b as c } from "../../../explorers/js/x.js";` (over several
# lines or not) or `import * as m from "...";`.
_UNIT_IMPORT = re.compile(r'^import\s+(?:\{(?P<names>[^}]*)\}|\*\s+as\s+(?P<ns>\w+))\s+from\s+"(?P<spec>[^"]+)";[ \t]*\n', re.M)
_IMPORT_UNIT_PICTURES = re.compile(r'^import \{ UNIT_PICTURES \} from "\./unit-pictures\.js";\n', re.M)
# What a unit's file exports: `export const NAME`, `export function NAME` (or function*, async function) ...
_UNIT_EXPORT = re.compile(r"^export\s+(?:const|let|class|(?:async\s+)?function\s*\*?)\s*(\w+)", re.M)
_UNIT_EXPORT_KEYWORD = re.compile(r"^export\s+(?=(?:const|let|class|function|async\s+function)\b)", re.M)
# Every module a file names: `from "..."`, `import "..."` and `import("...")`.
_IMPORTED = re.compile(r'(\bfrom\s*|\bimport\s*\(?\s*)"(\.{1,2}/[^"]+)"')
# Beyond this a JavaScript Number is no longer exact: such a whole number is written as a BigInt.
_SAFE_INTEGER = 2**53 - 1


def constants() -> dict:
    """Every value the page shares with the library, by the name the page's modules import."""
    return {"PALETTE": colours.PALETTE, "GROUP_COLOURS": list(colours.GROUP_COLOURS),
            "BLUE_LOW": list(colours.BLUE_LOW), "BLUE_HIGH": list(colours.BLUE_HIGH),
            "BLUE_SHADES": colours.BLUE_SHADES, "BLUE_INKS": colours.blue_inks(), "MASKED": list(colours.MASKED),
            "MIN_TEMPERATURE": MIN_TEMPERATURE, "MAX_SEED": MAX_SEED, "TOP_P_FLOOR": TOP_P_FLOOR,
            "MAX_COUNT": MAX_COUNT, "PATCH_MIN_CHANGE": MIN_CHANGE, "PATCH_SMALL_MOVE": SMALL_MOVE, "MESSAGES": MESSAGES,
            "READING": {**reading.READING, "patterns": reading.PATTERNS},
            "GAME": game()}


def _literal(value) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _SAFE_INTEGER:
        return f"{value}n"
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def constants_module() -> str:
    """constants.js: one `export const` per shared value."""
    lines = ["// Generated from the course's Python library (lib/explorers/web.py) when the site is built.",
             "// Edit the values where they live in Python, never here."]
    lines += [f"export const {name} = {_literal(value)};" for name, value in constants().items()]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- the chapters' units

def unit_files() -> list[tuple[str, Path]]:
    """Every unit's page files, as (the unit's part/name/file, its source)."""
    return [(f"{u.part}/{u.name}/{name}", u.folder / name)
            for u in units.units() for name in UNIT_FILES if u.has(name)]


def sources() -> list[tuple[str, Path]]:
    """Every source file of the page's modules: the core's (SmolLM2's folder included), then the units'."""
    core = [(p.name, p) for p in sorted(JS.glob("*.js"))]
    real = [(f"smollm2/{p.name}", p) for p in sorted((JS / "smollm2").glob("*.*")) if p.suffix in (".js", ".wat")]
    return core + real + unit_files()


def _core_name(source: Path, spec: str) -> str:
    """The core module a unit's import names (`../../../explorers/js/readout.js` -> readout.js): a
    unit imports the core alone, as the repository lays it out, so the file also resolves where it is."""
    path = (source.parent / spec).resolve()
    if path.parent != JS:
        raise RuntimeError(f"{source}: imports {spec}; a chapter's file imports the core (lib/explorers/js) alone")
    if path.name != CONSTANTS and not path.is_file():
        raise RuntimeError(f"{source}: imports {spec}, which does not exist")
    return path.name


def _namespace(core: str) -> str:
    return "__core_" + re.sub(r"\W", "_", core.removesuffix(".js"))


def _unit_body(source: Path, exported: tuple[str, ...]) -> tuple[str, set[str]]:
    """A unit's file as the body of a function that returns what it exports (`exported`, undefined where
    the file lacks it, and every other name it exports): its imports become constants read from the
    core's namespaces, its `export` keywords go. Returns the body and the core modules it reads."""
    text, cores, reads = source.read_text(), set(), []

    def take(m):
        core = _core_name(source, m["spec"])
        cores.add(core)
        if m["ns"]:
            reads.append(f"const {m['ns']} = {_namespace(core)};")
        else:
            fields = []
            for item in (i.strip() for i in m["names"].split(",")):
                if item:
                    name, _, alias = (w.strip() for w in item.partition(" as "))
                    fields.append(f"{name}: {alias}" if alias else name)
            reads.append(f"const {{ {', '.join(fields)} }} = {_namespace(core)};")
        return ""

    body = _UNIT_IMPORT.sub(take, text)
    others = [name for name in _UNIT_EXPORT.findall(body) if name not in exported]
    body = _UNIT_EXPORT_KEYWORD.sub("", body)
    if re.search(r"^\s*(import|export)\b|\bimport\s*\(", body, re.M):
        raise RuntimeError(f"{source}: a chapter's file imports the core with `import {{ ... }} from \"...\";` "
                           "at its top, and exports with `export const` or `export function`, nothing else")
    returned = ", ".join([f'{name}: typeof {name} === "undefined" ? undefined : {name}' for name in exported] + others)
    return "\n".join(reads) + "\n" + body + f"\nreturn {{ {returned} }};", cores


def _bundle(kind: str, exported: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(the import lines, one `["part/name", (() => {...})()]` entry per unit that has the file `kind`)."""
    entries, cores = [], set()
    for u in units.units():
        if u.has(kind):
            body, used = _unit_body(u.folder / kind, exported)
            cores |= used
            entries.append(f'// {u.part}/{u.name}/{kind}\n["{u.part}/{u.name}", (() => {{\n{body}\n}})()]')
    imports = [f'import * as {_namespace(c)} from "./{c}";' for c in sorted(cores)]
    return imports, entries


def units_module() -> str:
    """units.js: the core's check computations (twins.js) and every unit's VIEWS and COMPUTE, merged
    into one table each (a name defined twice is an error when the page loads it), and `UNITS`: each
    unit's exports by its part/name (what a unit's tests and the benchmark call beyond its views)."""
    imports, entries = _bundle("page.js", ("VIEWS", "COMPUTE"))
    lines = ["// Generated from lib/chapters when the site is built (lib/explorers/web.py): every chapter's page",
             "// twins, from its unit's page.js. Edit them there, never here.",
             'import { COMPUTE as __CORE_COMPUTE } from "./twins.js";', *imports,
             "", "function __merged(kind, tables) {",
             "  const out = {}, home = {};",
             "  for (const [where, table] of tables) {",
             "    for (const name of Object.keys(table || {})) {",
             "      if (name in out) throw new Error(`${kind} ${name} is in both ${home[name]} and ${where}`);",
             "      out[name] = table[name];",
             "      home[name] = where;",
             "    }",
             "  }",
             "  return out;",
             "}", "",
             "const __UNITS = [", ",\n".join(entries), "];", "",
             'const __VIEWS = __merged("the view", __UNITS.map(([where, u]) => [where, u.VIEWS]));',
             'const __COMPUTE = __merged("the computation", [["twins.js", __CORE_COMPUTE], ...__UNITS.map(([where, u]) => [where, u.COMPUTE])]);',
             "const __BY_UNIT = Object.fromEntries(__UNITS);",
             "export { __VIEWS as VIEWS, __COMPUTE as COMPUTE, __BY_UNIT as UNITS };"]
    return "\n".join(lines) + "\n"


def _picture_units():
    return [u for u in units.units() if u.has("pictures.js")]


def unit_pictures_module() -> str:
    """unit-pictures.js: every unit's pictures(kit), for the renderer."""
    imports, entries = _bundle("pictures.js", ("pictures",))
    lines = ["// Generated from lib/chapters when the site is built (lib/explorers/web.py): every chapter's",
             "// pictures, from its unit's pictures.js. Edit them there, never here.", *imports,
             "export const UNIT_PICTURES = [", ",\n".join(entries), "].map(([, u]) => u.pictures);"]
    return "\n".join(lines) + "\n"


def kernel_renderer() -> str:
    """The renderer as one module for the kernel's widget: the constants, every unit's pictures (each
    file in a function of its own, without its imports and exports), then render.js, without its imports."""
    body, n = _IMPORT_CONSTANTS.subn("", (JS / "render.js").read_text())
    if n != 1:
        raise RuntimeError("render.js must import its constants in one line from ./constants.js")
    body, n = _IMPORT_UNIT_PICTURES.subn("", body)
    if n != 1:
        raise RuntimeError(f"render.js must import UNIT_PICTURES in one line from ./{UNIT_PICTURES}")
    pictures = []
    for u in _picture_units():
        text, _ = _IMPORT_CONSTANTS.subn("", (u.folder / "pictures.js").read_text())
        if re.search(r"^import\b", text, re.M):
            raise RuntimeError(f"{u.folder / 'pictures.js'} may import the constants only (the kernel's renderer is one module)")
        text, n = re.subn(r"^export function pictures\(", "function pictures(", text, flags=re.M)
        if n != 1 or re.search(r"^export\b", text, re.M):
            raise RuntimeError(f"{u.folder / 'pictures.js'} must export one thing, `function pictures(k)`")
        pictures.append(f"// {u.part}/{u.name}/pictures.js\n(() => {{\n{text}\nreturn pictures;\n}})()")
    gathered = "const UNIT_PICTURES = [\n" + ",\n".join(pictures) + "];\n"
    return constants_module().replace("export const", "const") + gathered + body


def _imports(text: str) -> list[str]:
    return [m.group(2) for m in _IMPORTED.finditer(text)]


def _check_acyclic(folder: Path) -> None:
    """The installed modules' imports form no cycle (a unit importing a core module that reads the
    assembled tables would)."""
    graph = {}
    for path in folder.rglob("*.js"):
        name = path.relative_to(folder).as_posix()
        graph[name] = [posixpath.normpath(posixpath.join(posixpath.dirname(name), spec)) for spec in _imports(path.read_text())]
    state = {}

    def visit(name, trail):
        if state.get(name) == "done":
            return
        if state.get(name) == "open":
            raise RuntimeError("the page's modules import in a cycle: " + " -> ".join(trail[trail.index(name):] + [name]))
        state[name] = "open"
        for other in graph.get(name, ()):
            visit(other, trail + [name])
        state[name] = "done"

    for name in sorted(graph):
        visit(name, [])


def install(folder: Path) -> list[Path]:
    """Write the page's modules, their style sheet and the generated modules into `folder` (the site's
    _static/explorers): the core's as they are, the constants, and the two modules that gather the
    units' page.js and pictures.js."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sorted(JS.iterdir()):
        if source.suffix in (".js", ".css", ".json"):
            shutil.copyfile(source, folder / source.name)
            written.append(folder / source.name)
    stale = folder / "units"            # where an earlier build copied the units' files
    if stale.is_dir():
        shutil.rmtree(stale)
    for name, text in ((CONSTANTS, constants_module()), (UNITS, units_module()), (UNIT_PICTURES, unit_pictures_module())):
        (folder / name).write_text(text)
        written.append(folder / name)
    written += smollm2.install_code(folder)     # the real model's modules, run in a Web Worker once a reader loads it
    _check_acyclic(folder)
    return written


def modules() -> tuple[str, ...]:
    """Every module page.js imports, directly or not, as the site holds them (for the page's preload tags)."""
    return CORE_MODULES + (CONSTANTS, UNITS, UNIT_PICTURES)


MODULES = modules()


def digest() -> str:
    """A short digest of the page's modules (the core's, the units') and the generated ones: page.js's
    address changes when they do."""
    h = hashlib.sha256()
    for name, path in sources():
        h.update(name.encode() + b"\0" + path.read_bytes())
    for text in (constants_module(), units_module(), unit_pictures_module()):
        h.update(text.encode())
    return h.hexdigest()[:8]
