"""The site's explorers folder for the tests that run the page's twins in Node (tests/twin_contract.py)."""
import os

import pytest


@pytest.fixture(scope="session")
def twin_site(tmp_path_factory):
    """The site's explorers folder as the build writes it (twin_contract.write_site), written once for the
    whole test run: the test processes (xdist workers) share one folder, and the first to get the lock writes."""
    from filelock import FileLock

    from twin_contract import NODE, write_site

    if NODE is None:
        pytest.fail("Node.js runs the page's twins: install it (README: the two commands)")
    root = tmp_path_factory.getbasetemp()
    shared = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root
    folder = shared / "twin-site" / "explorers"
    done = folder.parent / "written"
    with FileLock(str(folder.parent) + ".lock"):
        if not done.is_file():
            write_site(folder)
            done.write_text("")
    return folder
