"""The final search at GPT sizes (lib.analysis.scale): the cost counted and its inputs checked."""
import pytest

from lib.analysis.scale import search_cost
from lib.errors import CourseError


def test_search_cost_counts_and_checks():
    c = search_cost(5000, 64, repeats=1)
    assert c.multiply_adds == 320000 and c.dictionary_bytes == 1280000 and c.seconds > 0
    with pytest.raises(CourseError, match="vocab_size"):
        search_cost(0, 64)
    with pytest.raises(CourseError, match="d_model"):
        search_cost(10, 2.5)
