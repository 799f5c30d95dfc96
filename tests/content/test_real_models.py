"""Real models' published configurations (`lib.content.real_models`) and the facts computed from them
(`lib.analysis.inventory.real_model_rows`): every parameter count within 1% of its published total."""
import pytest

from lib.analysis.inventory import from_config, model_facts, parameter_count, published_architecture, real_model_rows
from lib.content.real_models import REAL_MODELS, by_name
from lib.errors import CourseError


@pytest.mark.parametrize("config", REAL_MODELS, ids=lambda c: c.name)
def test_parameter_count_matches_the_published_total(config):
    counted = parameter_count(published_architecture(config))
    assert counted == pytest.approx(config.published_total, rel=0.01)


def test_exact_counts_that_hugging_face_reports():
    # the sums of every tensor of the released checkpoints (buffers such as GPT-2's causal masks left out)
    exact = {"GPT-2 small": 124_439_808, "GPT-2 XL": 1_557_611_200, "Llama-2-7B": 6_738_415_616,
             "Llama-3-8B": 8_030_261_248, "SmolLM2-135M": 134_515_008}
    for name, n in exact.items():
        assert parameter_count(published_architecture(by_name(name))) == n


def test_the_toy_is_counted_like_torch_counts_it(lm):
    facts = model_facts(from_config("calling game", lm.model.cfg))
    assert facts.parameters == sum(p.numel() for p in lm.model.parameters())


def test_unembedding_shares_and_kv_cache():
    rows = {r.name: r for r in real_model_rows()}
    assert rows["GPT-2 small"].unembed_share == pytest.approx(0.310, abs=0.001)
    assert rows["GPT-3 175B"].unembed_share == pytest.approx(0.0035, abs=0.0001)
    assert rows["GPT-2 small"].unembed_compute_share == pytest.approx(0.31, abs=0.01)
    kib = {n: r.kv_bytes_per_token / 1024 for n, r in rows.items()}
    assert kib["GPT-2 small"] == 36 and kib["Llama-2-7B"] == 512 and kib["Llama-3-8B"] == 128
    assert rows["Llama-3-8B"].kv_heads == 8 and not rows["Llama-2-7B"].tied and rows["Llama-2-7B"].norm == "rmsnorm"


def test_unknown_model_one_line():
    with pytest.raises(CourseError, match="no published configuration named 'GPT-4'"):
        by_name("GPT-4")
