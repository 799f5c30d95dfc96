"""The model in the page equals the library: the website's JavaScript forward pass, read-out, seeded
roll and every explorer's view, in Debian's chromium, against lib on the same inputs.

The page's files (`lib/explorers/js/`) and the site's shared files (`lib.explorers.page.export_site`:
the shipped weights, the point sets) are served from a temporary folder on 127.0.0.1, so these
tests need no built book.
"""
import functools
import http.server
import json
import math
import random
import sys
import threading
from pathlib import Path

import pytest
import torch

import lib
from lib.errors import CourseError
from lib.chapters.part1.ablation.explorers import patching_explorer
from lib.explorers import web
from lib.explorers.definition import every_example
from lib.content.point_sets import POINT_SETS, point_set
from lib.explorers.page import export_site
from lib.shipped.presets import PRESETS
from lib.content.prompt_sets import prompt_set
from lib.model.readout import Rolls, prompt_logits, reshape, sample, splitmix64

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from explorer_cases import TOL, differences, random_roll, random_values  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODELS = tuple(sorted(PRESETS))   # every shipped model (the presets are their registry)


@pytest.fixture(scope="module")
def page(browser, tmp_path_factory):
    """A blank page on 127.0.0.1 that can import the explorers' modules (./explorers/...)."""
    folder = tmp_path_factory.mktemp("site")
    web.install(folder / "explorers")
    export_site(folder / "explorers")
    (folder / "index.html").write_text("<!doctype html><title>explorers</title><body></body>")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = browser.new_context()
    outside = []
    context.route("**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url else (outside.append(r.request.url),
                                                                                       r.abort()))
    p = context.new_page()
    errors = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
    p.evaluate("""async (names) => {
        const m = await import('./explorers/model.js');
        window.mods = {model: m, readout: await import('./explorers/readout.js'),
                       views: await import('./explorers/views.js'), render: await import('./explorers/render.js')};
        window.models = {};
        for (const name of names)
            window.models[name] = await m.loadModel('./explorers/models/', name);
    }""", list(MODELS))
    yield p
    assert errors == [] and outside == [], (errors, outside)
    context.close()
    server.shutdown()


JS_ROLLS = """async ([name, cases]) => {
    const m = window.models[name], r = window.mods.readout;
    return cases.map((c) => {
        const logits = m.promptLogits(m.encode(c.prompt), {heads: c.heads, mlps: c.mlps});
        return {probs: Array.from(r.reshape(logits, c.temperature, c.top_k, c.top_p)),
                pick: r.sample(logits, c.temperature, c.top_k, c.top_p, BigInt(c.seed))};
    });
}"""


@pytest.mark.parametrize("name, count", [("calling-game", 240), ("hand-wired", 100), ("zero-layer", 60)])
def test_the_page_gives_the_librarys_probabilities_and_picks(page, name, count):
    """Random prompts x random heads and MLPs off x temperatures, top-k, top-p, seeds: every
    probability equal to 1e-5, every seeded pick the same token."""
    lm = lib.load(name)
    rng = random.Random(name)
    cases = [random_roll(rng, lm, i) for i in range(count)]
    # Seeds travel as text: a JavaScript number holds whole numbers exactly only up to 2**53.
    got = page.evaluate(JS_ROLLS, [name, [dict(c, seed=str(c["seed"])) for c in cases]])
    worst, picks = 0.0, 0
    for c, g in zip(cases, got):
        logits = prompt_logits(lm, c["prompt"], [tuple(h) for h in c["heads"]], c["mlps"])
        probs = reshape(logits, c["temperature"], c["top_k"], c["top_p"])
        worst = max(worst, float((probs - torch.tensor(g["probs"], dtype=probs.dtype)).abs().max()))
        expected = sample(logits, c["temperature"], c["top_k"], c["top_p"], seed=c["seed"])
        assert g["pick"] == expected, f"seed {c['seed']} picks {lm.vocab.tokens[g['pick']]} in the page, " \
                                      f"{lm.vocab.tokens[expected]} in the library: {c}"
        picks += 1
    assert worst <= 1e-5, f"largest probability difference {worst:.2e} over {count} prompts"
    assert picks == count


def test_the_rolls_are_splitmix64_in_both(page):
    # The generator's published test vector (seed 1234567), then the page's first numbers of a few streams.
    assert [splitmix64(1234567, n) for n in range(3)] == [6457827717110365317, 3203168211198807973,
                                                          9817491932198370423]
    seeds = [0, 1, 42, 2**53 + 1, 2**63 - 1]
    js = page.evaluate("(seeds) => seeds.map((s) => [0, 1, 2].map((n) => window.mods.readout.uniform(BigInt(s), n)))",
                       [str(s) for s in seeds])
    for s, row in zip(seeds, js):
        rolls = Rolls(s)
        assert row == [rolls.next() for _ in range(3)], s


def explorers():
    """Every registered explorer in each of its example settings: a new one is held to its page twin
    without touching this file."""
    return every_example()


JS_VIEWS = """async (cases) => {
    const out = [];
    for (const c of cases) {
        try {
            // The context the page gives a view (views.js viewContext: its model, the site's one point-set loader;
            // an explorer that runs the real model only once it is loaded shows its opening picture, which the
            // page's spec carries, its `default`, as the library computes it).
            const context = {...(await window.mods.views.viewContext({model: c.model, default: c.opening})),
                             defaults: c.defaults || {}};
            const view = await window.mods.views.VIEWS[c.view](context, c.values, c.args);
            window.mods.render.picture(c.view, view);       // every view can be drawn
            out.push({view: JSON.parse(JSON.stringify(view))});
        } catch (e) {
            out.push(e instanceof window.mods.readout.CourseError ? {error: e.message} : {crash: String(e.stack)});
        }
    }
    return out;
}"""


def add_case(ex, values, cases, expected):
    """One case for the page's views (JS_VIEWS), and what the library computes for it: its view, or its message."""
    try:
        expected.append({"view": json.loads(json.dumps(ex.compute(values)))})
    except CourseError as e:
        expected.append({"error": str(e)})
    opening = ex.args.get("real", {}).get("opening")
    cases.append({"view": ex.view, "model": ex.model, "values": values, "args": ex.args,
                  "defaults": ex.defaults() if opening else None,
                  "opening": json.loads(json.dumps(ex.compute(ex.defaults()))) if opening else None})


def test_every_explorer_computes_the_librarys_view_and_messages(page):
    """Every explorer, at its defaults and at random settings (bad values included): the page's view
    equals the library's, and a value the library refuses gets the same sentence in the page."""
    labels = {n: list(point_set(n).labels) for n in POINT_SETS}
    cases, expected = [], []
    made = explorers()
    for n, ex in enumerate(made):
        # Each explorer's own stream (its view and its place among the examples of that view), so that
        # adding an explorer, or the registry's order, changes no other explorer's settings.
        rng = random.Random(f"16 {ex.view} {sum(e.view == ex.view for e in made[:n])}")
        lm = lib.load(ex.model) if ex.model else None
        for i in range(25):
            values = ex.defaults() if i == 0 else random_values(ex, rng, lm, labels)
            add_case(ex, values, cases, expected)
    got = page.evaluate(JS_VIEWS, cases)
    problems = []
    for case, e, g in zip(cases, expected, got):
        if "crash" in g:
            problems.append(f"{case['view']} {case['values']}: the page crashed: {g['crash'][:300]}")
        elif "error" in e or "error" in g:
            if e.get("error") != g.get("error"):
                problems.append(f"{case['view']} {case['values']}: library {e.get('error')!r}, page {g.get('error')!r}")
        else:
            # An explorer whose page reads stored numbers (the real model's patterns) says how close they are.
            tol = case["args"].get("tolerance", TOL)
            problems += [f"{case['view']} {case['values']}: {d}" for d in differences(e["view"], g["view"], tol=tol)[:3]]
    assert not problems, "\n".join(problems[:10])
    messages = sum("error" in e for e in expected)
    assert 0.1 * len(cases) < messages < 0.6 * len(cases), f"{messages} of {len(cases)} settings refused"


def test_an_unknown_word_gets_the_command_lines_suggestions(page):
    lm = lib.load("calling-game")
    for word in ("pietro", "Tars", "chiamma", "x", "<bos>", "Cefà"):
        with pytest.raises(CourseError) as expected:
            lm.encode(f"<BOS> {word}")
        got = page.evaluate("(w) => { try { window.models['calling-game'].encode('<BOS> ' + w); } "
                            "catch (e) { return e.message; } }", word)
        assert got == str(expected.value)


JS_ABLATIONS = """async ([name, cases]) => {
    // The ablation chapter's hooks (its unit's page.js, reached through the site's units.js).
    const m = window.models[name], ablation = window.mods.views.UNITS['part1/ablation'];
    return cases.map((c) => {
        const ids = m.encode(c.prompt);
        try {
            return Array.from(m.promptLogits(ids, {hooks: ablation.ablationHooks(m, c.heads, c.mlps, c.kind, ids, 0, 0,
                                                                                   c.match)}));
        } catch (e) { return {error: e.message}; }
    });
}"""


@pytest.mark.parametrize("kind, match", [("zero", "role"), ("mean", "role"), ("resample", "role"),
                                         ("mean", "position"), ("resample", "position")])
def test_the_page_ablates_as_the_library_does(page, kind, match):
    """Random prompts x random heads and MLPs switched off, the `kind` way, the reference matched by
    `match`: every logit equal to 1e-4 (logits reach 40; the page computes in doubles, the library in
    float32), and a prompt the reference cannot stand in for refused with the library's sentence. The
    prompts are the game's rounds, cut anywhere, padded with players, or shuffled (roles no round shows)."""
    from lib.analysis.ablation import ablated_logits, reference_set
    from lib.content.corpora.calling_game import sample_round

    lm = lib.load("calling-game")
    longest = reference_set(lm).longest
    rng = random.Random(f"ablation {kind} {match}")
    cases = []
    for i in range(60):
        c = random_roll(rng, lm, i)
        n = rng.randint(1, longest) if i < 55 else rng.randint(longest + 1, lm.model.cfg.n_ctx)
        words = c["prompt"].split() if i % 2 else sample_round(rng)     # random tokens, or a round of the game
        words = words[:n] + ["Pietro"] * (n - len(words))
        if i % 4 == 3:
            rng.shuffle(words)
        c["prompt"] = " ".join(words)
        cases.append({"prompt": c["prompt"], "heads": c["heads"], "mlps": c["mlps"], "kind": kind, "match": match})
    got = page.evaluate(JS_ABLATIONS, ["calling-game", cases])
    worst = 0.0
    for c, g in zip(cases, got):
        try:
            want = ablated_logits(lm, [c["prompt"]], [tuple(h) for h in c["heads"]], c["mlps"], kind,
                                  match=match)[0]
        except CourseError as e:
            assert g == {"error": str(e)}, (c, g)
            continue
        worst = max(worst, float((want - torch.tensor(g, dtype=want.dtype)).abs().max()))
    assert worst <= 1e-4, f"{kind}: largest logit difference {worst:.2e}"


JS_PATCHING = """async (cases) => {
    const m = window.models['calling-game'], views = window.mods.views;
    return cases.map((values) => {
        try {
            const view = views.VIEWS.patching({model: m}, values);
            window.mods.render.picture("patching", view);
            return {view: JSON.parse(JSON.stringify(view))};
        } catch (e) { return e instanceof window.mods.readout.CourseError ? {error: e.message} : {crash: String(e.stack)}; }
    });
}"""


def test_the_page_patches_as_the_library_does(page):
    """The patching explorer on prompt pairs the chapters never show (and its defaults, and bad input):
    every recovered fraction equal to the library's to 1e-5, the same results page of the picked cell,
    the same sentence for a pair the library refuses."""
    lm = lib.load("calling-game")
    ex = patching_explorer(lm)
    rng = random.Random("patching")
    cases = [ex.defaults()]
    for p in prompt_set("epithet-later-turn", 4, seed=8807) + prompt_set("next-caller", 3, seed=8807):
        first, second = prompt_logits(lm, p.text).argsort(descending=True)[:2].tolist()
        cases.append(dict(ex.defaults(), clean=p.text, corrupted=p.text, swap=True, target=lm.vocab.tokens[first], against=lm.vocab.tokens[second],
                          cell=rng.choice(ex.rows[3][0].options), position=str(rng.randrange(len(p.tokens)))))
    cases += [dict(ex.defaults(), swap=False, corrupted="<BOS> Pietro chiama"),
              dict(ex.defaults(), target="", against=""), dict(ex.defaults(), target="vice", against="vice"),
              dict(ex.defaults(), swap=True)]
    got = page.evaluate(JS_PATCHING, cases)
    worst, compared = 0.0, 0
    for values, g in zip(cases, got):
        assert "crash" not in g, g
        try:
            want = ex.compute(values)
        except CourseError as e:
            assert g == {"error": str(e)}, (values, g)
            continue
        g = g["view"]
        compared += 1
        for key in ("clean", "corrupted", "target", "against", "rows", "cell", "position", "legal"):
            assert g[key] == want[key], (key, g[key], want[key])
        worst = max(worst, max(abs(a - b) for ra, rb in zip(want["grid"], g["grid"]) for a, b in zip(ra, rb)))
        assert [t for t, _ in g["page"]][:3] == [t for t, _ in want["page"]][:3]
        assert max(abs(a[1] - b[1]) for a, b in zip(g["page"], want["page"])) < 1e-5
    assert worst <= 1e-5, f"largest recovered-fraction difference {worst:.2e}"
    assert compared >= 6 and compared < len(cases), f"{compared} of {len(cases)} settings compared"
    legal = [g["view"]["legal"] for g in got if "view" in g]
    assert True in legal and False in legal       # the default pair is legal, a swapped one is not


def test_the_machine_is_the_library_with_any_part_switched_off(page):
    """The whole-model explorer (each registered example of view "machine"): valid prompts of every
    length, any part shown, any position, any heads and MLPs switched off; every number of the view
    (each part's write toward the answer and its length, the logit, the results page, the pattern,
    the logit lens) equal to the library's to 1e-5 (relative beyond 1)."""
    from explorer_cases import TOL

    rng = random.Random("machine")
    cases, expected = [], []
    for ex in [e for e in explorers() if e.view == "machine"]:
        lm = lib.load(ex.model)
        cfg = lm.model.cfg
        parts = ex.rows[1][0].options
        for _ in range(30):
            words = ["<BOS>"] + [rng.choice(lm.vocab.tokens) for _ in range(rng.randint(0, cfg.n_ctx - 1))]
            values = dict(ex.defaults(), prompt=" ".join(words), part=rng.choice(parts),
                          position=rng.choice(["", str(rng.randrange(len(words)))]))
            for c in ex.controls:
                if c.kind == "toggle":
                    values[c.name] = rng.random() < 0.35
            cases.append({"view": ex.view, "model": ex.model, "values": values, "args": ex.args})
            expected.append(json.loads(json.dumps(ex.compute(values))))
    got = page.evaluate(JS_VIEWS, cases)
    problems, switched = [], 0
    for case, e, g in zip(cases, expected, got):
        assert "view" in g, (case["values"], g)
        problems += [f"{case['values']}: {d}" for d in differences(e, g["view"])[:3]]
        switched += bool(e["off"])
    assert not problems, "\n".join(problems[:10])
    assert TOL == 1e-5 and switched > len(cases) / 2, f"{switched} of {len(cases)} settings switched a part off"


def test_the_page_holds_the_real_models_sentences_only(page):
    """The real-attention explorer on the website: a sentence its build computed gives the library's
    view to the stored bytes' tolerance; any other gets the sentence saying where it runs (the kernel)."""
    from lib.chapters.part1.ablation.explorers import TOLERANCE, real_attention_explorer, sentences

    ex = real_attention_explorer()
    cases = [dict(ex.defaults(), sentence=s, layer=5, head=11, query="0") for s in (sentences()[-1], sentences()[2])]
    cases.append(dict(ex.defaults(), sentence="The bank approved the loan because it trusted her."))
    got = page.evaluate(JS_VIEWS, [{"view": ex.view, "model": None, "values": v, "args": ex.args} for v in cases])
    for values, g in zip(cases[:2], got):
        assert not differences(ex.compute(values), g["view"], tol=TOLERANCE), values
    assert got[2] == {"error": f"the website holds the real model's attention for the {len(sentences())} sentences "
                               "of this menu only; in a kernel (this page's notebook, from the download icon at the top) the explorer runs the "
                               "model on any sentence"}
    assert ex.compute(cases[2])["tokens"][:3] == ["[CLS]", "the", "bank"]     # the kernel reads it


def test_typed_temperatures_at_the_extremes_equal_the_library(page):
    """Every explorer with a temperature control (the registry, not a list), at the typed extremes the
    box allows (1e-6 to 1000) and values it refuses: the page's view equals the library's to 1e-5, the
    same sentence for a refused one; at 1e-6 the page is one-hot, at 1000 nearly flat (the page's best
    and worst shown probabilities within a factor exp(logit range / 1000)). And the read-out's
    logits_not_finite path: logits a double holds, divided by 1e-6, refused with the same sentence."""
    from lib.model.readout import softmax

    # Explorers that run a model in the page; SmolLM2's results page reads stored runs of a menu, and is held
    # to the library at these typed temperatures on its menu in test_site_real_model.py.
    hot = [ex for ex in explorers() if ex.model and any(c.name == "temperature" for c in ex.controls)]
    assert {ex.view for ex in hot} >= {"temperature", "sampling"}
    typed = [1e-6, 1e-4, 0.02, 50.0, 1000.0, "abc", 0.0, -1.0, float("nan"), float("inf"), 1e-7]
    cases, expected = [], []
    for ex in hot:
        first = ex.controls[0].options[0]
        for prompt in (first, " ".join(first.split()[:2]), "<BOS>"):
            for t in typed:
                add_case(ex, dict(ex.defaults(), prompt=prompt, temperature=t), cases, expected)
    got = page.evaluate(JS_VIEWS, cases)
    problems, extremes = [], 0
    for case, e, g in zip(cases, expected, got):
        assert "crash" not in g, g
        if "error" in e or "error" in g:
            if e.get("error") != g.get("error"):
                problems.append(f"{case['values']}: library {e.get('error')!r}, page {g.get('error')!r}")
            continue
        problems += [f"{case['view']} {case['values']}: {d}" for d in differences(e["view"], g["view"])[:3]]
        view, t = g["view"], case["values"]["temperature"]
        probs = [p for _, p in view["page"]] if "page" in view else [r["heated"] for r in view["rows"]]
        logits = prompt_logits(lib.load(case["model"]), case["values"]["prompt"]).sort(descending=True).values
        if t == 1e-6:
            # One-hot to 1e-9 wherever the best logit leads the next by 1e-4 or more (exp(-100) after division).
            assert float(logits[0] - logits[1]) >= 1e-4, case["values"]
            assert abs(probs[0] - 1) <= 1e-9 and sum(probs[1:]) <= 1e-9, (case["view"], probs[:3])
            extremes += 1
        if t == 1000.0:
            spread = float(logits[0] - logits[-1])
            assert max(probs) / min(probs) <= math.exp(spread / 1000) * (1 + 1e-9), (case["view"], probs[:3])
            extremes += 1
    assert not problems, "\n".join(problems[:10])
    assert extremes == 2 * len(hot) * 3
    refused = sum("error" in e for e in expected)
    assert refused == 6 * len(hot) * 3, refused
    big = [1e303, 0.0, -1e303]
    with pytest.raises(CourseError) as too_big:
        softmax(torch.tensor(big, dtype=torch.float64), 1e-6)
    said = page.evaluate("(l) => { try { window.mods.readout.softmax(Float64Array.from(l), 1e-6); } "
                         "catch (e) { return e.message; } }", big)
    assert said == str(too_big.value) == "the logits divided by temperature 1e-06 are not all finite numbers: use a larger temperature"
