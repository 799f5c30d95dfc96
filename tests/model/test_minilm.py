"""The course's MiniLM (lib.model.minilm, lib.model.wordpiece) against Hugging Face's own BERT.

The reference is `transformers` (a test dependency only): BertModel with eager attention reads the
same package folder, and both of its BERT tokenizers (the Rust one and the legacy Python one) cut
the same texts. The sentences are none the course shows: accents, punctuation, numbers, unknown
and over-long words, CJK, control characters, a written [MASK], and a text of 64+ tokens.
Tolerances. The math is compared in float64, where rounding is out of the way: every hidden state
and attention pattern within 1e-9. As shipped, in float32, the two implementations sum in different
orders (per head here, fused there), and six post-LN layers carry the rounding along: patterns within
1e-5 (2e-6 measured on the machine this was written on) and hidden states within 3e-5 (7.7e-6
measured), room for another x86-64 processor's kernels.
"""
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")      # the reference reads the package's folder, never the network

from lib.errors import CourseError  # noqa: E402
from lib.model import minilm  # noqa: E402

if minilm.package_dir() is None:
    pytest.skip(f"{minilm.PACKAGE} is not installed (make install installs it)", allow_module_level=True)
transformers = pytest.importorskip("transformers", reason="the reference implementation (requirements-test.txt)")

TOL = 1e-5                # float32: patterns, and anything not carried through the layers
TOL_STATES = 3e-5         # float32: hidden states after up to six layers
TOL_FLOAT64 = 1e-9

UNSEEN = [
    "Zoë's café in Zürich served crème brûlée; naïve tourists paid €12.50 (cash-only!).",
    "In 1987, 3,214 voters—roughly 41.6%—chose option #2 at 09:45 a.m.",
    "Flibbertigibbet quokkas snorfled the grumblewhisk, didn't they?",
    "ÀÉÎÕÜ façade ǅungla Ωmega straße İstanbul ﬁnance",
    "Tokyo 東京 and Beijing 北京市 are big; 서울 too. Привет, мир!",
    "tabs\tand\nnewlines\r\nand  double  spaces\u00a0and a zero\u200bwidth joiner",
    "The word " + "x" * 101 + " is longer than a hundred characters, and so is unknown.",
    "Fill the gap: the [MASK] was cold, said [SEP] nobody.",
    "emoji 😀 and symbols ~ ^ ` | \\ < > = + @ and ¿qué? ¡sí!",
    # 64 tokens and more, [CLS] and [SEP] included
    "Although the committee reviewed forty-three separate proposals over the course of eleven weeks, "
    "none of the submissions adequately addressed the structural concerns raised by independent "
    "engineers, who repeatedly warned that the bridge's northern supports were deteriorating faster "
    "than anticipated; consequently, the council postponed its decision until spring, when a second, "
    "cheaper survey was promised.",
]


@pytest.fixture(scope="module")
def lm(minilm_model):
    """The session's MiniLM (tests/conftest.py), under this file's name for it."""
    return minilm_model


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Both models on one thread, as the library runs MiniLM: on a busy 2-core machine a second thread waits."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def reference(lm):
    from transformers import BertModel, BertTokenizer
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy
    folder = str(lm.folder)
    model = BertModel.from_pretrained(folder, attn_implementation="eager").eval()
    return model, BertTokenizer.from_pretrained(folder), BertTokenizerLegacy.from_pretrained(folder)


@pytest.fixture(scope="module")
def hf_runs(lm, reference):
    """For each unseen sentence: our ids, our cache, and Hugging Face's hidden states and attentions."""
    model = reference[0]
    out = []
    for text in UNSEEN:
        ids = lm.encode(text)
        _, cache = lm.run_with_cache(ids)
        with torch.no_grad():
            r = model(torch.tensor([ids]), output_hidden_states=True, output_attentions=True)
        out.append((text, ids, cache, r))
    return out


@pytest.mark.parametrize("which", ["rust", "legacy"])
def test_tokens_are_those_of_both_hugging_face_tokenizers(lm, reference, which):
    tok = reference[1] if which == "rust" else reference[2]
    for text in UNSEEN:
        theirs = tok(text)["input_ids"]
        ours = lm.encode(text)
        assert ours == theirs, (f"{text!r}:\n ours   {lm.tokenizer.decode(ours)}\n theirs "
                                f"{tok.convert_ids_to_tokens(theirs)}")


def test_the_unseen_set_covers_what_it_claims(lm):
    tokens = [lm.tokens(t) for t in UNSEEN]
    flat = [t for ts in tokens for t in ts]
    assert "[UNK]" in flat and any(t.startswith("##") for t in flat) and "[MASK]" in flat
    assert "cafe" in tokens[0], "accents are stripped"
    assert max(map(len, tokens)) >= 64


def _compare(lm, text, cache, r, tol_states, tol_patterns):
    assert len(r.hidden_states) == lm.cfg.n_layers + 1
    worst = (cache["blocks.0.resid_pre"] - r.hidden_states[0][0]).abs().max().item()
    assert worst < tol_states, f"{text!r}: the normalised embedding differs by {worst:.2e}"
    for L in range(lm.cfg.n_layers):
        d = (cache[f"blocks.{L}.resid_post"] - r.hidden_states[L + 1][0]).abs().max().item()
        assert d < tol_states, f"{text!r}: layer {L}'s output differs from BertModel's by {d:.2e}"
        d = (cache[f"blocks.{L}.attn.pattern"] - r.attentions[L][0]).abs().max().item()
        assert d < tol_patterns, f"{text!r}: layer {L}'s attention patterns differ from BertModel's by {d:.2e}"


def test_hidden_states_and_patterns_match_bert_in_float32(lm, hf_runs):
    for text, ids, cache, r in hf_runs:
        _compare(lm, text, cache, r, TOL_STATES, TOL)


def test_the_math_matches_bert_in_float64(lm, reference):
    import copy
    ours, theirs = copy.deepcopy(lm.model).double(), copy.deepcopy(reference[0]).double()
    for text in UNSEEN[::3]:
        ids = lm.encode(text)
        cache = minilm.ActivationCache()
        with torch.no_grad():
            ours(ids, cache=cache)
            r = theirs(torch.tensor([ids]), output_hidden_states=True, output_attentions=True)
        _compare(lm, text, cache, r, TOL_FLOAT64, TOL_FLOAT64)


def test_a_padded_batch_matches_bert_with_its_attention_mask(lm, reference):
    model = reference[0]
    texts = UNSEEN[:4]
    ids, real = lm.batch(texts)
    cache = minilm.ActivationCache()
    with torch.no_grad():
        ours = lm.model(ids, real=real, cache=cache)
        r = model(ids, attention_mask=real.long(), output_attentions=True)
    for i in range(len(texts)):
        n = int(real[i].sum())
        d = (ours[i, :n] - r.last_hidden_state[i, :n]).abs().max().item()
        assert d < TOL_STATES, f"sentence {i} in a padded batch differs by {d:.2e}"
        for L in range(lm.cfg.n_layers):
            pattern = cache[f"blocks.{L}.attn.pattern"][i]
            assert bool((pattern[:, :, n:] == 0).all()), "a padded key got attention"
            assert (pattern[:, :n, :n] - r.attentions[L][i, :, :n, :n]).abs().max().item() < TOL
        # Padding changes nothing for the real tokens: the sentence alone gives the same vectors.
        alone = lm.run_with_hooks(ids[i, :n], {})
        assert (alone - ours[i, :n]).abs().max().item() < TOL_STATES


def test_the_cache_adds_up(lm, hf_runs):
    """Shapes, rows summing to 1, the heads' writes summing to the layer's, and post-LN."""
    _, ids, cache, _ = hf_runs[0]
    T, H, D, Dh = len(ids), lm.cfg.n_heads, lm.cfg.d_model, lm.cfg.d_head
    assert cache["blocks.3.attn.pattern"].shape == (H, T, T)
    assert cache["blocks.3.attn.q"].shape == (T, H, Dh)
    assert cache["blocks.3.attn.head_out"].shape == (T, H, D)
    for L in range(lm.cfg.n_layers):
        rows = cache[f"blocks.{L}.attn.pattern"].sum(-1)
        assert (rows - 1).abs().max().item() < 1e-5
        block = lm.model.blocks[L]
        summed = cache[f"blocks.{L}.attn.head_out"].sum(1) + block.attn.b_O
        assert (summed - cache[f"blocks.{L}.attn_out"]).abs().max().item() < 1e-5
        mid = block.ln1(cache[f"blocks.{L}.resid_pre"] + cache[f"blocks.{L}.attn_out"])
        assert (mid - cache[f"blocks.{L}.resid_mid"]).abs().max().item() < 1e-5
    assert torch.equal(cache["resid_final"], cache["blocks.5.resid_post"])


def test_hooks_replace_what_they_name(lm, hf_runs):
    _, ids, cache, _ = hf_runs[1]
    same = lm.run_with_hooks(ids, {"blocks.2.attn.head_out": lambda x: x})
    assert torch.equal(same, cache["resid_final"])
    means = {2: torch.zeros(lm.cfg.n_heads, lm.cfg.d_model)}
    _, ablated = lm.run_with_cache(ids, hooks=minilm.mean_ablation_hooks([(2, 5)], means))
    assert bool((ablated["blocks.2.attn.head_out"][:, 5] == 0).all())
    assert torch.equal(ablated["blocks.2.attn.head_out"][:, 4], cache["blocks.2.attn.head_out"][:, 4])
    assert torch.equal(ablated["blocks.1.resid_post"], cache["blocks.1.resid_post"])
    assert not torch.equal(ablated["blocks.3.resid_post"], cache["blocks.3.resid_post"])
    with pytest.raises(CourseError, match="shape"):
        lm.run_with_hooks(ids, {"blocks.0.attn_out": lambda x: x[:, :1]})


def test_sentence_vector_is_the_sentence_transformers_embedding(lm, hf_runs):
    # sentence-transformers' all-MiniLM-L6-v2: mean over the tokens of the last layer, then length 1.
    text, _, _, r = hf_runs[2]
    theirs = torch.nn.functional.normalize(r.last_hidden_state[0].mean(0), dim=-1)
    assert (lm.sentence_vector(text) - theirs).abs().max().item() < TOL


@pytest.mark.parametrize("text, message", [
    ("", "empty"), ("   \n\t ", "empty"), ("\u200b\x07", "no tokens"),
    ("word " * 600, "at most 512"),
])
def test_bad_text_is_one_clear_error(lm, text, message):
    with pytest.raises(CourseError, match=message):
        lm.encode(text)


def test_a_damaged_model_folder_is_one_clear_error(lm, tmp_path):
    import shutil
    for name in (minilm.CONFIG, minilm.VOCAB):
        shutil.copy(lm.folder / name, tmp_path / name)
    (tmp_path / minilm.WEIGHTS).write_bytes((lm.folder / minilm.WEIGHTS).read_bytes()[:1000])
    with pytest.raises(CourseError, match="damaged"):
        minilm.load(tmp_path)
    (tmp_path / minilm.WEIGHTS).unlink()
    with pytest.raises(CourseError, match="lacks model.safetensors"):
        minilm.load(tmp_path)
