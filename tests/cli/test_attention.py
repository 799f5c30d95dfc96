"""`python -m lib attention MODEL "TEXT" [--json]`, run in this process (the run_in_process fixture).

The shipped toy models take their prompts as tokens separated by spaces; `minilm` takes any text.
The JSON's patterns are indexed [layer][head][query][key] and must equal the library's cache.
"""
import json

import pytest
import torch

from lib.model import minilm
from lib.model.store import load, shipped_names

needs_minilm = pytest.mark.skipif(minilm.package_dir() is None, reason=f"{minilm.PACKAGE} is not installed")


@pytest.mark.parametrize("model", ["calling-game", "hand-wired", "zero-layer"])
def test_json_patterns_of_a_shipped_model_are_its_cache(run_in_process, model):
    assert model in shipped_names()
    lm = load(model)
    prompt = " ".join(["<BOS>"] + lm.vocab.tokens[4:7])      # each model's own words
    code, out, err = run_in_process("attention", model, prompt, "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["model"] == model and got["tokens"] == prompt.split()
    _, cache = lm.model.run_with_cache(lm.encode(prompt))
    n_layers, n_heads = lm.model.cfg.n_layers, lm.model.cfg.n_heads
    assert len(got["patterns"]) == n_layers
    for L in range(n_layers):
        assert len(got["patterns"][L]) == n_heads
        assert torch.allclose(torch.tensor(got["patterns"][L]), cache[f"blocks.{L}.attn.pattern"], atol=1e-7)


@needs_minilm
def test_minilm_json_has_wordpiece_tokens_and_every_pattern(run_in_process, minilm_model):
    text = "Ingrid's kayak capsized near Reykjavík; luckily, she swam ashore."
    code, out, err = run_in_process("attention", "minilm", text, "--json")
    assert code == 0, err
    got = json.loads(out)
    lm = minilm_model
    tokens, patterns = lm.patterns(text)
    assert got["model"] == "minilm" and got["tokens"] == tokens
    assert got["tokens"][0] == "[CLS]" and got["tokens"][-1] == "[SEP]" and "reykjavik" in "".join(tokens)
    p = torch.tensor(got["patterns"])
    T = len(tokens)
    assert p.shape == (6, 12, T, T)
    assert torch.allclose(p, patterns, atol=1e-7)
    assert torch.allclose(p.sum(-1), torch.ones(6, 12, T), atol=1e-5)


@needs_minilm
def test_minilm_takes_texts_up_to_the_stated_limit(run_in_process):
    from lib.cli.commands import ATTENTION_MAX_TOKENS
    code, out, err = run_in_process("attention", "minilm", "word " * (ATTENTION_MAX_TOKENS - 2))
    assert code == 0, err
    assert len(out.splitlines()[0].split()) == 1 + ATTENTION_MAX_TOKENS     # "minilm:" and the tokens


@needs_minilm
def test_the_text_form_names_each_query_s_strongest_key(run_in_process):
    code, out, err = run_in_process("attention", "minilm", "Rain fell.")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "minilm: [CLS] rain fell . [SEP]"
    assert len(lines) == 2 + 6 * 12 and lines[2].startswith("L0 H0 ")


def test_the_text_form_of_a_toy_model(run_in_process):
    code, out, err = run_in_process("attention", "calling-game", "<BOS> Pietro chiama")
    assert code == 0, err
    assert out.splitlines()[0] == "calling-game: <BOS> Pietro chiama"


@pytest.mark.parametrize("args, says", [
    (("gpt-5", "hello"), "unknown model 'gpt-5'; shipped models: "),
    (("minilm", ""), "the text is empty"),
    (("minilm", " \t "), "the text is empty"),
    (("minilm", "word " * 127), "129 WordPiece tokens long with [CLS] and [SEP], but `attention minilm` takes at most 128"),
    (("minilm", "word " * 600), "602 WordPiece tokens long"),
    (("calling-game", ""), "the prompt is empty"),
    (("calling-game", "<BOS> " + "Pietro " * 200), "reads at most"),
    (("calling-game", "<BOS> xylophone"), "unknown token 'xylophone'"),
    (("calling-game",), "the following arguments are required: text"),
])
def test_bad_input_is_one_clear_line(run_in_process, args, says):
    if args[0] == "minilm" and minilm.package_dir() is None:
        pytest.skip(f"{minilm.PACKAGE} is not installed")
    code, out, err = run_in_process("attention", *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and says in err, err
    if args[0] == "gpt-5" and minilm.package_dir() is not None:
        assert "minilm" in err and "calling-game" in err
