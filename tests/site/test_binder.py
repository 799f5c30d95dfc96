"""Binder's install, replayed: a virtual environment, from the repository's root, as repo2docker does.

repo2docker runs `pip install -r binder/requirements.txt` and then `binder/postBuild` in the
repository's root. Afterwards `import lib` must work from any folder, JupyterLab must be there
with the reader's settings, and the reader notebooks the launch button opens must exist. The
chapters are not executed again: the build's execution cache is copied in, as a warm cache.

The replay's environment is layered on this one (a `.pth` line adds this environment's packages
after its own, as `--system-site-packages` would for a base interpreter): the pinned packages
were installed from nothing by `make install` from the same `requirements.txt` that
binder/requirements.txt reads, so pip finds every pin satisfied, and what the replay proves is
Binder's own: its requirements file resolves from the root, postBuild installs the library into
the new environment (not this one's) and writes the notebooks. Unpacking torch and the rest a
second time cost 226 s of processor time on two cores and proved nothing more. What the layering
could hide, a package the reader's code imports that only the build's or the tests' requirements
install, is checked by `test_the_readers_requirements_hold_every_package_the_reader_imports`.

One line is left out of the replay: the CPU package index of PyTorch, which this machine cannot
reach (it reaches PyPI only).
"""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_binder_installs_from_the_repository_root(tmp_path):
    repo = tmp_path / "repo"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    for warm in (".jupyter_cache", ".library-key"):
        source = ROOT / "_build" / warm
        assert source.exists(), "the book is not built: run `make book` (make test builds it first)"
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, repo / "_build" / warm)

    requirements = repo / "binder" / "requirements.txt"
    lines = requirements.read_text().splitlines()
    index = [line for line in lines if line.startswith("--extra-index-url")]
    assert index == ["--extra-index-url https://download.pytorch.org/whl/cpu"], index
    requirements.write_text("\n".join(line for line in lines if line not in index) + "\n")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    own = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    # After the new environment's own packages (site adds its folder first), this one's, with its .pth files.
    Path(own, "zz_layered_on_the_test_environment.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    bin_ = venv / "bin"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH", "COURSE_"))}
    env.update(PATH=f"{bin_}:{env['PATH']}", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_COMPILE="1")

    def step(*cmd, cwd=repo, timeout=900):
        result = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        assert result.returncode == 0, f"{' '.join(cmd)}:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
        return result.stdout

    installed = step(str(bin_ / "pip"), "install", "-r", "binder/requirements.txt")
    # Only the new environment's own installer tools may move (its bundled setuptools is older than a
    # package asks); any other package installed means a pin differs from what make install installed.
    fresh = [name.rsplit("-", 1)[0] for line in installed.splitlines() if line.startswith("Successfully installed")
             for name in line.split()[2:]]
    assert set(fresh) <= {"setuptools", "pip", "wheel"}, f"a pin differs from this environment's: {fresh}"
    built = step("bash", "binder/postBuild")
    # The reader's packages are those of this environment (the build's and the tests' are not in the
    # cache's key), so the warm cache matches and no chapter runs again.
    assert "executed" not in built, f"postBuild executed chapters: the copied cache's key did not match\n{built}"
    # From another folder: the library is installed, not found by accident in the working directory.
    out = step(str(bin_ / "python"), "-c", "import lib; print(lib.__file__); print(lib.load('calling-game').vocab.tokens[:2])",
               cwd=tmp_path)
    assert out.splitlines()[0] == str(repo / "lib" / "__init__.py"), f"lib is not the replay's own: {out}"
    assert "<BOS>" in out
    # The real model is installed too (as data, by postBuild), and runs with no download.
    out = step(str(bin_ / "python"), "-c", "from lib.model import minilm; print(minilm.load().tokens('It was tired.'))",
               cwd=tmp_path)
    assert "'tired'" in out
    assert step(str(bin_ / "python"), "-m", "jupyterlab", "--version").strip().startswith("4.")
    settings = json.loads(next((venv / "share" / "jupyter" / "lab" / "settings").glob("overrides.json")).read_text())
    assert settings["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    reader = repo / "notebooks" / "chapters" / "part3" / "search-by-hand.ipynb"
    assert reader.exists(), "postBuild writes the notebook the launch button opens"
    assert "{glue" not in reader.read_text()
