"""lib.model.catalog: the models the course knows by name, checked and listed without loading one.

Every command's models: the shipped ones for all, SmolLM2 for every command but `train` and `check`,
MiniLM for `attention` only; every refusal is one line that names every model; a damaged shipped
model's fault is named by `read_meta` (the loader and `models` report it the same way).
"""
import json

import pytest

from lib.errors import CourseError
from lib.model import catalog

COMMANDS = ("predict", "generate", "lens", "patch", "attention", "train", "check")


def test_every_command_takes_the_models_it_runs_and_names_them_all_when_refusing():
    own = catalog.shipped_names()
    assert {"calling-game", "induction"} <= set(own)
    for command in COMMANDS:
        for name in own:
            assert catalog.check_name(name, command) == name
        runs_smollm2 = command not in catalog.OWN_COMMANDS
        runs_minilm = command == "attention"
        for name, runs in ((catalog.SMOLLM2, runs_smollm2), (catalog.MINILM, runs_minilm)):
            if runs:
                assert catalog.check_name(name, command) == name
            else:
                with pytest.raises(CourseError) as e:
                    catalog.check_name(name, command)
                assert "\n" not in str(e.value) and own[0] in str(e.value), str(e.value)
        with pytest.raises(CourseError) as e:
            catalog.check_name("gpt-2", command)
        message = str(e.value)
        assert message.startswith("unknown model 'gpt-2'") and "\n" not in message
        assert all(n in message for n in own + [catalog.SMOLLM2, catalog.MINILM]), message


@pytest.mark.parametrize("name", ["data/models/induction", "..", "C:\\models\\x"])
def test_a_path_is_told_that_models_are_named(name):
    with pytest.raises(CourseError, match="a model is named, not given as a path"):
        catalog.check_name(name, "predict")


def _meta(**change) -> dict:
    meta = {"config": {"n_layers": 1}, "vocab": ["a"], "sha256": "0" * 64}
    meta.update(change)
    return meta


@pytest.mark.parametrize("text, says", [
    (None, "meta.json is missing"),
    ("{", "meta.json is not valid JSON"),
    ("[1, 2]", "must hold a JSON object, found list"),
    (json.dumps(_meta(vocab="abc")), "'vocab' must be a list of tokens, found str"),
    (json.dumps({k: v for k, v in _meta().items() if k != "config"}), "has no 'config'"),
    (json.dumps(_meta(sha256="not a digest")), "'sha256' must be 64 hex digits"),
    (b"\xff\xfe{}", "meta.json is not UTF-8 text"),
])
def test_a_damaged_meta_json_names_its_fault(tmp_path, text, says):
    if isinstance(text, bytes):
        (tmp_path / catalog.META).write_bytes(text)
    elif text is not None:
        (tmp_path / catalog.META).write_text(text, encoding="utf-8")
    with pytest.raises(CourseError, match=says):
        catalog.read_meta(tmp_path)


def test_a_good_meta_json_is_read(tmp_path):
    (tmp_path / catalog.META).write_text(json.dumps(_meta()), encoding="utf-8")
    assert catalog.read_meta(tmp_path)["vocab"] == ["a"]


def test_models_lists_every_model_without_loading_one():
    lines = catalog.models_lines()
    names = [line.split()[0] for line in lines]
    assert names == catalog.shipped_names() + [catalog.SMOLLM2, catalog.MINILM]
    assert all("damaged" not in line for line in lines)
