"""The self-checks of chapters/part1/circuits (lib/chapters/part1/circuits/checks.py): each accepts the right
answer and names the typical mistakes, without giving the answer away."""
from lib.chapters.part1.circuits import checks as circuits


def test_circuits_value_checks(lm):
    assert circuits.pair_ov_rank(lm, 2 * lm.model.cfg.d_head)
    assert "one head's rank" in circuits.pair_ov_rank(lm, lm.model.cfg.d_head).message
    assert "bounds the rank" in circuits.pair_ov_rank(lm, lm.model.cfg.d_model).message
    answer = circuits._most_self_attending_capo(lm)
    assert circuits.most_self_attending_capo(lm, answer)
    other = next(n for n in ("L0H3", "L1H3") if n != answer)
    wrong = circuits.most_self_attending_capo(lm, other)
    assert not wrong and answer not in wrong.message
    assert "one of" in circuits.most_self_attending_capo(lm, "head 3").message
