"""A model against the hand-wired corpus's exact distribution (lib.analysis.corpus_fit): an oracle reaches the
floor and learns every fact; the shipped model is measured the same way."""
import numpy as np
import pytest


def test_a_model_that_knows_the_corpus_scores_the_floor_and_a_fit_report_counts_facts(hand_wired):
    """An oracle whose logits are the corpus's log-probabilities reaches the floor exactly, and
    every fact prefix counts as learned; the shipped model is measured the same way."""
    import torch
    from lib.analysis import corpus_fit
    from lib.content.corpora import hand_wired as hw

    lm = hand_wired

    class Oracle(torch.nn.Module):
        def forward(self, batch):
            out = torch.full((*batch.shape, len(lm.vocab)), -1e9, dtype=torch.float64)
            for r, row in enumerate(batch.tolist()):
                tokens = [lm.vocab.tokens[i] for i in row]
                for i in range(len(tokens)):
                    for t, p in hw.next_token_distribution(tuple(tokens[:i + 1])).items():
                        out[r, i, lm.vocab.id(t)] = np.log(p)
            return out

    class Wrapped:
        vocab = lm.vocab
        model = Oracle()

    assert corpus_fit.expected_loss(Wrapped) == pytest.approx(hw.entropy_floor(), abs=1e-9)
    fits = corpus_fit.prefix_fits(Wrapped)
    assert all(f.learned and f.tv < 1e-9 for f in fits)
    kinds = {k: len(v) for k, v in corpus_fit.fact_prefixes().items()}
    assert kinds["class"] == 40 and kinds["definition"] == 40 and kinds["comparison"] > 100
    summary = corpus_fit.fit_summary(lm)
    assert summary["expected_loss"] > summary["entropy_floor"]
