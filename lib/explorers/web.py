"""The explorers' page files, shipped with the library, and the constants the page shares with Python.

`js/` beside this file holds the page's modules (the forward pass, the read-out, each view's twin,
the renderer, the page's script) and their style sheet. They are package data: the kernel's widget
and the website serve the same installed files.

What the page and the library must agree on (colours and the heatmaps' ramp, the read-out's limits,
the sentences a reader's mistake gets) is written once in Python, in its own home, and generated into
one module, `constants.js`, when the site is built (`install`). The kernel's widget, which loads the
renderer as a single module, gets the same constants written in front of it (`kernel_renderer`).
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

JS = Path(__file__).resolve().parent / "js"
CONSTANTS = "constants.js"
# The modules page.js imports, directly or not (fetched together instead of one layer at a time).
MODULES = ("model.js", "readout.js", "render.js", "views.js", "views_hand.js", "share.js", "dom.js", "vocab.js",
           "python.js", "machine.js", "machine-render.js", "game.js", "real.js", CONSTANTS)
_IMPORT_CONSTANTS = re.compile(r'^import \{[^}]*\} from "\./constants\.js";\n', re.M)
# Beyond this a JavaScript Number is no longer exact: such a whole number is written as a BigInt.
_SAFE_INTEGER = 2**53 - 1


def constants() -> dict:
    """Every value the page shares with the library, by the name the page's modules import."""
    from lib.analysis.inventory import MAX_COUNT
    from lib.analysis.patching import MIN_CHANGE
    from lib.content.corpora.calling_game import page_constants as game
    from lib.messages import MESSAGES
    from lib.model.readout import MAX_SEED, MIN_TEMPERATURE, TOP_P_FLOOR
    from lib.pictures import colours

    return {"PALETTE": colours.PALETTE, "GROUP_COLOURS": list(colours.GROUP_COLOURS),
            "BLUE_LOW": list(colours.BLUE_LOW), "BLUE_HIGH": list(colours.BLUE_HIGH),
            "BLUE_SHADES": colours.BLUE_SHADES, "BLUE_INKS": colours.blue_inks(), "MASKED": list(colours.MASKED),
            "MIN_TEMPERATURE": MIN_TEMPERATURE, "MAX_SEED": MAX_SEED, "TOP_P_FLOOR": TOP_P_FLOOR,
            "MAX_COUNT": MAX_COUNT, "PATCH_MIN_CHANGE": MIN_CHANGE, "MESSAGES": MESSAGES,
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


# Pictures render.js adds to its own, each from a file that imports only the constants: in the
# kernel's single module they are written in front of it, without their imports and exports.
PICTURE_FILES = ("machine-render.js",)
_IMPORT_PICTURES = re.compile(r'^import \{[^}]*\} from "\./(?:' + "|".join(re.escape(f) for f in PICTURE_FILES)
                              + r')";\n', re.M)


def kernel_renderer() -> str:
    """The renderer as one module for the kernel's widget: the constants, the picture files render.js
    imports, then render.js, without their imports."""
    body, n = _IMPORT_CONSTANTS.subn("", (JS / "render.js").read_text())
    if n != 1:
        raise RuntimeError("render.js must import its constants in one line from ./constants.js")
    body, n = _IMPORT_PICTURES.subn("", body)
    if n != len(PICTURE_FILES):
        raise RuntimeError(f"render.js must import each of {', '.join(PICTURE_FILES)} in one line")
    extra = ""
    for name in PICTURE_FILES:
        text, n = _IMPORT_CONSTANTS.subn("", (JS / name).read_text())
        extra += re.sub(r"^export (function|const) ", r"\1 ", text, flags=re.M)
    return constants_module().replace("export const", "const") + extra + body


def install(folder: Path) -> list[Path]:
    """Write the page's modules, their style sheet and the generated constants into `folder`
    (the site's _static/explorers)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sorted(JS.iterdir()):
        if source.suffix in (".js", ".css", ".json"):
            shutil.copyfile(source, folder / source.name)
            written.append(folder / source.name)
    (folder / CONSTANTS).write_text(constants_module())
    return written + [folder / CONSTANTS]


def digest() -> str:
    """A short digest of the page's modules and constants: page.js's address changes when they do."""
    h = hashlib.sha256()
    for path in sorted(JS.glob("*.js")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    h.update(constants_module().encode())
    return h.hexdigest()[:8]
