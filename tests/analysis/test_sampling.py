"""The temperature and sampling explorers' view of the read-out (lib.analysis.sampling): reshaped, truncated and
rolled as the read-out does; the pick's own probability; top-p's smallest set."""
import math

from lib.analysis.sampling import sampling_view
from lib.content.prompts import UNCERTAIN


def test_sampling_view_reshapes_truncates_and_rolls(lm):
    v = sampling_view(lm, UNCERTAIN, temperature=2.0, top_k=3, seed=4, k=28)
    assert v.survivors == 3
    assert math.isclose(sum(r.final for r in v.rows), 1.0, rel_tol=1e-9)
    assert math.isclose(sum(r.heated for r in v.rows), 1.0, rel_tol=1e-9)
    kept = [r.token for r in v.rows if r.final > 0]
    assert v.chosen in kept and len(kept) == 3
    assert [r.token for r in v.rows[:3]] == kept, "top-k keeps the best three"
    assert sampling_view(lm, UNCERTAIN, 2.0, 3, None, False, 4).chosen == v.chosen
    g = sampling_view(lm, UNCERTAIN, use_greedy=True, seed=11)
    assert g.chosen == v.rows[0].token and g.greedy
    hot = sampling_view(lm, UNCERTAIN, temperature=8.0, k=28)
    assert [r.token for r in hot.rows] == [r.token for r in v.rows], "temperature never changes the order"

def test_the_picks_probability_is_read_from_the_distribution(lm):
    """A roll outside the ten rows shown still reports its own probability (not 0)."""
    seeds = [s for s in range(400) if sampling_view(lm, UNCERTAIN, 5.0, seed=s, k=3).chosen not in
             [r.token for r in sampling_view(lm, UNCERTAIN, 5.0, k=3).rows]]
    assert seeds, "no roll at temperature 5 left the top three"
    v = sampling_view(lm, UNCERTAIN, 5.0, seed=seeds[0], k=3)
    assert v.chosen_prob > 0

def test_top_p_keeps_the_smallest_set_reaching_p(lm):
    v = sampling_view(lm, UNCERTAIN, top_p=0.5, k=28)
    heated = [r.heated for r in v.rows]
    n = v.survivors
    assert sum(heated[:n]) >= 0.5 > sum(heated[:n - 1])
