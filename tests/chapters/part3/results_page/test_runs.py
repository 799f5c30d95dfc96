"""Whole rounds at several temperatures (lib/chapters/part3/results_page/runs.py): the share that breaks the
rules is counted with the rules' checker, the same with one sampling seed, and grows with the temperature."""
from lib.chapters.part3.results_page import runs
from lib.content.corpora.calling_game import check_round
from lib.model.generate import sample_many


def test_the_broken_share_is_counted_by_the_checker_at_each_temperature(lm, monkeypatch):
    monkeypatch.setattr(runs, "ROUNDS", 60)
    shares = runs._broken_by_temperature(lm, seed=5)
    assert list(shares) == list(runs.TEMPERATURES) and shares == runs._broken_by_temperature(lm, seed=5)
    for t in (0.5, 2.0):
        rounds = sample_many(lm.model, lm.encode("<BOS>"), 60, lm.model.cfg.n_ctx, seed=5, temperature=t,
                             stop=lm.vocab.id("<EOS>"))
        assert shares[t] == sum(not check_round(lm.vocab.decode(r))[0] for r in rounds) / 60, t
    assert len(set(shares.values())) > 1, "the temperature changes the rounds"
