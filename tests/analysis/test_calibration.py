"""Calibration and detection (`lib.analysis.calibration`): calibrated and random data behave as such, the
numbers agree with scikit-learn, and bad input gets one clear line."""
import numpy as np
import pytest

from lib.analysis import calibration as cal
from lib.errors import CourseError


def _calibrated(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0, 1, n)
    return conf, rng.uniform(0, 1, n) < conf


def test_calibrated_answers_have_small_ece_and_overconfident_ones_do_not():
    conf, right = _calibrated()
    assert cal.expected_calibration_error(conf, right) < 0.02
    over = np.clip(conf + 0.2, 0, 1)       # the same answers, each claimed 0.2 surer
    assert cal.expected_calibration_error(over, right) > 0.15
    r = cal.reliability(conf, right, 10)
    assert r.count.sum() == len(conf) and len(r.edges) == 11
    assert np.allclose(r.accuracy, r.confidence, atol=0.03)


def test_ece_by_hand():
    # bin [0.8, 0.9): confidences 0.8 and 0.85, one right; bin [0.9, 1]: 1.0 right
    conf, right = [0.8, 0.85, 1.0], [True, False, True]
    r = cal.reliability(conf, right, 10)
    assert r.count[8] == 2 and r.count[9] == 1
    expected = 2 / 3 * abs(0.5 - 0.825) + 1 / 3 * abs(1.0 - 1.0)
    assert cal.expected_calibration_error(conf, right, 10) == pytest.approx(expected, abs=1e-12)


def test_auroc_agrees_with_scikit_learn_with_ties():
    from sklearn.metrics import roc_auc_score, roc_curve

    rng = np.random.default_rng(1)
    y = rng.uniform(size=500) < 0.3
    s = np.round(rng.normal(size=500) + 1.2 * y, 1)        # rounded: many ties
    assert cal.auroc(s, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    fpr, tpr, _ = cal.roc_curve(s, y)
    sk_fpr, sk_tpr, _ = roc_curve(y, s, drop_intermediate=False)
    assert np.allclose(fpr, sk_fpr, atol=1e-12) and np.allclose(tpr, sk_tpr, atol=1e-12)
    assert np.trapezoid(tpr, fpr) == pytest.approx(cal.auroc(s, y), abs=1e-12)


def test_auroc_is_half_for_a_useless_score_and_one_for_a_perfect_one():
    rng = np.random.default_rng(2)
    y = rng.uniform(size=4000) < 0.2
    assert cal.auroc(rng.normal(size=4000), y) == pytest.approx(0.5, abs=0.03)
    assert cal.auroc(y.astype(float), y) == pytest.approx(1.0, abs=1e-12)
    assert cal.caught_in_top(y.astype(float), y, y.mean()) == y.sum()


def test_regimes_apart():
    conf, right = _calibrated(5000)
    rng = np.random.default_rng(3)
    shifted_conf = rng.uniform(0.8, 1.0, 1000)             # sure of itself, right by chance
    shifted_right = rng.uniform(size=1000) < 0.3
    reports = {r.name: r for r in cal.by_regime({"allowed": (conf, right), "shifted": (shifted_conf, shifted_right)})}
    assert reports["allowed"].ece < 0.03 and reports["allowed"].auroc > 0.75
    assert reports["shifted"].ece > 0.5 and reports["shifted"].auroc == pytest.approx(0.5, abs=0.06)
    assert reports["shifted"].n == 1000 and reports["shifted"].wrong == int((~shifted_right).sum())


@pytest.mark.parametrize("conf,right,match", [
    ([0.5, 1.2], [1, 0], "from 0 to 1"), ([0.5], [1, 0], "one outcome per confidence"),
    ([0.5, np.nan], [1, 0], "from 0 to 1"), ([0.5, 0.4], ["yes", "no"], "true/false")])
def test_bad_input_one_line(conf, right, match):
    with pytest.raises(CourseError, match=match):
        cal.expected_calibration_error(conf, right)


def test_bad_detection_input():
    with pytest.raises(CourseError, match="one positive and one negative"):
        cal.auroc([0.1, 0.2], [True, True])
    with pytest.raises(CourseError, match="whole number"):
        cal.reliability([0.1], [True], 0)
    with pytest.raises(CourseError, match="share"):
        cal.caught_in_top([0.1, 0.2], [True, False], 0)


def test_wilson_interval_holds_the_share_and_known_values():
    from lib.analysis.calibration import wilson_interval

    lo, hi = wilson_interval([0, 3, 50], [3, 3, 100])
    # Wilson's 95% interval for 50 of 100 is 0.404 to 0.596; for 3 of 3, 0.438 to 1 (not a point at 1)
    assert abs(lo[2] - 0.4038) < 1e-3 and abs(hi[2] - 0.5962) < 1e-3
    assert abs(lo[1] - 0.4385) < 1e-3 and abs(hi[1] - 1.0) < 1e-9 and abs(lo[0]) < 1e-9
    assert np.all(lo <= np.array([0, 1, 0.5])) and np.all(np.array([0, 1, 0.5]) <= hi)
    with pytest.raises(CourseError):
        wilson_interval([4], [3])


def test_median_difference_interval_holds_a_clear_gap_and_not_a_null_one():
    from lib.analysis.calibration import median_difference_interval

    rng = np.random.default_rng(0)
    lo, hi = median_difference_interval(rng.normal(0, 1, 30), rng.normal(3, 1, 30))
    assert 2 < lo < 3 < hi < 4
    lo, hi = median_difference_interval(rng.normal(0, 1, 10), rng.normal(0, 1, 10))
    assert lo < 0 < hi
    with pytest.raises(CourseError):
        median_difference_interval([1.0], [2.0, 3.0])
