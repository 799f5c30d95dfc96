"""Repeated random segments (lib.content.corpora.repeats): filler letters, then a segment of distinct letters
twice; batches of one period and merged batches index the copies where they lie; the held-out set is fixed; the copy losses are a
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


def _split(s):
    """(filler, period) of a drawn sequence: the one split whose last 2 x period letters are a segment twice."""
    found = [(len(s) - 1 - 2 * p, p) for p in range(repeats.MIN_PERIOD, repeats.MAX_PERIOD + 1)
             if len(s) - 1 - 2 * p >= 0 and s[len(s) - 2 * p:len(s) - p] == s[len(s) - p:]]
    assert len(found) == 1, s
    return found[0]


def test_a_sequence_is_filler_then_a_segment_of_distinct_letters_twice():
    rng = random.Random(3)
    fillers = set()
    for _ in range(200):
        s = sample_sequence(rng)
        f, p = _split(s)
        fillers.add(f)
        assert s[0] == BOS and len(set(s[1:1 + f + p])) == f + p and set(s[1:]) <= set(LETTERS)
        assert repeats.MIN_PERIOD <= p <= repeats.MAX_PERIOD and 0 <= f <= repeats.MAX_FILLER
    assert fillers == set(range(repeats.MAX_FILLER + 1)), "the repeat starts anywhere from right after <BOS> on"
    assert RepeatOptions().max_len == 1 + repeats.MAX_FILLER + 2 * repeats.MAX_PERIOD
    no_filler = RepeatOptions(max_filler=0)
    assert all(_split(sample_sequence(rng, no_filler))[0] == 0 for _ in range(20))


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
    assert all((x.ids == y.ids).all() and x.filler == y.filler for x, y in zip(first, again))
    periods = range(repeats.MIN_PERIOD, repeats.MAX_PERIOD + 1)
    assert {b.period for b in first} == set(periods)
    assert all(sum(len(b.ids) for b in first if b.period == p) == repeats.MONITOR_PER_PERIOD for p in periods)
    assert all(len(b.ids) <= repeats.GROUP and 0 <= b.filler <= repeats.MAX_FILLER for b in first)
    assert len({b.filler for b in first}) > 1


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

    def run_with_cache(self, ids):
        return self(ids), {}

    cfg = type("Config", (), {"n_layers": 0, "n_heads": 0})


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
