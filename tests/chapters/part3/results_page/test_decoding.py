"""Whole rounds scored and searched (lib/chapters/part3/results_page/decoding.py): one padded pass scores them as
token by token does, and beam search finds at least greedy's score."""
import numpy as np


def test_whole_rounds_are_scored_in_one_pass_as_token_by_token(lm):
    from lib.chapters.part3.results_page.decoding import round_logprobs, searched
    from lib.model.decoding import token_logprobs
    from lib.model.generate import sample_many
    rounds = sample_many(lm.model, lm.encode("<BOS>"), 6, lm.model.cfg.n_ctx, seed=1, stop=lm.vocab.id("<EOS>"))
    assert len({len(r) for r in rounds}) > 1                      # the padding is exercised
    by_hand = [float(token_logprobs(lm.model, r[:1], r[1:]).sum()) for r in rounds]
    assert np.allclose(round_logprobs(lm, rounds), by_hand, atol=1e-4)
    found = searched(lm)
    assert found["beam"]["logprob"] >= found["greedy"]["logprob"] - 1e-6 or found["beam"]["length"] < found["greedy"]["length"]
    assert set(found) == {"greedy", "beam", "beam, mean per token"}
