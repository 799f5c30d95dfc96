"""A flat page as a detector of impossible prompts (lib.analysis.flatness): flags counted per group above a
threshold, and the model flat where the rules leave a choice."""
import math

import pytest

from lib.errors import CourseError


def test_the_flatness_detector_counts_flags_per_group():
    from lib.analysis.flatness import detector_report
    from lib.analysis.signs import Signs

    def page(bits, rules):
        return Signs("p", "x", 0.5, bits, 0.1, rules)

    groups = {"impossible": [page(0.2, None), page(1.5, None), page(1.0, None)],
              "legal_open": [page(3.2, {"a": 0.5, "b": 0.5})],
              "legal_fixed": [page(0.0, {"a": 1.0}), page(2.0, {"a": 1.0})]}
    r = detector_report(groups, threshold_bits=1.0)
    assert (r.impossible.flagged, r.impossible.total) == (1, 3), "a page flags only above the threshold"
    assert (r.legal_open.flagged, r.legal_fixed.flagged, r.legal_fixed.total) == (1, 1, 2)
    assert math.isclose(r.impossible.share, 1 / 3)
    assert detector_report(groups, threshold_bits=0.0).impossible.flagged == 3
    with pytest.raises(CourseError, match="bits"):
        detector_report(groups, threshold_bits=-1)

def test_the_model_is_flat_where_the_rules_leave_a_choice(lm):
    from lib.analysis.flatness import detector_report, labelled_signs

    groups = labelled_signs(lm, n=10, n_random=60)
    assert all(not s.on_distribution for s in groups["impossible"]) and len(groups["legal_open"]) == 10
    r = detector_report(groups, 1.0)
    assert r.legal_open.flagged == 10, "every open callee choice carries more than one bit"
    assert r.legal_fixed.flagged <= 1
