"""Write checks: each one accepts a right function written the way a learner would, names the
specific mistake of typical wrong ones, and turns garbage (not a function, a function that raises,
loops, returns None, a string, the wrong shape, huge numbers) into one clear sentence."""
import re
import threading

import numpy as np
import pytest
import torch

from lib.exercises import Feedback, writing
from lib.chapters.part1.bigrams import checks as bigrams
from lib.chapters.part2.gram_schmidt_by_hand import checks as gram_schmidt_by_hand
from lib.chapters.part3.lever import checks as lever
from lib.chapters.part1.many_heads import checks as many_heads
from lib.chapters.part1.one_head import checks as one_head
from lib.chapters.part2.real_language import checks as real_language
from lib.chapters.part3.results_page import checks as results_page
from lib.chapters.part3.search_by_hand import checks as search_by_hand
from lib.chapters.part1.shapes_and_cache import checks as shapes_and_cache
from lib.chapters.part2.three_ways import checks as three_ways
from lib.chapters.part2.what_an_embedding_is import checks as what_an_embedding_is


# ------------------------------------------------------------------ right answers, as a learner writes them
def causal_mask(T):
    return torch.tril(torch.ones(T, T)).bool()


def one_head_right(x, W_Q, W_K, W_V, W_O):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    scores = q @ k.T / W_Q.shape[1] ** 0.5
    T = x.shape[0]
    scores = scores.masked_fill(torch.triu(torch.ones(T, T), 1).bool(), float("-inf"))
    pattern = torch.softmax(scores, dim=-1)
    return pattern, pattern @ v @ W_O


def split_heads(Q, n_heads):
    T = Q.shape[0]
    return Q.reshape(T, n_heads, -1).transpose(0, 1)


def merge_heads(Z):
    return Z.transpose(0, 1).reshape(Z.shape[1], -1)


def kv_cache_size(layers, context, heads, group, d_head, bytes_per_number):
    return 2 * layers * context * (heads // group) * d_head * bytes_per_number


def bigram_table(rounds, tokens):
    index = {t: i for i, t in enumerate(tokens)}
    table = [[0.0] * len(tokens) for _ in tokens]
    for words in rounds:
        for a, b in zip(words, words[1:]):
            table[index[a]][index[b]] += 1
    return [[c / sum(row) if sum(row) else 0.0 for c in row] for row in table]


def softmax_with_temperature(logits, temperature):
    z = logits / temperature
    z = z - z.max()
    return z.exp() / z.exp().sum()


def top_k_top_p(probs, top_k=None, top_p=None):
    p = np.asarray(probs, dtype=float)
    order = np.argsort(-p)
    keep = np.zeros(len(p), bool)
    keep[order[: top_k or len(p)]] = True
    if top_p is not None:
        kept = np.where(keep, p, 0) / p[keep].sum()
        total = 0.0
        survivors = np.zeros(len(p), bool)
        for i in order:
            if not keep[i]:
                break
            survivors[i] = True
            total += kept[i]
            if total >= top_p:
                break
        keep = survivors
    out = np.where(keep, p, 0.0)
    return out / out.sum()


def lens_stage(resid, gain, bias, W_U, b_U):
    centred = resid - resid.mean()
    normed = centred / torch.sqrt((centred ** 2).mean() + 1e-5)
    return (normed * gain + bias) @ W_U + b_U


def search_page(query, dictionary):
    scores = dictionary @ query
    e = np.exp(scores - scores.max())
    return e / e.sum()


def gram_schmidt(directions):
    axes = []
    for d in directions:
        v = np.array(d, dtype=float)
        for e in axes:
            v = v - (v @ e) * e
        axes.append(v / np.linalg.norm(v))
    return np.array(axes)


def pca_by_svd(x, k):
    centred = x - x.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    return vt[:k], (s ** 2 / (s ** 2).sum())[:k]


def analogy(vectors, a, b, c):
    target = vectors[a] - vectors[b] + vectors[c]
    def cos(w):
        v = vectors[w]
        return target @ v / (np.linalg.norm(target) * np.linalg.norm(v))
    return max((w for w in vectors if w not in (a, b, c)), key=cos)


def cosine_neighbours(rows, names, word, k):
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    sims = unit @ unit[list(names).index(word)]
    return [names[j] for j in np.argsort(-sims) if names[j] != word][:k]


# ------------------------------------------------------------------ typical mistakes, with the diagnosis each must get
def _softmax_rows(scores, dim):
    return torch.softmax(scores, dim=dim)


def head_no_scale(x, W_Q, W_K, W_V, W_O):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    T = x.shape[0]
    scores = (q @ k.T).masked_fill(torch.triu(torch.ones(T, T), 1).bool(), float("-inf"))
    pattern = torch.softmax(scores, -1)
    return pattern, pattern @ v @ W_O


def head_no_mask(x, W_Q, W_K, W_V, W_O):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    pattern = torch.softmax(q @ k.T / W_Q.shape[1] ** 0.5, -1)
    return pattern, pattern @ v @ W_O


def head_wrong_axis(x, W_Q, W_K, W_V, W_O):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    T = x.shape[0]
    scores = (q @ k.T / W_Q.shape[1] ** 0.5).masked_fill(torch.triu(torch.ones(T, T), 1).bool(), float("-inf"))
    pattern = torch.softmax(scores, 0)
    return pattern, pattern @ v @ W_O


def head_no_W_O(x, W_Q, W_K, W_V, W_O):
    pattern, _ = one_head_right(x, W_Q, W_K, W_V, W_O)
    return pattern, pattern @ (x @ W_V)


CHECKS = {
    "causal_mask": (one_head.causal_mask, causal_mask, [
        (lambda T: torch.ones(T, T).bool(), "the future is not masked"),
        (lambda T: torch.triu(torch.ones(T, T)).bool(), "wrong way round"),
        (lambda T: torch.tril(torch.ones(T, T), -1).bool(), "not even itself"),
        (lambda T: ~torch.tril(torch.ones(T, T)).bool(), "True exactly where a query may not look"),
    ]),
    "one_head": (one_head.one_head, one_head_right, [
        (head_no_scale, "not divided by sqrt(d_head)"),
        (head_no_mask, "row 0 gives weight to position 1: the future is not masked"),
        (head_wrong_axis, "the softmax runs over the wrong axis"),
        (head_no_W_O, "through W_O"),
    ]),
    "split_heads": (many_heads.split_heads, split_heads, [
        (lambda Q, n: Q.reshape(n, Q.shape[0], -1), "mixes several positions"),
        (lambda Q, n: Q.reshape(Q.shape[0], -1, n).permute(2, 0, 1), "every n_heads-th column"),
        (lambda Q, n: Q.reshape(Q.shape[0], n, -1), "[position, head, d_head]"),
    ]),
    "merge_heads": (many_heads.merge_heads, merge_heads, [
        (lambda Z: Z.reshape(Z.shape[1], -1), "each row mixes several positions"),
        (lambda Z: Z.sum(0), "added together"),
    ]),
    "kv_cache_size": (shapes_and_cache.kv_cache_size, kv_cache_size, [
        (lambda L, T, H, G, D, B: 2 * L * T * H * D * B, "without sharing"),      # the page's formula
        (lambda L, T, H, G, D, B: 2 * L * T * H * G * D * B, "not larger"),
        (lambda L, T, H, G, D, B: 2 * L * T * H / (G * G) * D * B, "once too often"),
        (lambda L, T, H, G, D, B: L * T * H // G * D * B, "half the cache"),
        (lambda L, T, H, G, D, B: 2 * T * H // G * D * B, "number of layers"),
        (lambda L, T, H, G, D, B: 2 * L * T * H // G * D, "counts numbers, not bytes"),
        (lambda L, T, H, G, D, B: 3 * L * T * H // G * D * B, "queries"),
    ]),
    "bigram_table": (bigrams.bigram_table, bigram_table, [
        (lambda rounds, tokens: np.array(bigram_table(rounds, tokens)).T, "transposed"),
        (lambda rounds, tokens: bigram_table([[w for r in rounds for w in r]], tokens), "across the end of one round"),
        (lambda rounds, tokens: np.array(bigram_table(rounds, tokens)) * 3, "sum to 1"),
    ]),
    "softmax_with_temperature": (results_page.softmax_with_temperature, softmax_with_temperature, [
        (lambda z, t: softmax_with_temperature(z * t * t, t), "multiplies the logits"),
        (lambda z, t: softmax_with_temperature(z, 1.0), "does not change with the temperature"),
        (lambda z, t: (z / t).exp() / (z / t).exp().sum(), "overflows"),
    ]),
    "top_k_top_p": (results_page.top_k_top_p, top_k_top_p, [
        (lambda p, top_k=None, top_p=None: top_k_top_p(p, top_k) * (top_k_top_p(p, None, top_p) > 0) /
         (top_k_top_p(p, top_k) * (top_k_top_p(p, None, top_p) > 0)).sum(), "judged on the probabilities of the whole page"),
        (lambda p, top_k=None, top_p=None: np.asarray(p) * (top_k_top_p(p, top_k, top_p) > 0), "do not add up to 1"),
        (lambda p, top_k=None, top_p=None: top_k_top_p(-np.asarray(p) + 1, top_k, top_p), "less likely than one it cut"),
    ]),
    "lens_stage": (lever.lens_stage, lens_stage, [
        (lambda r, g, b, W, bu: r @ W + bu, "final LayerNorm is missing"),
        (lambda r, g, b, W, bu: lens_stage(r, g, b, W, bu) - bu, "b_U is missing"),
        (lambda r, g, b, W, bu: ((r - r.mean()) / torch.sqrt(r.var() + 1e-5) * g + b) @ W + bu, "d_model - 1"),
    ]),
    "search_page": (search_by_hand.search_page, search_page, [
        (lambda q, d: d @ q, "these are the scores"),
        (lambda q, d: search_page(q / np.linalg.norm(q), d / np.linalg.norm(d, axis=1, keepdims=True)), "cosines"),
        (lambda q, d: np.sort(search_page(q, d))[::-1], "sorted"),
    ]),
    "gram_schmidt": (gram_schmidt_by_hand.gram_schmidt, gram_schmidt, [
        (lambda d: np.array([np.asarray(v) / np.linalg.norm(v) for v in d]), "nothing was subtracted"),
        (lambda d: gram_schmidt(d) * 2.0, "must have length 1"),
    ]),
    "pca_by_svd": (three_ways.pca_by_svd, pca_by_svd, [
        (lambda x, k: (np.linalg.svd(x, full_matrices=False)[2][:k], pca_by_svd(x, k)[1]), "not centred"),
        (lambda x, k: (pca_by_svd(x, k)[0], (lambda s: (s / s.sum())[:k])(np.linalg.svd(x - x.mean(0))[1])),
         "singular value squared"),
        (lambda x, k: (pca_by_svd(x, k)[0], pca_by_svd(x, k)[1] / pca_by_svd(x, k)[1].sum()), "k kept components"),
    ]),
    "analogy": (real_language.analogy, analogy, [
        (lambda v, a, b, c: max(v, key=lambda w: (v[a] - v[b] + v[c]) @ v[w] /
                                np.linalg.norm(v[a] - v[b] + v[c]) / np.linalg.norm(v[w])), "one of the inputs"),
        (lambda v, a, b, c: max((w for w in v if w not in (a, b, c)), key=lambda w: (v[a] - v[b] + v[c]) @ v[w]),
         "dot product"),
        (lambda v, a, b, c: analogy(v, a, c, b), "wrong way"),
    ]),
    "cosine_neighbours": (what_an_embedding_is.cosine_neighbours, cosine_neighbours, [
        (lambda r, n, w, k: [w] + cosine_neighbours(r, n, w, k - 1), "itself"),
        (lambda r, n, w, k: [n[j] for j in np.argsort(-(r @ r[list(n).index(w)])) if n[j] != w][:k], "dot product"),
        (lambda r, n, w, k: cosine_neighbours(r, n, w, k)[::-1] if k > 1 else ["?"], "wrong order"),
    ]),
}


# Every check the library defines (its registry), not a list kept here: a new write check without a
# right solution and typical mistakes in CHECKS fails below.
REGISTERED = sorted(writing.write_checks())


def solutions(name):
    assert name in CHECKS, f"the write check {name!r} has no right solution and typical mistakes in CHECKS"
    check, right, wrongs = CHECKS[name]
    assert check is writing.write_checks()[name]
    return check, right, wrongs


def test_the_table_holds_no_check_the_library_lacks():
    assert sorted(CHECKS) == REGISTERED


@pytest.mark.parametrize("name", REGISTERED)
def test_a_right_function_is_correct(name):
    check, right, _ = solutions(name)
    fb = check(right)
    assert isinstance(fb, Feedback) and fb.ok, fb


@pytest.mark.parametrize("name", REGISTERED)
def test_typical_mistakes_get_their_own_diagnosis(name):
    check, _, wrongs = solutions(name)
    assert len(wrongs) >= 2
    for wrong, diagnosis in wrongs:
        fb = check(wrong)
        assert not fb and fb.answered, fb
        assert diagnosis in fb.message, (diagnosis, fb.message)


@pytest.mark.parametrize("name", REGISTERED)
def test_every_known_mistake_is_named_as_itself(name):
    """Each wrong version in a check's table, handed in as the learner's function, gets its own
    sentence: no earlier mistake, and no case where two mistakes agree, hides it."""
    check = solutions(name)[0]
    for mistake in check.mistakes:
        fb = check(mistake.wrong)
        assert not fb and fb.answered, (mistake, fb)
        if isinstance(mistake.message, str):
            assert mistake.message in fb.message, (mistake.message, fb.message)


def _loops(*args, **kwargs):
    while True:
        pass


def _loops_and_swallows(*args, **kwargs):
    try:
        while True:
            pass
    except Exception:
        return None


def _raises(*args, **kwargs):
    row = [1, 2, 3]
    return row[10]


def _exits(*args, **kwargs):
    raise SystemExit(3)


def _stub(*args, **kwargs):
    ...


def _stub_with_docstring(x, y=2):
    """What the function should do."""
    ...   # your code


GARBAGE_ANSWERS = [(None, "replace the ..."), (..., "replace the ..."), ("abc", "should be a function"),
                   (np.array([1.0, 2.0]), "should be a function"), (10 ** 400, "should be a function"),
                   (1e308, "should be a function"), (_stub, "write the body"),
                   (_stub_with_docstring, "write the body")]
GARBAGE_FUNCTIONS = [
    (_raises, "raised IndexError in `_raises`, at `return row[10]`: list index out of range"),
    (_loops, "did not finish within"),
    (_loops_and_swallows, "did not finish within"),
    (_exits, "raised SystemExit"),
    (lambda *a, **k: None, "returned None"),
    (lambda *a, **k: "abc", ""),
    (lambda *a, **k: np.zeros((7, 7, 7)), ""),
    (lambda *a, **k: [[1.0, 2.0], [3.0]], ""),
    (lambda *a, **k: 1e308, ""),
    (lambda *a, **k: 10 ** 400, ""),
    (lambda *a, **k: float("nan"), ""),
    (lambda *a, **k: torch.full((3, 3), float("inf"), requires_grad=True), ""),
    (lambda: 1, "raised TypeError"),
    (lambda *a, **k: (x for x in range(3)), ""),
]


@pytest.mark.parametrize("name", REGISTERED)
def test_garbage_gets_a_clear_verdict(name, monkeypatch):
    # A loop that never ends costs the time limit once per check; a short one keeps the suite quick.
    monkeypatch.setattr(writing, "TIME_LIMIT", 1.0)
    check = solutions(name)[0]
    for answer, words in GARBAGE_ANSWERS + GARBAGE_FUNCTIONS:
        fb = check(answer)
        assert isinstance(fb, Feedback) and not fb.ok, (answer, fb)
        assert words in fb.message, (answer, fb.message)
        assert "Traceback" not in fb.message and "\n" not in fb.message and len(fb.message) < 400, fb.message


def test_a_function_that_edits_its_input_is_judged_on_its_answer():
    def edits(logits, temperature):
        logits /= temperature          # in place: the check's own copy of the input must not change
        return torch.softmax(logits, -1)
    assert results_page.softmax_with_temperature(edits)


def test_the_time_limit_grows_with_the_time_the_library_takes(monkeypatch):
    # On a busy machine the library's own answer is slow too; a right function as slow as it
    # must not be called a loop.
    import time
    slow = writing.WriteCheck(name="slow", cases=lambda: [writing.Case((0.2,), "a slow input")],
                              reference=lambda s: time.sleep(s) or 1.0)
    monkeypatch.setattr(writing, "TIME_LIMIT", 0.5)
    assert slow(lambda s: time.sleep(2 * s) or 1.0)
    fb = slow(_loops)
    limit = re.search(r"did not finish within ([\d.]+) s", fb.message)
    assert limit and 4.0 <= float(limit[1]) < 10, fb


def test_the_time_limit_holds_outside_the_main_thread(monkeypatch):
    monkeypatch.setattr(writing, "TIME_LIMIT", 1.0)
    # Signals only reach the main thread; elsewhere the learner's function runs in a helper thread.
    box = {}
    worker = threading.Thread(target=lambda: box.setdefault("fb", one_head.causal_mask(_loops)))
    worker.start()
    worker.join(10)
    assert not worker.is_alive() and "did not finish" in box["fb"].message


def test_the_time_limit_leaves_no_alarm_behind(monkeypatch):
    monkeypatch.setattr(writing, "TIME_LIMIT", 1.0)
    import signal
    before = signal.getsignal(signal.SIGALRM)
    one_head.causal_mask(_loops)
    one_head.causal_mask(causal_mask)
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_feedback_never_shows_the_library_answer():
    # A wrong mask's message names the cell it sees wrong, never the whole right mask.
    fb = one_head.causal_mask(lambda T: torch.ones(T, T))
    assert "True," not in fb.message and "[[" not in fb.message
    fb = shapes_and_cache.kv_cache_size(lambda *a: 12345)
    right = kv_cache_size(3, 5, 14, 7, 11, 1)
    assert f"{right}" not in fb.message and f"{right:,}" not in fb.message and "too high" in fb.message


def test_the_write_check_runs_in_a_real_kernel():
    """In a Jupyter kernel a loop that never ends is stopped by the time limit, an error is located
    on the learner's line, and neither prints a traceback."""
    import nbformat
    from nbclient import NotebookClient

    cells = ["from lib.exercises import one_head as check\nfrom lib.exercises import writing\nwriting.TIME_LIMIT = 1.0",
             "def causal_mask(T):\n    ...\n\ncheck.causal_mask(causal_mask)",
             "def causal_mask(T):\n    while True:\n        pass\n\ncheck.causal_mask(causal_mask)",
             "def causal_mask(T):\n    m = [[j <= i for j in range(T)] for i in range(T)]\n    return m[T]\n\n"
             "check.causal_mask(causal_mask)",
             "import numpy as np\ndef causal_mask(T):\n    return np.tril(np.ones((T, T), dtype=bool))\n\n"
             "check.causal_mask(causal_mask)"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    shown = [" ".join(o.get("data", {}).get("text/html", "") for o in c.outputs) for c in nb.cells[1:]]
    assert 'data-verdict="not answered"' in shown[0]
    assert 'data-verdict="not yet"' in shown[1] and re.search(r"did not finish within [\d.]+ s", shown[1])
    assert "IndexError in `causal_mask`, at `return m[T]`" in shown[2]
    assert 'data-verdict="correct"' in shown[3]
    assert not any(o.output_type == "error" or o.get("name") == "stderr" for c in nb.cells for o in c.outputs)


# ------------------------------------------------------------------ every other check survives garbage too
def _answer_checks():
    """Every self-check that takes a learner's value (a parameter named answer, or tool)."""
    import inspect

    from lib import chapters
    for module in chapters.load("checks"):
        info = module.__name__.rsplit(".", 2)[1]
        for name, fn in sorted(vars(module).items()):
            if inspect.isfunction(fn) and fn.__module__ == module.__name__ and not name.startswith("_"):
                params = list(inspect.signature(fn).parameters)
                if "answer" in params or "tool" in params:
                    yield f"{info}.{name}", fn


ANSWER_CHECKS = dict(_answer_checks())
GARBAGE_VALUES = [np.array([0.5, 0.25]), np.array(0.3), np.float64("nan"), 10 ** 400, 1e308, -1e308,
                  float("inf"), "abc", "", torch.tensor([1.0, 2.0]), [1, 2], {"a": 1}, True, object(),
                  lambda *a: 1 / 0]


@pytest.mark.parametrize("name", sorted(ANSWER_CHECKS))
def test_every_value_check_survives_garbage(name):
    from lib.model.store import load

    fn = ANSWER_CHECKS[name]
    models = {"lm": load("hand-wired" if name.startswith("hand_wired.") else "calling-game"),
              "zl": load("zero-layer")}
    params = [p for p in __import__("inspect").signature(fn).parameters]
    for garbage in GARBAGE_VALUES:
        args = [models[p] for p in params if p in models]
        fb = fn(*args, garbage)
        assert isinstance(fb, Feedback), (garbage, fb)
        assert not fb.ok and fb.answered, (garbage, fb)
        assert "Traceback" not in fb.message and "\n" not in fb.message and len(fb.message) < 400, fb.message


def test_there_are_value_checks_to_test():
    assert len(ANSWER_CHECKS) >= 40
