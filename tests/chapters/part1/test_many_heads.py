"""The self-checks of chapters/part1/many-heads (lib/chapters/part1/many_heads/checks.py): each accepts the
right answer and names the typical mistakes, without giving the answer away."""
from lib.chapters.part1.many_heads import checks as many_heads


def test_many_heads_value_checks():
    assert many_heads.mlp_weights(96) and many_heads.mlp_weights(96.0)
    assert "one of the two matrices" in many_heads.mlp_weights(48).message
    assert "biases" in many_heads.mlp_weights(96 + 6 + 8).message
    assert "not square" in many_heads.mlp_weights(36 + 64).message
