"""lib.kept: a run's measurement kept on disk, read back by the next process, never stale."""
import json

import numpy as np
import pytest

from lib import kept
from lib.errors import CourseError
from lib.model import store


def test_a_kept_measurement_is_measured_once_and_read_back_as_measured(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CLAIMS_CACHE", str(tmp_path))
    folder = store.shipped_runs("zero-layer")[0]
    calls = []

    def measure():
        calls.append(1)
        return {"share": np.float64(0.25), "count": np.int64(3), "heads": ["L0H1"]}
    first = kept.run_measurement("zero-layer", folder, "test-share", measure)
    again = kept.run_measurement("zero-layer", folder, "test-share", measure)
    assert calls == [1] and first == again == {"share": 0.25, "count": 3, "heads": ["L0H1"]}
    assert type(first["count"]) is int


def test_another_run_or_another_name_is_another_key(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CLAIMS_CACHE", str(tmp_path))
    a, b = store.shipped_runs("zero-layer")[:2]
    assert kept.weights_key([("zero-layer", a)]) != kept.weights_key([("zero-layer", b)])
    kept.run_measurement("zero-layer", a, "x", lambda: {"v": 1})
    assert kept.run_measurement("zero-layer", b, "x", lambda: {"v": 2}) == {"v": 2}
    assert kept.run_measurement("zero-layer", a, "y", lambda: {"v": 3}) == {"v": 3}
    assert len(list(tmp_path.glob("*.json"))) == 3


def test_half_a_file_is_measured_again(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CLAIMS_CACHE", str(tmp_path))
    folder = store.shipped_runs("zero-layer")[0]
    kept.run_measurement("zero-layer", folder, "x", lambda: {"v": 1})
    path = next(tmp_path.glob("*.json"))
    path.write_text(json.dumps({"value": {"v": 1}})[:9])
    assert kept.run_measurement("zero-layer", folder, "x", lambda: {"v": 2}) == {"v": 2}


@pytest.mark.parametrize("value", [{"at": (1.0, 2.0)}, {1.5: 0.2}, {"a": object()}])
def test_what_json_would_change_is_refused_in_one_line(value):
    with pytest.raises(CourseError, match="must be plain JSON"):
        kept.plain(value)
