"""The many-heads chapter's explorer (lib/chapters/part1/many_heads/explorers.py): without positions layer 0 reads
words, not places; every control redraws."""
from explorer_cases import every_control_redraws
from lib.chapters.part1.many_heads.explorers import heads_explorer
from lib.explorers.registry import REGISTRY

EXAMPLE = "<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo vice <SEP> Paolo chiama Pietro"


def test_without_positions_layer_0_reads_words_not_places(lm):
    ex = heads_explorer(lm, [EXAMPLE])
    swapped = EXAMPLE.replace("chiama 5 <SEP> 5 chiama Paolo", "chiama Paolo <SEP> 5 chiama 5")
    words, other = EXAMPLE.split(), swapped.split()
    for positions_off in (True, False):
        a = ex.compute(dict(ex.defaults(), no_positions=positions_off))
        b = ex.compute(dict(ex.defaults(), no_positions=positions_off, prompt=swapped))
        moved = []
        for h in range(4):
            # The last row's weight on each word, summed over its places: the same bag of words.
            bag = lambda v, toks: {t: sum(p for t2, p in zip(toks, v["patterns"][h][-1]) if t2 == t) for t in set(toks)}
            x, y = bag(a, words), bag(b, other)
            moved.append(max(abs(x[t] - y[t]) for t in x))
        assert (max(moved) < 1e-5) == positions_off, (positions_off, moved)
        assert 0 < a["spread"] < 1 and len(a["patterns"]) == 4


def test_every_control_redraws():
    for ex in REGISTRY["heads_explorer"].examples():
        every_control_redraws(ex)
