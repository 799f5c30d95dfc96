import os
import subprocess
import sys

import pytest


@pytest.fixture
def run_cli():
    def run(*args, check=False):
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        r = subprocess.run([sys.executable, "-m", "lib", *args], capture_output=True, text=True, env=env,
                           timeout=300)
        if check:
            assert r.returncode == 0, r.stderr
        return r
    return run
