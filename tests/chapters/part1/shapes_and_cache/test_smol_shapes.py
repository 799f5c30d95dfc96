"""SmolLM2's shapes read from its file's header (lib/chapters/part1/shapes_and_cache/smol_shapes.py)."""
from lib.analysis.inventory import parameter_count
from lib.chapters.part1.shapes_and_cache import smol_shapes
from lib.model.generate import generate


def test_smollm2_from_its_file_header_is_the_loaded_model(smollm2_model):
    """The page's SmolLM2 column comes from the file's header alone; it must count the loaded model's parameters
    and predict the bytes its KV cache really holds after a generation."""
    arch = smol_shapes.architecture()
    assert parameter_count(arch) == smollm2_model.model.n_params() == smol_shapes.numbers()["file_params"]
    ids = smollm2_model.encode("The cache keeps keys and values")
    run = generate(smollm2_model.model, ids, 3, use_cache=True)
    assert run.kv_bytes == smol_shapes.kv_per_token(arch) * (len(run.tokens) - 1)
    n = smol_shapes.numbers()
    assert n["per_token_full"] == n["group"] * n["per_token"] and n["group"] == 3
