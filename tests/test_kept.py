"""lib.kept: a run's measurement kept on disk, read back by the next process, never stale."""
import json

import numpy as np
import pytest

from lib import kept
from lib.errors import CourseError
from lib.model import store


def test_a_kept_measurement_is_read_back_as_written(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CLAIMS_CACHE", str(tmp_path))
    folder = store.shipped_runs("zero-layer")[0]
    key = "test-share-" + kept.weights_key([("zero-layer", folder)])
    assert kept.read(key) is None
    value = kept.plain({"share": np.float64(0.25), "count": np.int64(3), "heads": ["L0H1"]})
    kept.write(key, {"value": value})
    assert kept.read(key) == {"value": {"share": 0.25, "count": 3, "heads": ["L0H1"]}}
    assert type(kept.read(key)["value"]["count"]) is int


def test_another_run_is_another_key():
    a, b = store.shipped_runs("zero-layer")[:2]
    assert kept.weights_key([("zero-layer", a)]) != kept.weights_key([("zero-layer", b)])
    assert kept.weights_key([("zero-layer", a)]) == kept.weights_key([("zero-layer", a)])


def test_half_a_file_is_measured_again(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CLAIMS_CACHE", str(tmp_path))
    kept.write("x", {"value": {"v": 1}})
    path = next(tmp_path.glob("*.json"))
    path.write_text(json.dumps({"value": {"v": 1}})[:9])
    assert kept.read("x") is None


@pytest.mark.parametrize("value", [{"at": (1.0, 2.0)}, {1.5: 0.2}, {"a": object()}])
def test_what_json_would_change_is_refused_in_one_line(value):
    with pytest.raises(CourseError, match="must be plain JSON"):
        kept.plain(value)
