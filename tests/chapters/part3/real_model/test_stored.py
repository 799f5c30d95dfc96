"""The real-model chapter (lib/chapters/part3/real_model): the results page kept in short stays within its
bound of the full softmax at every temperature the slider reaches, on every prompt of the menu; it reshapes
as the library does; the stored runs are SmolLM2's; the site's files stay small; a kernel runs any text; the
chapter's check. (The page's twins are held to these views in tests/browser/test_site_real_model.py.)

The menu's runs are the build's (`stored.menu_runs()`, kept on disk): computed once, not per test."""
import gzip
import json

import numpy as np
import pytest
import torch

from lib.chapters.part3.real_model import checks, stored
from lib.chapters.part3.real_model.explorers import real_heads_explorer, real_lens_explorer, real_page_explorer
from lib.chapters.part3.real_model.prompts import GROUPS, MENU
from lib.errors import CourseError
from lib.explorers.definition import TEMPERATURES
from lib.model.readout import reshape, softmax



@pytest.fixture(scope="module")
def runs():
    from lib.model import smollm2
    if smollm2.package_file() is None:
        pytest.skip(f"{smollm2.PACKAGE} is not installed (make install installs it)")
    return stored.menu_runs()


def test_the_menu_has_forty_prompts_in_groups_that_teach():
    assert len(MENU) >= 40 and len(set(MENU)) == len(MENU)
    assert set(GROUPS) == {"fact", "open", "made-up", "pattern", "code", "grammar"}
    assert all(len(prompts) >= 4 for prompts in GROUPS.values())


def test_the_summary_stays_within_the_bound_at_every_slider_temperature(runs):
    """Every kept probability and the rest's total, on every stored prompt, at all 401 stops of the slider
    (0.1 to 10): within 1e-3 of the full softmax of the same logits; and the approximation is really there."""
    assert len(TEMPERATURES) == 401 and TEMPERATURES[0] == 0.1 and TEMPERATURES[-1] == 10.0
    worst = stored.bound(runs, TEMPERATURES)
    assert 1e-9 < worst < stored.BOUND, worst


def test_the_summary_reshapes_as_the_library_does(runs):
    """Temperature, top-k and top-p on the summary against lib.model.readout.reshape on the whole page: every
    kept token's final probability within 1e-3, and the survivors counted alike when the cut falls among the
    kept tokens (beyond them, within 1%)."""
    rng = np.random.default_rng(0)
    worst, exact = 0.0, 0
    for r in runs[::3]:
        logits = torch.tensor(r.logits, dtype=torch.float64)
        order = torch.argsort(logits, descending=True, stable=True)[:stored.TOP]
        for _ in range(6):
            t = float(rng.choice(TEMPERATURES))
            top_k = rng.choice([None, int(rng.integers(1, 60)), int(rng.integers(100, 49_152))])
            top_p = rng.choice([None, float(rng.uniform(0.05, 0.99))])
            full = reshape(logits, t, top_k, top_p)
            final, rest, survivors = stored.reshaped(r.summary, t, top_k, top_p)
            worst = max(worst, float(np.abs(final - full[order].numpy()).max()),
                        abs(rest - float(full.sum() - full[order].sum())))
            true = int((full > 0).sum())
            if true < stored.TOP:
                assert survivors == true, (r.text, t, top_k, top_p)
                exact += 1
            else:
                assert abs(survivors - true) <= 0.01 * true, (r.text, t, top_k, top_p, survivors, true)
    assert worst < stored.BOUND and exact >= 10, (worst, exact)


def test_the_stored_runs_are_smollm2s(runs, smollm2_model):
    """Two prompts of the menu run again: the same tokens, the same logits, the lens's last stage is the
    model's own page, and every pattern within 1/510."""
    lm = smollm2_model
    for text in (MENU[0], GROUPS["pattern"][4]):
        r = stored.by_text()[text]
        again = stored.run(lm, text)
        assert r.tokens == again.tokens == tuple(lm.tokens(text))
        assert np.allclose(r.logits, again.logits, atol=1e-3)
        probs = softmax(torch.tensor(r.logits, dtype=torch.float64))
        best = [[t, float(p)] for t, p in zip(r.summary.tokens[:stored.LENS_TOP], probs.sort(descending=True).values)]
        assert [t for t, _ in r.lens[-1]["top"]] == [t for t, _ in best]
        assert np.allclose([p for _, p in r.lens[-1]["top"]], [p for _, p in best], atol=1e-5)
        with torch.no_grad():
            _, cache = lm.model.run_with_cache(lm.encode(text))
        exact = torch.stack([cache[f"blocks.{i}.attn.pattern"] for i in range(lm.cfg.n_layers)]).double().numpy()
        assert np.abs(r.patterns / stored.SCALE - exact).max() <= stored.PATTERN_TOLERANCE


def test_the_site_loads_a_prompt_in_a_few_kb(runs, tmp_path):
    """gzip-compressed as a host serves them: the index and one prompt's two files (what a page loads until
    the reader picks another prompt) under 60 kB; all the menu's files under 1.5 MB."""
    files = stored.export(tmp_path)
    size = {p.relative_to(tmp_path).as_posix(): len(gzip.compress(p.read_bytes(), 6)) for p in files}
    index = size.pop(f"real/{stored.NAME}.json")
    per_prompt = [size[f"real/{stored.NAME}/{i}.json"] + size[f"real/{stored.NAME}/{i}.bin"] for i in range(len(MENU))]
    assert index + max(per_prompt) < 60_000, (index, max(per_prompt))
    assert index + sum(per_prompt) < 1_500_000
    meta = json.loads((tmp_path / f"real/{stored.NAME}.json").read_text())
    assert [p["text"] for p in meta["prompts"]] == list(MENU)


def test_a_kernel_runs_any_text_and_the_menu_from_the_build(runs, smollm2_model):
    """A prompt of the menu is read from the build's runs; any other text runs the model (the website
    says where that runs instead: its page twin's message, tests/browser)."""
    page = real_page_explorer()
    view = page.compute(dict(page.defaults(), temperature=0.7, top_p="0.9", seed="3"))
    assert view["tokens"] == list(runs[0].tokens) and view["rows"][0]["token"] == " Paris"
    assert abs(sum(r["final"] for r in view["rows"]) + view["rest"]["final"] - 1) < 1e-3
    text = "The tallest mountain in the world is Mount"
    assert text not in MENU
    lens = real_lens_explorer().compute({"prompt": text})
    assert lens["answer"] == " Everest" and lens["stages"][-1]["top"][0][0] == " Everest"
    heads = real_heads_explorer().compute({"prompt": text, "layer": 3})
    assert np.allclose(np.sum(heads["patterns"], axis=-1), 1, atol=0.02)
    with pytest.raises(CourseError):
        page.compute(dict(page.defaults(), temperature=0.0))


def test_the_cooled_page_check(runs):
    x = np.asarray(stored.by_text()[checks.COOL_PROMPT].logits, dtype=np.float64)

    def top(t):
        z = np.exp((x - x.max()) / t)
        return float(z.max() / z.sum())
    assert checks.top_prob_cooled(top(0.5)) and checks.top_prob_cooled(top(0.5) - 0.015) and 0.6 < top(0.5) < 0.8
    # What a learner gets from the first table's ten lines alone, squared and shared out again.
    ten = np.sort(x)[::-1][:10]
    assert checks.top_prob_cooled(float(np.exp(2 * (ten - ten[0])).sum() ** -1))
    assert "temperature 1" in checks.top_prob_cooled(top(1.0)).message
    assert "divides" in checks.top_prob_cooled(top(2.0)).message
    assert not checks.top_prob_cooled(top(0.5) + 0.05)


# ----------------------------------------------------------------------------- decoding beyond one roll
@pytest.fixture(scope="module")
def decoded(runs):
    from lib.chapters.part3.real_model import decoding
    return decoding.runs()


def test_the_decoding_runs_are_the_models_and_their_measures_read_them_right(decoded, smollm2_model):
    """The build's five continuations: each method on every open prompt, the kept log-probabilities those the
    model gives the tokens (one continuation checked again in one pass), and the measures on known cases."""
    from lib.chapters.part3.real_model import decoding
    from lib.model.decoding import token_logprobs
    assert list(decoded) == list(decoding.METHODS)
    assert all([r["prompt"] for r in rows] == list(decoding.PROMPTS) for rows in decoded.values())
    row = decoded["sampled"][2]
    again = token_logprobs(smollm2_model.model, smollm2_model.encode(row["prompt"]), row["tokens"])
    assert np.allclose(again.numpy(), row["logprobs"], atol=1e-3)
    assert "".join(smollm2_model.vocab.decode(row["tokens"])) == row["text"]
    assert decoding.longest_repeat([1, 2, 3, 1, 2, 3, 1, 2, 3]) == 6 and decoding.longest_repeat([1, 2, 3]) == 0
    assert decoding.repeated_share([1, 2, 3, 4, 1, 2, 3, 4]) == pytest.approx(1 / 5)
    assert decoding.surprisal_bits([np.log(0.5)] * 3) == pytest.approx(1.0)


def test_the_shipped_decoding_runs_are_the_models(smollm2_model):
    """data/real-model/decoding.json, which the build reads instead of decoding again (about 50 s of processor
    time): made under this key (the model's file and the settings), and its first two prompts decoded again by
    every method give the same tokens and, to 1e-4, the same log-probabilities."""
    from lib.chapters.part3.real_model import decoding
    data = json.loads(decoding.shipped_path().read_text())
    assert data["key"] == decoding.key(), ("the shipped decoding runs were made under other settings or from another "
                                           "model file: run `python -m lib.chapters.part3.real_model.decoding`")
    assert decoding.runs() is not None and decoding.on_disk()
    again = decoding.run(smollm2_model, decoding.PROMPTS[:2])
    for method in decoding.METHODS:
        for kept, now in zip(data["runs"][method], again[method]):
            assert kept["prompt"] == now["prompt"] and kept["pieces"] == now["pieces"], method
            assert kept["tokens"] == now["tokens"], method
            assert np.allclose(kept["logprobs"], now["logprobs"], atol=1e-4), method


def test_min_p_and_top_p_counts_agree_with_the_librarys_cuts(runs):
    from lib.chapters.part3.real_model import decoding
    from lib.model.decoding import min_p_processor
    from lib.model.readout import truncation_mask
    for r in runs[::8]:
        logits = torch.tensor(r.logits, dtype=torch.float64)
        for t in (1.0, 1.5):
            by_min_p, by_top_p = decoding.kept_counts(r.logits, t, 0.1, 0.9)
            assert by_min_p == int((~torch.isneginf(min_p_processor(0.1, t)([], logits))).sum())
            assert abs(by_top_p - int(truncation_mask(softmax(logits, t), top_p=0.9).sum())) <= 1


def test_the_whole_sequence_check(decoded):
    pieces = checks.sequence_probabilities()
    assert [t for t, _ in pieces] == decoded["greedy"][0]["pieces"][:4]
    p = np.array([q for _, q in pieces])
    logp = float(np.sum(np.log(p)))
    assert checks.sequence_logprob(logp) and checks.sequence_logprob(logp + 0.02)
    # from the page's four printed numbers, rounded to four decimals
    assert checks.sequence_logprob(float(np.sum(np.log([round(q, 4) for q in p]))))
    assert "itself" in checks.sequence_logprob(float(np.prod(p))).message
    assert "base 2" in checks.sequence_logprob(float(np.sum(np.log2(p)))).message
    assert "mean" in checks.sequence_logprob(float(np.mean(np.log(p)))).message
    assert not checks.sequence_logprob(logp - 0.1) and not checks.sequence_logprob("a lot")


def test_the_decoding_explorer_shows_the_builds_continuations_and_their_measures(decoded, tmp_path, smollm2_model):
    """On the menu's open prompts the view is the build's continuation (the site's file holds the same views);
    any other text is continued now, as the build continues the menu's (here: the sample at temperature 1)."""
    from lib.chapters.part3.real_model import decoding
    from lib.chapters.part3.real_model.explorers import real_decode_explorer
    from lib.model.decoding import find_loop
    ex = real_decode_explorer()
    site = json.loads(decoding.export(tmp_path)[0].read_text())
    assert [p["text"] for p in site["prompts"]] == list(decoding.PROMPTS) and site["methods"] == list(decoding.METHODS)
    for method in decoding.METHODS:
        for i in (0, 8):
            prompt, row = decoding.PROMPTS[i], decoded[method][i]
            v = ex.compute({"prompt": prompt, "method": method})
            assert v == site["prompts"][i]["views"][method]
            assert v["pieces"] == row["pieces"] and v["length"] == len(row["tokens"]) <= v["most"]
            assert abs(v["logprob"] - sum(row["logprobs"])) < 1e-4 and all(0 < p <= 1 for p in v["probs"])
            assert v["longest_repeat"] == decoding.longest_repeat(row["tokens"])
            assert (v["loop"] is None) == (find_loop(row["tokens"]) is None)
    with pytest.raises(CourseError, match="the decoding method must be one of greedy"):
        ex.compute({"prompt": decoding.PROMPTS[0], "method": "nucleus"})
    # What a kernel does with a text of its own (continued alone, now) gives the build's batched continuation.
    from lib.chapters.part3.real_model.explorers import _live_decoded
    live, built = _live_decoded(decoding.PROMPTS[8], "sampled"), site["prompts"][8]["views"]["sampled"]
    assert live["pieces"] == built["pieces"] and live["tokens"] == built["tokens"]
    assert np.allclose(live["probs"], built["probs"], atol=2e-4) and abs(live["logprob"] - built["logprob"]) < 1e-3
