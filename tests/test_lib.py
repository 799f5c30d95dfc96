"""The package itself (lib/__init__.py): `import lib` stays cheap (nothing heavy is imported until a name is
asked for), each name it offers is its module's own, and a name it does not offer is an AttributeError."""
import subprocess
import sys

import pytest

import lib


def test_import_lib_loads_no_torch_until_a_name_is_asked_for():
    code = ("import sys, lib; before = {m for m in ('torch', 'sklearn', 'matplotlib') if m in sys.modules}; "
            "lib.load; print(sorted(before), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")[0]
    assert out == "[] True"


@pytest.mark.parametrize("name", lib.__all__)
def test_each_name_is_its_modules_own(name):
    from importlib import import_module
    assert getattr(lib, name) is getattr(import_module(f"lib.{lib._EXPORTS[name]}"), name)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'lib' has no attribute 'nonesuch'"):
        lib.nonesuch
