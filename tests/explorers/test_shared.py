"""What several chapters' explorers share (lib.explorers.shared): a prompt's tokens as the vocabulary writes
them, (token, probability) pairs as a view holds them (plain floats, whatever held them), and the examples'
model and prompts."""
import json

import pytest
import torch

from lib.content.prompts import CONFIDENT, UNCERTAIN
from lib.explorers.shared import example_model, example_prompts, pairs, tokens


def test_the_shared_pieces_of_a_view(lm):
    assert tokens(lm, "  <BOS>   Pietro chiama ") == ["<BOS>", "Pietro", "chiama"]
    held = pairs([("Tarso", torch.tensor(0.75)), ("vice", 0.25)])
    assert held == [["Tarso", 0.75], ["vice", 0.25]] and all(type(p) is float for _, p in held)
    assert json.loads(json.dumps(held)) == held
    assert example_model().meta["sha256"] == lm.meta["sha256"] and example_model("zero-layer").name == "zero-layer"
    assert example_prompts() == {"confident": CONFIDENT, "uncertain": UNCERTAIN}
