"""Every explorer, found where it is defined (lib.explorers.registry): the registry holds each unit's explorers
once the units are walked, and every explorer says where it sits on Part 1's map."""
from lib.chapters.part1.bigrams.explorers import bigram_explorer
from lib.chapters.part1.many_heads.explorers import heads_explorer
from lib.chapters.part1.one_head.explorers import cat_sat_explorer
from lib.chapters.part1.why_attention.explorers import window_explorer
from lib.explorers.registry import REGISTRY, entries, where_it_sits

HAND = (window_explorer, bigram_explorer, cat_sat_explorer, heads_explorer)


def test_the_registry_holds_them():
    entries()               # every unit's explorers loaded, as every test of every explorer loads them
    assert all(REGISTRY[make.__name__].make is make for make in HAND)

def test_every_explorer_says_where_it_sits_on_the_map():
    """Each registration says where its explorer sits (`where=` is required): a sentence, or nothing for
    the map itself and for what is no part of the machine (the game's rules); its spec carries it."""
    for e in entries():
        assert e.where == "" or (e.where[0].islower() and e.where.endswith(".")), (e.name, e.where)
        assert where_it_sits(e.view) == e.where
        assert all(x.spec()["where"] == e.where for x in e.examples()), e.name
    assert where_it_sits("machine") == "" and where_it_sits("no such view") == ""
