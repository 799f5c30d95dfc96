"""`python -m lib ... smollm2 ...`: the real next-token model on the command line, with the toys' JSON.

Tokens are text, a leading space kept ("The", " capital"); every figure equals the library's
(lib.model.smollm2, the session's model) within float32 printing (1e-6). One run in a process of its
own (predict, as a reader runs it); the others in this process, where the model is already loaded.
"""
import json

import pytest
import torch

from lib.analysis.lens import logit_lens
from lib.cli.commands import SMOLLM2_ATTENTION_MAX_TOKENS, SMOLLM2_PATCH_MAX_TOKENS
from lib.model import smollm2
from lib.model.readout import sample

pytestmark = pytest.mark.skipif(smollm2.package_file() is None, reason=f"{smollm2.PACKAGE} is not installed")

TEXT = "Grandma's 3 cats nap\non the windowsill, and the dog"


def test_predict_json_in_a_process_of_its_own(run_process, smollm2_model):
    r = run_process("predict", "smollm2", TEXT, "--json", "--top-k", "5", "--temperature", "0.7", "--seed", "11",
                    check=True)
    got = json.loads(r.stdout)
    lm = smollm2_model
    ids = lm.encode(TEXT)
    assert got["model"] == "smollm2" and got["temperature"] == 0.7 and got["seed"] == 11
    assert got["prompt"] == lm.vocab.decode(ids) and got["prompt"][:4] == ["Grand", "ma", "'s", " "]
    assert "".join(got["prompt"]) == TEXT
    logits = lm.model(ids)[-1]
    probs = (logits.double() / 0.7).softmax(-1)
    top = probs.topk(5)
    assert [n["token"] for n in got["next"]] == lm.vocab.decode(top.indices)
    kept = probs[top.indices] / probs[top.indices].sum()
    assert all(abs(n["prob"] - float(p)) < 1e-6 for n, p in zip(got["next"], kept))
    assert got["sampled"] == lm.vocab.tokens[sample(logits, 0.7, 5, None, seed=11)]


def test_lens_json_is_the_library_s_lens(run_in_process, smollm2_model):
    code, out, err = run_in_process("lens", "smollm2", TEXT, "--json", "--top", "3")
    assert code == 0, err
    got = json.loads(out)
    stages = logit_lens(smollm2_model.model, smollm2_model.encode(TEXT))
    assert [s["name"] for s in got["stages"]] == [s.name for s in stages] and len(stages) == 61
    for ours, theirs in zip(got["stages"], stages):
        top = theirs.probs.topk(3)
        assert [t["token"] for t in ours["top"]] == smollm2_model.vocab.decode(top.indices)
        assert all(abs(t["prob"] - float(p)) < 1e-6 for t, p in zip(ours["top"], top.values))


def test_attention_json_is_the_cache(run_in_process, smollm2_model):
    code, out, err = run_in_process("attention", "smollm2", TEXT, "--json")
    assert code == 0, err
    got = json.loads(out)
    ids = smollm2_model.encode(TEXT)
    _, cache = smollm2_model.model.run_with_cache(ids)
    p = torch.tensor(got["patterns"])
    assert got["tokens"] == smollm2_model.vocab.decode(ids) and p.shape == (30, 9, len(ids), len(ids))
    assert torch.allclose(p, torch.stack([cache[f"blocks.{L}.attn.pattern"] for L in range(30)]), atol=1e-6)


def test_patch_json_has_every_head_mlp_and_stage(run_in_process):
    code, out, err = run_in_process("patch", "smollm2", "Paris is", "Rome is", "--target", " France",
                                    "--against", " Italy", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["clean"] == ["Paris", " is"] and got["target"] == " France" and got["against"] == " Italy"
    assert got["clean_diff"] > got["corrupted_diff"] + 1     # " France" gains on " Italy" after Paris
    assert len(got["heads"]) == 30 * 9 * 2 and len(got["mlps"]) == 30 * 2 and len(got["resid"]) == 31 * 2
    # The whole residual stream patched at the position where the prompts differ brings everything back;
    # at " is", the same token in both, nothing (to float32 rounding: SmolLM2 is patched in float32).
    first = {(c["stage"], c["position"]): c["recovered"] for c in got["resid"]}
    assert abs(first[("blocks.0.resid_pre", 0)] - 1) < 1e-4 and abs(first[("blocks.0.resid_pre", 1)]) < 1e-4


def test_generate_and_predict_take_min_p_and_the_penalty(run_in_process, smollm2_model):
    from lib.model.generate import generate
    lm = smollm2_model
    ids = lm.encode(TEXT)
    code, out, err = run_in_process("generate", "smollm2", TEXT, "--tokens", "6", "--repetition-penalty", "1.3",
                                    "--json")
    assert code == 0, err
    got = json.loads(out)
    want = generate(lm.model, ids, 6, repetition_penalty=1.3, stop=[lm.vocab.id("<|im_end|>")])
    assert got["tokens"] == lm.vocab.decode(want.new_tokens) and got["text"] == "".join(got["tokens"])
    code, out, err = run_in_process("predict", "smollm2", TEXT, "--min-p", "0.1", "--json")
    assert code == 0, err
    probs = lm.model(ids)[-1].double().softmax(-1)
    kept = probs[probs >= 0.1 * probs.max()]
    got = json.loads(out)
    assert len(got["next"]) == len(kept) and abs(got["next"][0]["prob"] - float(kept.max() / kept.sum())) < 1e-6


def test_models_lists_it(run_in_process):
    code, out, err = run_in_process("models")
    assert code == 0, err
    line = [row for row in out.splitlines() if row.startswith("smollm2")]
    assert len(line) == 1 and "30 layers, 9 heads sharing 3 key/value heads" in line[0] and "134,515,008" in line[0]


@pytest.mark.parametrize("args, says", [
    (("predict", "smollm2", ""), "the prompt is empty"),
    (("lens", "smollm2", "7" * 1025), "1,025 tokens long, but smollm2 is run here on at most 1,024"),
    (("attention", "smollm2", "word " * SMOLLM2_ATTENTION_MAX_TOKENS + "word"),
     f"at most {SMOLLM2_ATTENTION_MAX_TOKENS}"),
    (("patch", "smollm2", "one two three four five six seven eight nine", "a b c d e f g h i"),
     f"at most {SMOLLM2_PATCH_MAX_TOKENS}"),
    (("predict", "smollm2", "Hi", "--seed", "-1"), "a seed must be a whole number"),
    (("patch", "smollm2", "Paris is", "Rome is", "--target", "Paris France"), "not one token"),
    (("check", "smollm2"), "read from its package, not trained or checked here"),
    (("predict", "smollm2", "caf\udce9"), "not valid UTF-8 text: the byte 0xE9 after 'caf'"),
    (("generate", "smollm2", "a\x04b"), "cannot write '\\x04' (U+0004): its byte 0x04 is no token"),
    (("predict", "smollm2", "x\U00040000"), "(U+40000): its byte 0xF1 is no token"),
    (("predict", "minilm", "Hi"), "predicts no next token"),
    (("predict", "gpt-2", "Hi"), "real models: smollm2"),
])
def test_bad_input_is_one_line(run_in_process, args, says):
    code, out, err = run_in_process(*args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and says in err, err


def test_predict_json_lists_the_top_entries_unless_asked_for_all(run_in_process):
    code, out, err = run_in_process("predict", "smollm2", "The capital of France is", "--json")
    got = json.loads(out)
    assert code == 0 and len(got["next"]) == 100 and got["left_out"] == 49_152 - 100, err
    code, out, err = run_in_process("predict", "smollm2", "The capital of France is", "--json", "--all")
    got = json.loads(out)
    assert len(got["next"]) == 49_152 and "left_out" not in got
    assert abs(sum(n["prob"] for n in got["next"]) - 1) < 1e-6


def test_generated_text_is_decoded_from_the_bytes(run_in_process, smollm2_model):
    """A character split over tokens comes out whole (the issue's "、�����" was "、アニ" and one cut character),
    its fragments shown as bytes; a character the token limit cut shows its bytes, never a replacement mark."""
    code, out, err = run_in_process("generate", "smollm2", "日本の首都は", "--tokens", "6", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert "\ufffd" not in got["text"] and "\ufffd" not in "".join(got["tokens"] + got["prompt"])
    assert got["text"].startswith("、アニ")
    ids = [smollm2_model.vocab.id(t) for t in got["tokens"]]
    assert got["text"] == smollm2_model.vocab.to_text(ids)
    assert any(t.startswith("<0x") for t in got["tokens"])           # fragments of a character, as bytes
