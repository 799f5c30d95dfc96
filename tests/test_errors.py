"""The one exception a learner is meant to read (lib.errors): `require` raises it with the sentence given, and it
is a ValueError, so callers that catch bad values catch it too."""
import pytest

from lib.errors import CourseError, require


def test_require_raises_the_sentence_only_when_the_condition_fails():
    require(True, "never shown")
    with pytest.raises(CourseError) as e:
        require(0, "the temperature must be positive")
    assert str(e.value) == "the temperature must be positive" and isinstance(e.value, ValueError)
