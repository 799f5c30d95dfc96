"""The inventory (lib.analysis.inventory): parameter counts against the published figures and the shipped
models, activation shapes against the forward pass, the KV cache's size against the note and a run, and the
weight tables that add up to the counts."""
import pytest

from lib.analysis.inventory import (GPT2_SMALL, SEVEN_B, activations, from_config, kv_cache_bytes, parameter_count,
                                    twelve_L_d2, weights_table)
from lib.errors import CourseError
from lib.model.store import load, shipped_names


def test_parameter_counts_match_the_published_figures_and_the_models():
    assert parameter_count(GPT2_SMALL) == 124_439_808
    assert parameter_count(SEVEN_B) == 6_738_415_616
    for name in shipped_names():
        m = load(name).model
        assert parameter_count(from_config(name, m.cfg)) == m.n_params(), name
    assert twelve_L_d2(GPT2_SMALL) == 12 * 12 * 768 ** 2

def test_activation_shapes_follow_the_forward_pass(lm):
    rows = {r.name: r.shape for r in activations(from_config("cg", lm.model.cfg), 4)}
    _, cache = lm.model.run_with_cache(lm.encode("<BOS> Pietro chiama Paolo"))
    assert rows["attention pattern (after mask and softmax)"] == tuple(cache["blocks.0.attn.pattern"].shape)
    assert rows["logits"] == tuple(cache["logits"].shape)

def test_kv_cache_formula_matches_the_note_and_the_model(lm):
    assert kv_cache_bytes(32, 32768, 32, 128, 2) == 17_179_869_184
    from lib.model.generate import generate
    run = generate(lm.model, lm.encode("<BOS> Pietro chiama"), 5)
    cfg = lm.model.cfg
    assert run.kv_bytes == kv_cache_bytes(cfg.n_layers, len(run.tokens) - 1, cfg.n_heads, cfg.d_head, 4)
    for bad in ((0, 1, 1, 1, 2), (1, 1.5, 1, 1, 2), (1, 1, 1, 1, 0), (1, 1, 1, 1, "2")):
        with pytest.raises(CourseError):
            kv_cache_bytes(*bad)

def test_every_weight_table_adds_up(lm):
    archs = [from_config("cg", lm.model.cfg), GPT2_SMALL, SEVEN_B]
    table = weights_table(archs)
    assert [sum(r.totals[i] for r in table) for i in range(3)] == [parameter_count(a) for a in archs]
    rows = {r.name: r for r in table}
    assert rows["unembedding W_U"].totals == (0, 0, 131_072_000)
    assert rows["MLP W_gate"].totals[2] == 32 * 4096 * 11008
    assert rows["norm before attention: bias"].cells[2] is None, "RMSNorm has no bias"
    names = [r.name for r in table]
    assert names.index("W_Q") < names.index("MLP W_in") < names.index("unembedding W_U")


def test_the_smollm2_row_is_counted_from_its_file():
    """The scale table's SmolLM2 row: every count from the GGUF file's tensor shapes and metadata. It agrees
    with the count from the published configuration, and a changed file would change it (its sizes are read,
    not copied)."""
    import dataclasses

    from lib.analysis.inventory import file_model_facts, model_facts, published_architecture
    from lib.chapters.part3.scale.claims import SMOLLM2, model_rows
    from lib.content.real_models import by_name
    from lib.errors import CourseError
    from lib.model import smollm2
    if smollm2.package_file() is None:
        pytest.skip(f"{smollm2.PACKAGE} is not installed (make install installs it)")
    facts = smollm2.file_facts()
    row = model_rows()[SMOLLM2]
    assert row.source == "its weights file" and row.parameters == facts.parameters == 134_515_008
    published = model_facts(published_architecture(by_name(SMOLLM2)))
    for field in ("unembed_params", "kv_bytes_per_token", "tied", "bias", "norm", "kv_heads", "heads", "vocab",
                  "d_model", "layers"):
        assert getattr(row, field) == getattr(published, field), field
    assert row.unembed_share == pytest.approx(published.unembed_share, abs=1e-9)
    assert row.unembed_compute_share == pytest.approx(published.unembed_compute_share, abs=1e-9)
    # an untied file with one layer fewer: the counts follow the shapes
    shapes = {n: s for n, s in facts.shapes.items() if not n.startswith("blk.29.")}
    shapes["output.weight"] = shapes["token_embd.weight"]
    other = file_model_facts("edited", dataclasses.replace(facts, shapes=shapes))
    assert not other.tied and other.parameters == row.parameters - sum(
        n for name, n in facts.numbers.items() if name.startswith("blk.29.")) + row.unembed_params
    broken = dict(facts.shapes, **{"token_embd.weight": (10, 576)})
    with pytest.raises(CourseError, match="disagrees with the metadata"):
        file_model_facts("broken", dataclasses.replace(facts, shapes=broken))
