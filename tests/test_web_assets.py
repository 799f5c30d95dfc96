"""The explorers' page files: shipped with the library, and sharing its constants by generation, not by copy."""
import json
import re
import shutil
import subprocess

import pytest

from lib.explorers import web
from lib.messages import MESSAGES, say
from lib.pictures import colours

NODE = shutil.which("node")


def test_every_template_has_plain_named_fields_only():
    """The page fills `{name}` fields with a regular expression: no other braces, no format specs."""
    for name, text in MESSAGES.items():
        assert re.sub(r"\{\w+\}", "", text).count("{") == 0 and "}" not in re.sub(r"\{\w+\}", "", text), name
    assert say("top_k", got="0") == "top-k must be a whole number of at least 1, got 0"


def test_no_shared_value_is_typed_in_the_page():
    """Colours and limits reach the page only through the generated module."""
    shared = {*colours.PALETTE.values(), *colours.GROUP_COLOURS}
    for path in web.JS.glob("*.js"):
        text = path.read_text().lower()
        typed = [c for c in shared if c.lower() in text]
        assert not typed, f"{path.name} types {typed}: import them from constants.js"
        for sentence in ("must be a whole number", "must lie in (0, 1]", "unknown token"):
            assert sentence not in text, f"{path.name} types a message ({sentence!r}): use say() and lib/messages.py"


@pytest.mark.skipif(NODE is None, reason="Node.js draws the book's pictures; install it (README)")
def test_the_generated_module_holds_the_librarys_values(tmp_path):
    web.install(tmp_path)
    script = (f"import('{(tmp_path / web.CONSTANTS).as_uri()}').then((m) => console.log(JSON.stringify("
              "Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v === 'bigint' ? String(v) : v])))))")
    out = json.loads(subprocess.run([NODE, "-e", script], capture_output=True, text=True, check=True).stdout)
    expected = web.constants()
    assert out.keys() == expected.keys()
    for name, value in expected.items():
        assert out[name] == (str(value) if name == "MAX_SEED" else json.loads(json.dumps(value))), name
    # The kernel's single-module renderer carries the same constants and no import left to resolve.
    kernel = web.kernel_renderer()
    assert "constants.js" not in kernel and "const GROUP_COLOURS = " in kernel


def test_an_installed_library_carries_its_page_files(tmp_path):
    """Installed without -e (a hub's image, a wheel), the library still has the files its widget loads."""
    import os
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    # A copy of the sources, so the build's own folders (build/, *.egg-info) stay out of the checkout.
    source = tmp_path / "src"
    shutil.copytree(root / "lib", source / "lib", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(root / name, source / name)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "--target", str(target), str(source)], check=True, timeout=300)
    env = dict(os.environ, PYTHONPATH=str(target))
    out = subprocess.run([sys.executable, "-c", "from lib.explorers import web; print(web.JS); "
                          "print(sorted(p.name for p in web.JS.iterdir())); print(len(web.kernel_renderer()))"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0].startswith(str(target)), out[0]
    assert {"render.js", "page.js", "model.js", "views.js", "explorers.css", "package.json"} <= set(eval(out[1]))
    assert int(out[2]) > 10_000


@pytest.mark.skipif(NODE is None, reason="Node.js draws the book's pictures; install it (README)")
def test_every_registered_view_has_its_page_twin_and_its_picture(tmp_path):
    """The registry's views, the page's twins (views.js) and the renderer's pictures are one set."""
    from lib.explorers.definition import registered_views

    web.install(tmp_path)
    script = (f"Promise.all([import('{(tmp_path / 'views.js').as_uri()}'), import('{(tmp_path / 'render.js').as_uri()}')])"
              ".then(([v, r]) => console.log(JSON.stringify([Object.keys(v.VIEWS), r.VIEWS])))")
    twins, pictures = json.loads(subprocess.run([NODE, "-e", script], capture_output=True, text=True, check=True).stdout)
    assert set(twins) == set(pictures) == registered_views(), (sorted(twins), sorted(pictures))
