"""The self-checks of chapters/part1/many-heads (lib/chapters/part1/many_heads/checks.py): each accepts the
right answer and names the typical mistakes, without giving the answer away."""
from lib.chapters.part1.many_heads import checks as many_heads


def test_many_heads_value_checks():
    assert many_heads.mlp_weights(96) and many_heads.mlp_weights(96.0)
    assert "one of the two matrices" in many_heads.mlp_weights(48).message
    assert "biases" in many_heads.mlp_weights(96 + 6 + 8).message
    assert "not square" in many_heads.mlp_weights(36 + 64).message


# ------------------------------------------------------------------ the chapter's write checks
# For each, (the check, a right function written as a learner would, [(a typical wrong function, words
# its diagnosis must contain), ...]). tests/exercises/test_writing.py gathers every chapter's WRITE_CHECKS
# and runs each check on its right function, its wrong ones and garbage.
def split_heads(Q, n_heads):
    T = Q.shape[0]
    return Q.reshape(T, n_heads, -1).transpose(0, 1)


def merge_heads(Z):
    return Z.transpose(0, 1).reshape(Z.shape[1], -1)


WRITE_CHECKS = {
    "split_heads": (many_heads.split_heads, split_heads, [
        (lambda Q, n: Q.reshape(n, Q.shape[0], -1), "mixes several positions"),
        (lambda Q, n: Q.reshape(Q.shape[0], -1, n).permute(2, 0, 1), "every n_heads-th column"),
        (lambda Q, n: Q.reshape(Q.shape[0], n, -1), "[position, head, d_head]"),
    ]),
    "merge_heads": (many_heads.merge_heads, merge_heads, [
        (lambda Z: Z.reshape(Z.shape[1], -1), "each row mixes several positions"),
        (lambda Z: Z.sum(0), "added together"),
    ]),
}
