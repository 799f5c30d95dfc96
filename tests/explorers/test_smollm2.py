"""SmolLM2 in the page, held to the library in Node (the fast tier): the modules as the site serves them, the
model's file as the build splits it, on texts no chapter uses (some made from a seed, new each run).

What is compared, and how closely (the page computes in float32, as the library does, in another order):
- tokens: identical ids, and the same text shown for each token, on held-out texts (non-ASCII, digits, code,
  emoji, tabs, a chat-template text) and on texts drawn from a fresh seed;
- the next token: every probability of the 49,152 within `PROB` of the library's;
- the logit lens: the same top token at every one of the 31 stages, its probability within `PROB`;
- attention: every weight of every head of every layer within `PATTERN`, as the page's forward pass computes it;
  and as a run keeps them, bytes, within 1/510 + `PATTERN` (a byte is within 1/510 of the page's own float);
- decoding: the same tokens, greedy, with a repetition penalty, sampled with a seed and min-p, and beam search;
  each token's log-probability within `LOGPROB`;
- patching the residual stream: every cell of the grid within `FRACTION`, restoring the clean run (denoise) and
  spoiling it (noise).
One Node process answers every request of a test session (the model loads once: about 0.2 s).
"""
from __future__ import annotations

import base64
import json
import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from lib.chapters.part3.real_model import stored
from lib.explorers import smollm2 as page_model
from lib.explorers import web

NODE = shutil.which("node")
RUNNER = Path(__file__).resolve().parents[2] / "scripts" / "smollm2_node.mjs"
PROB = 1e-3
PATTERN = 1e-3
LOGPROB = 1e-3
FRACTION = 1e-3

HELD = [
    "The capital of France is",
    "naïve café, déjà vu: Zürich's Ærøskøbing",
    "In 2024, 3.14159 x 10^3 = 3141.59; 007 and ١٢٣ (Arabic-Indic digits)",
    "def f(a, b):\n\treturn a ** 2 + b  # tab-indented\n",
    "Emoji: 🙂👍🏽 🇫🇷 and a ZWJ family 👨‍👩‍👧",
    "日本の首都は東京です。中文也可以。한국어도.",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "  leading spaces,\ttabs\t\tand trailing   ",
    "שלום עולם and مرحبا بالعالم (right to left)",
    "e\u0301 (a combining accent) and \u00e9 (one character)",
]

pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js runs the page's model; install it (README)")


def seeded_texts(seed: int, n: int = 6) -> list[str]:
    """Texts no test has used before: words and signs drawn from a fresh seed."""
    rng = random.Random(seed)
    words = ["the", "river", "Paris", "quantum", "naïve", "café", "42", "1999", "🙂", "東京", "def", "return",
             "(", ")", ",", ".", "!", "?", "it's", "we'll", "x**2", "\t", "\n", "  ", "Ω", "ß", "über", "coöperate"]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(3, 14))) for _ in range(n)]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The page's modules and the model's files, written as the site's build writes them."""
    folder = tmp_path_factory.mktemp("explorers")
    web.install(folder)
    page_model.export(folder)
    return folder


@pytest.fixture(scope="module")
def node(site):
    def ask(requests: list[dict]) -> list:
        done = subprocess.run([NODE, str(RUNNER), str(site), str(site / page_model.FOLDER)],
                              input=json.dumps(requests), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout)["answers"]
    return ask


@pytest.fixture(scope="module")
def lm():
    from lib.model import smollm2
    return smollm2.load()


def test_the_build_splits_the_file_into_parts_a_host_accepts(site):
    manifest = json.loads((site / page_model.FOLDER / page_model.MANIFEST).read_text())
    parts = [site / page_model.FOLDER / p["name"] for p in manifest["parts"]]
    assert all(p.stat().st_size <= 90 * 10**6 for p in parts)
    assert sum(p.stat().st_size for p in parts) == manifest["bytes"] == page_model.model_file().stat().st_size
    joined = b"".join(p.read_bytes() for p in parts)
    assert joined == page_model.model_file().read_bytes()


def test_tokens_are_the_librarys(node, lm, request):
    texts = HELD + seeded_texts(random.SystemRandom().randrange(2**32))
    answers = node([{"op": "tokenize", "text": t} for t in texts])
    for text, a in zip(texts, answers):
        r = a["result"]
        ids = lm.vocab.encode(text)
        assert r["ids"] == ids, text
        assert r["text"] == lm.vocab.to_text(ids), text
        assert r["shown"] == lm.vocab.decode(ids), text


def test_every_token_of_the_vocabulary_is_shown_as_the_library_shows_it(node, lm):
    ids = list(range(len(lm.vocab)))
    [a] = node([{"op": "show", "ids": ids}])
    assert a["result"]["shown"] == lm.vocab.decode(ids)


def test_the_next_token_lens_and_patterns_are_the_librarys(node, lm):
    texts = [HELD[0], HELD[3], HELD[6], *seeded_texts(random.SystemRandom().randrange(2**32), 2)]
    ids = [lm.encode(t) for t in texts]
    answers = node([{"op": "run", "ids": i} for i in ids] + [{"op": "patterns", "ids": i} for i in ids])
    answers, floats = answers[:len(ids)], answers[len(ids):]
    for text, i, a, f in zip(texts, ids, answers, floats):
        r = a["result"]
        want = stored.run(lm, text)
        with torch.no_grad():
            logits = lm.model(i)[-1].double()
        p_lib = torch.softmax(logits, -1).numpy()
        p_page = torch.softmax(torch.tensor(r["logits"], dtype=torch.float64), -1).numpy()
        assert np.abs(p_page - p_lib).max() < PROB, text
        for mine, theirs in zip(r["lens"], want.lens):
            assert mine["name"] == theirs["name"]
            assert mine["top"][0][0] == theirs["top"][0][0], (text, mine["name"])
            assert abs(mine["answer"] - theirs["answer"]) < PROB
        assert r["summary"]["tokens"][:10] == list(want.summary.tokens[:10]), text
        page_patterns = np.frombuffer(base64.b64decode(r["patterns"]), dtype=np.uint8).reshape(want.patterns.shape)
        _, cache = lm.model.run_with_cache(i)
        exact = torch.stack([cache[f"blocks.{layer}.attn.pattern"] for layer in range(lm.cfg.n_layers)]).numpy()
        assert np.abs(page_patterns / 255 - exact).max() <= 0.5 / 255 + PATTERN, text
        page_floats = np.frombuffer(base64.b64decode(f["result"]["patterns"]), dtype=np.float32).reshape(exact.shape)
        assert np.abs(page_floats - exact).max() < PATTERN, text


def test_the_gated_mlps_product_is_torchs(node):
    """The kernel's SiLU(gate) * up (its own e^x, in float32) against torch's, from gates far below zero to far
    above (where SiLU is 0 or the gate itself) and random ones: within a few units in float32's last place."""
    rng = np.random.default_rng(random.SystemRandom().randrange(2**32))
    gate = np.concatenate([np.linspace(-200, 200, 1000), rng.normal(0, 4, 3000), [0.0, -0.0, 87.5, -87.5, 88.5, -88.5]])
    gate = np.concatenate([gate, np.zeros((-len(gate)) % 4)]).astype(np.float32)
    up = rng.normal(0, 2, len(gate)).astype(np.float32)
    [a] = node([{"op": "silu", "gate": gate.tolist(), "up": up.tolist()}])
    got = np.array(a["result"]["out"], dtype=np.float64)
    want = (torch.nn.functional.silu(torch.tensor(gate)) * torch.tensor(up)).double().numpy()
    assert np.all(np.abs(got - want) <= 1e-6 * np.abs(want) + 1e-30), np.abs(got - want).max()


def test_decoding_is_the_librarys(node, lm):
    """Each of the chapter's ways of decoding (lib/chapters/part3/real_model/decoding.py), cut to a few tokens."""
    from lib.chapters.part3.real_model import decoding as chapter
    from lib.model import decoding

    text = seeded_texts(random.SystemRandom().randrange(2**32), 1)[0]
    ids = lm.encode(text)
    stop = [lm.vocab.id(chapter.STOP)]
    n = 8
    requests = [{"op": "decode", "ids": ids, "max_new": n, "knobs": k} for k in chapter.SETTINGS.values()]
    requests.append({"op": "beam", "ids": ids, "max_new": 5, "beams": chapter.BEAMS})
    answers = node(requests)
    for (method, knobs), a in zip(chapter.SETTINGS.items(), answers):
        knobs = {k: v for k, v in knobs.items() if k != "max_new_tokens"}
        [want] = decoding.decode(lm.model, [ids], n, stop=stop, **knobs)
        got = a["result"]["tokens"]
        same = next((i for i, (x, y) in enumerate(zip(got, want.new_tokens)) if x != y), None)
        if same is not None:       # the two may part only where the library's own choice is a tie
            assert _tied(lm, ids + want.new_tokens[:same], got[same], want.new_tokens[same], same, knobs), \
                (method, text, same)
            got, want_tokens, want_lp = got[:same], want.new_tokens[:same], want.logprobs[:same]
        else:
            want_tokens, want_lp = want.new_tokens, want.logprobs
        assert got == want_tokens, (method, text)
        assert np.allclose(a["result"]["logprobs"][:len(got)], want_lp, atol=LOGPROB), method
    [beams] = decoding.beam_search(lm.model, [ids], 5, chapter.BEAMS, stop=stop)
    got = answers[-1]["result"]
    assert [b["seq"] for b in got] == [list(b.new_tokens) for b in beams], text
    assert np.allclose([b["score"] for b in got], [b.logprob for b in beams], atol=LOGPROB)


def _tied(lm, prefix, page, library, step, knobs) -> bool:
    """Whether the library's choice between `page` and `library` after `prefix` is within the page's
    tolerance: greedy, their processed logits within LOGPROB; seeded sampling, the seed's draw at this step
    within LOGPROB of the boundary between the two tokens' slices (adjacent in vocabulary order)."""
    from lib.model import decoding
    from lib.model.readout import Rolls, reshape

    with torch.no_grad():
        logits = lm.model(torch.tensor([prefix]))[0, -1].double()
    process = decoding.processors_for(knobs.get("temperature", 1.0), knobs.get("min_p"),
                                      knobs.get("repetition_penalty"), None)
    if process is not None:
        logits = decoding.apply(process, list(prefix), logits)
    if not knobs.get("do_sample"):
        return abs(float(logits[page] - logits[library])) < LOGPROB
    probs = reshape(logits, knobs.get("temperature", 1.0), knobs.get("top_k"), knobs.get("top_p")).double()
    cdf = torch.cumsum(probs, 0) / probs.sum()
    lo, hi = sorted((page, library))
    rolls = Rolls(knobs.get("seed", 0))
    for _ in range(step):
        rolls.next()
    u = rolls.next()
    # the slices laid in vocabulary order: the draw sits within LOGPROB of the span from the end of the
    # lower token's slice to the start of the higher one's, and that span holds less than LOGPROB
    start, end = float(cdf[lo]), float(cdf[hi - 1])
    return end - start < LOGPROB and start - LOGPROB < u < end + LOGPROB


def test_patching_the_residual_stream_is_the_librarys(node, lm):
    from lib.analysis.patching import patch_stream

    # Short texts that differ late: the library's patching costs a pass per cell from the first difference on.
    clean, corrupted = "Anna met Tom. Tom thanked", "Anna met Tom. Anna thanked"
    for direction in ("denoise", "noise"):
        want = patch_stream(lm, clean, corrupted, direction=direction)
        t, u = lm.vocab.id(want.target), lm.vocab.id(want.against)
        [a] = node([{"op": "patch", "clean": lm.encode(clean), "corrupted": lm.encode(corrupted), "target": t,
                     "against": u, "direction": direction}])
        got = a["result"]
        assert abs(got["cleanDiff"] - want.clean_diff) < FRACTION, direction
        assert abs(got["corruptedDiff"] - want.corrupted_diff) < FRACTION, direction
        assert np.abs(np.array(got["grid"]) - want.resid).max() < FRACTION, direction
        assert np.abs(want.resid).max() > 0.1, direction       # a grid with something in it


def test_induction_heads_and_their_ablation_are_the_librarys(node, lm):
    """Part 1's explorer (lib/chapters/part1/induction/smol.py): scores, pattern, the copy with heads switched off."""
    from lib.chapters.part1.induction import smol

    text = seeded_texts(random.SystemRandom().randrange(2**32), 1)[0]
    cases = [dict(repeat=True, group="induction", kind="zero", layer=4, head=0),
             dict(repeat=True, group="random", kind="mean", layer=17, head=4),
             dict(repeat=False, group="previous", kind="mean", layer=0, head=3)]
    ids = lm.encode(text)
    answers = node([{"op": "induction", "ids": ids, **c} for c in cases])
    for c, a in zip(cases, answers):
        got, want = a["result"], smol.run(lm, text, **c)
        assert [f"L{x}H{y}" for x, y in got["off"]] == want["off"], c
        assert np.abs(np.array(got["prev"]) - want["prev"]).max() < PATTERN
        if c["repeat"]:
            assert np.abs(np.array(got["ind"]) - want["ind"]).max() < PATTERN
            assert abs(got["copy"]["accuracy"] - want["copy"]["accuracy"]) < 1e-9
            assert abs(got["copy"]["loss"] - want["copy"]["loss"]) < LOGPROB
        assert np.abs(np.array(got["pattern"]) - want["pattern"]).max() < PATTERN
        assert np.abs(np.array(got["clean"]) - want["clean"]).max() < PROB
        if want["ablated"] is not None:
            assert np.abs(np.array(got["ablated"]) - want["ablated"]).max() < PROB, c
            if c["repeat"]:
                assert abs(got["copyOff"]["loss"] - want["copy_off"]["loss"]) < LOGPROB


def test_rows_of_the_readers_words_are_the_librarys(node):
    from lib.chapters.part2.real_language import smol_map

    text = "king, queen, Paris, naïveté, 東京, banana"
    want = smol_map.rows_view(text)
    [a] = node([{"op": "rows", "words": smol_map.read_words(text), "k": smol_map.K}])
    got = a["result"]
    assert [w["pieces"] for w in got["words"]] == [w["pieces"] for w in want["words"]]
    assert got["tokens"] == want["tokens"]
    for g, w in zip(got["words"], want["words"]):
        assert [t for t, _ in g["neighbours"]] == [t for t, _ in w["neighbours"]], w["word"]
        assert np.allclose([c for _, c in g["neighbours"]], [c for _, c in w["neighbours"]], atol=PROB)
    assert np.allclose(got["cos"], want["cos"], atol=PROB)


def test_a_text_the_page_cannot_run_gets_the_librarys_sentence(node, lm):
    """Empty text, half of a surrogate pair alone, and characters a byte of which the vocabulary lacks (a control
    character, a lead byte of a four-byte character): the same sentence as the library's."""
    from lib.errors import CourseError

    missing = lm.vocab.missing_bytes()
    odd = bytes([missing[0]]).decode("latin-1") if missing[0] < 0x80 else chr(missing[0])
    for text in ("", f"a {odd} b", "a\x04b", "x\U00040000", "caf\udce9", "\ud83d alone", "end \ude00"):
        with pytest.raises(CourseError) as said:
            lm.encode(text)
        [a] = node([{"op": "check_text", "text": text}])
        assert a.get("error") == str(said.value), (text, a)
    long = "the river ran on " * 40                    # over the page's 128 tokens, within the library's 1,024
    with pytest.raises(CourseError) as said:
        page_model.page_ids(lm, long)
    [a] = node([{"op": "check_text", "text": long}])
    assert a.get("error") == str(said.value), a
