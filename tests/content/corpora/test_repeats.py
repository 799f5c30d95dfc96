"""Repeated random segments (lib.content.corpora.repeats): a segment of distinct letters twice; batches of one
period and merged batches index the copies where they lie; the held-out set is fixed; the copy losses are a
model's next-token losses on each copy (a perfect copier scores zero on the second); options are checked."""
import random

import numpy as np
import pytest
import torch

from lib.content.corpora import repeats
from lib.content.corpora.repeats import (LETTERS, TOKENS, RepeatOptions, copy_losses, held_out, merge, monitor,
                                         repeated_batch, sample_sequence)
from lib.errors import CourseError
from lib.model.vocab import BOS, PAD

IDS = {t: i for i, t in enumerate(TOKENS)}


def test_a_sequence_is_a_segment_of_distinct_letters_twice():
    rng = random.Random(3)
    for _ in range(200):
        s = sample_sequence(rng)
        p = (len(s) - 1) // 2
        assert s[0] == BOS and s[1:1 + p] == s[1 + p:] and len(set(s[1:1 + p])) == p
        assert repeats.MIN_PERIOD <= p <= repeats.MAX_PERIOD and set(s[1:]) <= set(LETTERS)
    assert RepeatOptions().max_len == 1 + 2 * repeats.MAX_PERIOD


def test_a_batch_and_a_merge_index_the_copies_where_they_lie():
    rng = np.random.default_rng(0)
    a, b = repeated_batch(rng, 3, 4, IDS), repeated_batch(rng, 2, 6, IDS)
    assert a.ids.shape == (3, 9) and (a.ids[:, 1:5] == a.ids[:, 5:]).all()
    assert (a.first.start, a.first.stop, a.second.start, a.second.stop) == (1, 4, 5, 8)
    m = merge([a, b], IDS[PAD])
    assert m.ids.shape == (5, 13) and (m.ids[:3, 9:] == IDS[PAD]).all() and list(m.periods) == [4, 4, 4, 6, 6]
    rows, queries = m.second
    # every second-copy query's next token is the token that followed its earlier occurrence
    for r, q in zip(rows, queries):
        p = m.periods[r]
        assert m.ids[r, q + 1] == m.ids[r, q + 1 - p]
    ir, iq, keys = m.induction
    assert all(m.ids[r, k - 1] == m.ids[r, q] for r, q, k in zip(ir, iq, keys)), "the key follows the earlier copy"
    assert list(m.partner) == [2, 0, 1, 4, 3] and all(m.periods[m.partner] == m.periods)
    assert len(m.queries[0]) == sum(2 * p for p in m.periods)


def test_the_held_out_set_is_fixed_and_covers_every_period():
    first, again = held_out(IDS), held_out(IDS)
    assert [b.period for b in first] == list(range(repeats.MIN_PERIOD, repeats.MAX_PERIOD + 1))
    assert all((x.ids == y.ids).all() and len(x.ids) == repeats.MONITOR_PER_PERIOD for x, y in zip(first, again))


class Copier(torch.nn.Module):
    """A perfect induction model (and a first copy guessed uniformly among the letters)."""

    def forward(self, ids):
        out = torch.full((*ids.shape, len(TOKENS)), -50.0, dtype=torch.float64)
        letters = [IDS[t] for t in LETTERS]
        for r, row in enumerate(ids.tolist()):
            for i, t in enumerate(row):
                earlier = [j for j in range(1, i) if row[j] == t]
                if earlier and earlier[-1] + 1 < len(row):
                    out[r, i, row[earlier[-1] + 1]] = 50.0
                else:
                    out[r, i, letters] = 0.0
        return out


def test_the_copy_losses_are_the_next_token_losses_on_each_copy():
    batches = held_out(IDS, RepeatOptions(4, 5), n=3)
    losses = copy_losses(Copier(), batches)
    assert losses["second_copy_loss"] < 1e-9
    assert losses["first_copy_loss"] == pytest.approx(np.log(len(LETTERS)), rel=1e-9)
    assert monitor(RepeatOptions(4, 5))(Copier()).keys() == {"second_copy_loss", "first_copy_loss"}


@pytest.mark.parametrize("options, says", [(dict(min_period=1), "min_period must be a whole number from 2"),
                                           (dict(max_period=27), "max_period must be"),
                                           (dict(min_period=8, max_period=5), "must not exceed max_period"),
                                           (dict(min_period=True), "min_period must be")])
def test_options_are_checked(options, says):
    with pytest.raises(CourseError, match=says):
        RepeatOptions(**options)
    with pytest.raises(CourseError, match="a period is from 2"):
        repeated_batch(np.random.default_rng(0), 1, 30, IDS)
