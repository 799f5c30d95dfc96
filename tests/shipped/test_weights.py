"""The shipped weights: they load without running code, match their checksums and metadata."""
import json

import pytest
from safetensors.torch import load_file

from helpers import figures_differ
from lib.model.store import META, WEIGHTS, load, models_dir, sha256, shipped_names
from lib.shipped.presets import PRESETS


def test_every_model_is_shipped():
    """Every preset (the registry of the course's models) is shipped, and nothing else."""
    assert shipped_names() == sorted(PRESETS)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_metadata_is_complete_and_the_checksum_matches(name):
    folder = models_dir() / name
    meta = json.loads((folder / META).read_text())
    for key in ("config", "vocab", "train", "final_loss", "behaviour", "sha256", "n_params", "loss_history"):
        assert key in meta, key
    assert meta["sha256"] == sha256(folder / WEIGHTS)
    assert len(meta["vocab"]) == meta["config"]["vocab_size"]
    assert set(load_file(str(folder / WEIGHTS))) == set(load(name).model.state_dict())


def test_calling_game_has_the_specified_shape(lm):
    cfg = lm.model.cfg
    assert (cfg.n_layers, cfg.n_heads, cfg.d_model, cfg.tied, cfg.vocab_size) == (2, 4, 64, True, 28)


def test_hand_wired_has_the_specified_shape_and_records_its_figures(hand_wired):
    lm = hand_wired
    cfg = lm.model.cfg
    assert (cfg.n_layers, cfg.n_heads, cfg.d_model) == (2, 2, 32)
    fig = lm.meta["behaviour"]
    for key in ("pca_top2_designed", "pca_top2_learned", "probes_read_back", "analogies_recovered", "king_man_woman"):
        assert key in fig
    assert 0 < fig["pca_top2_designed"] < 1 and 0 < fig["pca_top2_learned"] < 1
    assert 0 <= fig["probes_read_back"] <= 6 and 0 <= fig["analogies_recovered"] <= 5


def test_the_hand_wired_model_has_learned_its_corpus(hand_wired):
    """Part 2 tests what the hand-wired model recovered of its table; that only means something
    once it has learned the sentences themselves, to within 0.02 nats of the corpus's entropy."""
    from lib.analysis.corpus_fit import fit_summary
    from lib.shipped.behaviour import HAND_WIRED_MAX_GAP

    lm = hand_wired
    fit = fit_summary(lm)
    assert fit["entropy_floor"] < fit["expected_loss"] <= fit["entropy_floor"] + HAND_WIRED_MAX_GAP, fit
    recorded = lm.meta["behaviour"]["corpus_fit"]
    # Recorded on the machine that trained the model, recomputed here: computed in float64 (corpus_fit),
    # so two processors agree to about 1e-15; 1e-9 leaves room and still catches any change of weights
    # (a retrained model moves these figures by more than 1e-3).
    assert not figures_differ(fit, recorded, rel=1e-9), figures_differ(fit, recorded, rel=1e-9)
    assert fit["by_kind"]["class"]["learned"] == fit["by_kind"]["class"]["prefixes"]


def test_every_preset_is_measured_and_has_its_corpus():
    """A shipped model is one entry in each registry: its recipe (PRESETS), how it is measured
    (BEHAVIOUR), its corpus (CORPORA)."""
    from lib.content.corpora import CORPORA
    from lib.shipped.behaviour import BEHAVIOUR
    from lib.shipped.presets import PRESETS

    assert set(BEHAVIOUR) == set(PRESETS)
    assert {p.corpus for p in PRESETS.values()} <= set(CORPORA)
