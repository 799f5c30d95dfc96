"""The explorers' page files: shipped with the library, and sharing its constants by generation, not by copy."""
import json
import re
import shutil
import subprocess

import pytest

from lib.explorers import web
from lib.pictures import colours

NODE = shutil.which("node")


def test_no_shared_value_is_typed_in_the_page():
    """Colours and limits reach the page only through the generated module."""
    shared = {*colours.PALETTE.values(), *colours.GROUP_COLOURS}
    for name, path in web.sources():            # the core's modules and every chapter's page.js, pictures.js
        text = path.read_text().lower()
        typed = [c for c in shared if c.lower() in text]
        assert not typed, f"{name} types {typed}: import them from constants.js"
        for sentence in ("must be a whole number", "must lie in (0, 1]", "unknown token"):
            assert sentence not in text, f"{name} types a message ({sentence!r}): use say() and lib/messages.py"


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

    root = Path(__file__).resolve().parents[2]
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
                          "print(sorted(p.name for p in web.JS.iterdir())); print(len(web.kernel_renderer())); "
                          "print(sorted(t for t, _ in web.unit_files()))"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0].startswith(str(target)), out[0]
    assert {"render.js", "page.js", "model.js", "views.js", "explorers.css", "package.json"} <= set(eval(out[1]))
    assert int(out[2]) > 10_000
    # Every chapter's page twins and pictures too: the kernel's renderer draws with the units' pictures.
    assert eval(out[3]) == sorted(t for t, _ in web.unit_files())


@pytest.mark.skipif(NODE is None, reason="Node.js draws the book's pictures; install it (README)")
def test_every_registered_view_has_its_page_twin_and_its_picture(tmp_path):
    """The registry's views, the page's twins (every unit's VIEWS, as the build assembles them in
    units.js) and the renderer's pictures (every unit's pictures, in the site's render.js and in the
    kernel's single module) are one set; the page computes every check computation the exercises
    declare (every unit's COMPUTE and the core's)."""
    from lib.exercises.site import registry
    from lib.explorers.definition import registered_views

    web.install(tmp_path)
    script = (f"Promise.all([import('{(tmp_path / web.UNITS).as_uri()}'), import('{(tmp_path / 'render.js').as_uri()}')])"
              ".then(([u, r]) => console.log(JSON.stringify([Object.keys(u.VIEWS), Object.keys(u.COMPUTE), r.VIEWS])))")
    twins, computations, pictures = json.loads(subprocess.run([NODE, "-e", script], capture_output=True, text=True,
                                                              check=True).stdout)
    assert set(twins) == set(pictures) == registered_views(), (sorted(twins), sorted(pictures))
    declared = {twin.compute for twin in registry().values() if twin.compute}
    assert declared <= set(computations), sorted(declared - set(computations))
    kernel = tmp_path / "kernel.mjs"
    kernel.write_text(web.kernel_renderer() + "\nconsole.log(JSON.stringify(VIEWS));\n")
    drawn = json.loads(subprocess.run([NODE, str(kernel)], capture_output=True, text=True, check=True).stdout)
    assert set(drawn) == registered_views(), sorted(drawn)


def test_a_unit_imports_the_core_where_the_site_installs_it(tmp_path):
    """A unit's page.js and pictures.js import the core as the repository lays it out (so the file
    resolves where it is written); installed, every chapter's files are gathered in units.js and
    unit-pictures.js, whose imports all name modules the site's explorers folder holds."""
    web.install(tmp_path)
    imports = re.compile(r'from\s*"(\.{1,2}/[^"]+)"')
    for _, source in web.unit_files():
        for spec in imports.findall(source.read_text()):
            # constants.js is generated: in the repository only its place, beside the core, is known
            written = (source.parent / spec).resolve()
            assert written.parent == web.JS, (source, spec)
            assert written.is_file() or written == web.JS / web.CONSTANTS, (source, spec)
    for generated in (web.UNITS, web.UNIT_PICTURES):
        for spec in imports.findall((tmp_path / generated).read_text()):
            assert (tmp_path / spec).resolve().is_file(), (generated, spec)
    assert not (tmp_path / "units").exists()


def test_a_unit_that_imports_another_units_file_is_refused(tmp_path):
    """The build gathers a unit's file by reading its imports of the core; an import of anything else
    (another unit's file) stops the build with the file's name."""
    bad = tmp_path / "page.js"
    bad.write_text('import { VIEWS as OTHER } from "../../part2/three_ways/page.js";\nexport const VIEWS = OTHER;\n')
    with pytest.raises(RuntimeError, match="imports the core"):
        web._unit_body(bad, ("VIEWS",))

def test_a_units_other_exports_are_returned_beside_its_tables(tmp_path):
    """A unit's page.js may export more than VIEWS and COMPUTE (a helper its tests call, a generator): the
    build returns those too, its `export` keywords gone and what it does not export kept inside."""
    page = tmp_path / "page.js"
    page.write_text("export const VIEWS = {};\nexport function* steps() { yield 1; }\nexport async function later() {}\n"
                    "export class Thing {}\nconst hidden = 1;\n")
    body, cores = web._unit_body(page, ("VIEWS", "COMPUTE"))
    assert cores == set() and "export" not in body and "hidden" in body
    assert body.rstrip().endswith('return { VIEWS: typeof VIEWS === "undefined" ? undefined : VIEWS, '
                                  'COMPUTE: typeof COMPUTE === "undefined" ? undefined : COMPUTE, steps, later, Thing };')


@pytest.mark.skipif(NODE is None, reason="Node.js draws the book's pictures; install it (README)")
def test_the_page_reaches_each_units_exports_by_its_name(tmp_path):
    """units.js's UNITS: every unit with a page.js, by part/name, with what it exports (the ablation chapter's
    hooks and patching grid, which its tests and the benchmark call)."""
    web.install(tmp_path)
    script = (f"import('{(tmp_path / 'views.js').as_uri()}').then((v) => console.log(JSON.stringify("
              "Object.fromEntries(Object.entries(v.UNITS).map(([k, u]) => [k, Object.keys(u)])))))")
    units = json.loads(subprocess.run([NODE, "-e", script], capture_output=True, text=True, check=True).stdout)
    assert set(units) == {t.rsplit("/", 1)[0] for t, _ in web.unit_files() if t.endswith("/page.js")}
    assert {"VIEWS", "COMPUTE", "ablationHooks", "patchingGrid", "patchingSteps"} <= set(units["part1/ablation"])


def test_the_point_sets_have_one_loader_and_one_cache():
    """The site's point sets are fetched in one place (twins.js `points`, one cache), which the views' context,
    the page's preload and the checks all read: a second loader would keep a cache the others never warm."""
    fetching = [name for name, path in web.sources() if path.suffix == ".js" and "points/${" in path.read_text()]
    assert fetching == ["twins.js"], fetching
    page, views = (web.JS / "page.js").read_text(), (web.JS / "views.js").read_text()
    assert 'import { points } from "./twins.js";' in page and 'import { points } from "./twins.js";' in views
