"""The last step written as a search (lib.analysis.search): a dot product per word, then a softmax; on a trained
model the search over its unembedding, bias added, is its own next-token page (with a final LayerNorm or
without)."""
import numpy as np
import pytest
import torch

from lib.analysis.search import model_dictionary, model_query, model_search, search
from lib.content.prompts import CONFIDENT
from lib.model.readout import prompt_logits


def test_a_search_scores_each_word_by_its_dot_product_and_ranks_by_softmax():
    result = search([1.0, 2.0], {"a": [1, 0], "b": [0, 1], "c": [1, 1]}, temperature=2.0)
    assert result.scores.tolist() == [1.0, 2.0, 3.0]
    e = np.exp(np.array([1.0, 2.0, 3.0]) / 2)
    assert result.probs == pytest.approx(e / e.sum())
    assert [w for w, _, _ in result.ranked()] == ["c", "b", "a"]
    tie = search([1.0], {"x": [1], "y": [1]})
    assert [w for w, _, _ in tie.ranked()] == ["x", "y"], "ties keep the dictionary's order"


@pytest.mark.parametrize("model, prompt", [("calling_game", CONFIDENT), ("hand_wired", "<BOS> the king is")])
def test_the_models_search_is_its_own_page(model, prompt, request):
    lm = request.getfixturevalue(model)
    found = model_search(lm, prompt, temperature=0.7)
    logits = prompt_logits(lm, prompt).double()
    assert found.scores == pytest.approx(logits.numpy(), abs=1e-4)
    assert found.probs == pytest.approx(torch.softmax(logits / 0.7, -1).numpy(), abs=1e-6)
    q, d = model_query(lm, prompt), model_dictionary(lm)
    assert len(d) == len(lm.vocab) and q.shape == d[lm.vocab.tokens[0]].shape
