"""SmolLM2's explorers in the page (lib/chapters/part3/real_model/page.js) against the library, in Debian's
chromium: on every prompt of the menu the page computes the kernel's results page (temperature, top-k, top-p,
the seeded roll), lens and patterns from the site's stored files, and shows each open prompt's five stored
continuations; any other prompt gets the sentence saying the notebook runs it. On the built site, a reader
moves the temperature and picks a prompt, and picks a decoding method.
"""
import json
import random
import sys
from pathlib import Path

import pytest

from lib.chapters.part3.real_model import decoding, stored
from lib.chapters.part3.real_model.explorers import (real_decode_explorer, real_heads_explorer, real_lens_explorer,
                                                     real_page_explorer)
from lib.chapters.part3.real_model.prompts import MENU
from lib.errors import CourseError
from lib.explorers.definition import TEMPERATURES

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from explorer_cases import differences  # noqa: E402
from test_site_explorers import explorers_of, seen, spec_of  # noqa: E402
from test_site_model import JS_VIEWS, page  # noqa: E402,F401  (the page fixture: the explorers' files served)


TYPED = [1e-6, 1e-4, 0.02, 50.0, 1000.0, "abc", 0.0, -1.0, float("nan"), float("inf"), 1e-7]


def expected_of(ex, values):
    try:
        return {"view": json.loads(json.dumps(ex.compute(values)))}
    except CourseError as e:
        return {"error": str(e)}


def test_the_page_computes_the_kernels_views_on_every_prompt_of_the_menu(page):
    """Each prompt of the menu: the results page at the slider's two ends and at a random stop, with top-k,
    top-p and seeds (a refused box too), the lens, and a random layer's nine patterns; each open prompt's
    continuation by each decoding method (and a method the library refuses). Same numbers (the patterns to
    1/510), the same seeded pick, the same sentences."""
    rng = random.Random("real model")
    made = [real_page_explorer(), real_lens_explorer(), real_heads_explorer(), real_decode_explorer()]
    cases, expected = [], []
    for prompt in MENU:
        settings = [dict(made[0].defaults(), prompt=prompt, temperature=t, top_k=k, top_p=p, seed=s)
                    for t, k, p, s in ((TEMPERATURES[0], "", "", "0"), (TEMPERATURES[-1], "", "0.9", "7"),
                                       (rng.choice(TEMPERATURES), rng.choice(["", "1", "5", "40", "200", "60000"]),
                                        rng.choice(["", "0.5", "0.95", "1"]), str(rng.randint(0, 2**63 - 1))))]
        if rng.random() < 0.1:
            settings.append(dict(settings[0], top_p=rng.choice(["1.5", "x"])))
        if prompt in MENU[:3]:       # the temperatures a box takes beyond the slider, and those it refuses
            settings += [dict(settings[0], temperature=t) for t in TYPED]
        for values in settings:
            cases.append({"view": "real_page", "values": values, "args": made[0].args})
            expected.append(expected_of(made[0], values))
        cases.append({"view": "real_lens", "values": {"prompt": prompt}, "args": made[1].args})
        expected.append(expected_of(made[1], {"prompt": prompt}))
        values = {"prompt": prompt, "layer": rng.randrange(30)}
        cases.append({"view": "real_heads", "values": values, "args": made[2].args})
        expected.append(expected_of(made[2], values))
        for method in (decoding.METHODS + ("nucleus",)) if prompt in decoding.PROMPTS else ():
            values = {"prompt": prompt, "method": method}
            cases.append({"view": "real_decode", "values": values, "args": made[3].args})
            expected.append(expected_of(made[3], values))
    got = page.evaluate(JS_VIEWS, [dict(c, model=None) for c in cases])
    problems, beyond, picks = [], 0, 0
    for c, e, g in zip(cases, expected, got):
        if "crash" in g:
            problems.append(f"{c['view']} {c['values']}: the page crashed: {g['crash'][:400]}")
            continue
        if "error" in e or "error" in g:
            if e.get("error") != g.get("error"):
                problems.append(f"{c['view']} {c['values']}: library {e.get('error')!r}, page {g}")
            continue
        problems += [f"{c['view']} {c['values']}: {d}" for d in differences(e["view"], g["view"], tol=c["args"]["tolerance"])[:3]]
        if c["view"] == "real_page":
            picks += 1
            beyond += e["view"]["chosen"] is None
    assert not problems, "\n".join(problems[:10])
    # The rolls land on a stored token, and now and then among the rest (at temperature 10 most do).
    assert picks == 3 * len(MENU) + 15 and 0 < beyond < picks
    decoded = [e for c, e in zip(cases, expected) if c["view"] == "real_decode"]
    assert len(decoded) == len(decoding.PROMPTS) * (len(decoding.METHODS) + 1)
    assert sum("error" in e for e in decoded) == len(decoding.PROMPTS)       # the method no one offers


def test_a_prompt_off_the_menu_gets_the_sentence_saying_where_it_runs(page):
    """The kernel runs any text; the page, until the reader loads the real model, holds the menu only, and says so
    (and how to run any text), for each of the three views."""
    from lib.messages import say

    text = "The tallest mountain in the world is Mount"
    sentence = say("not_stored", n=len(MENU))
    made = [real_page_explorer(), real_lens_explorer(), real_heads_explorer()]
    cases = [{"view": ex.view, "model": None, "values": dict(ex.defaults(), prompt=p), "args": ex.args}
             for ex in made for p in (text, " " + MENU[0])]
    assert all(g == {"error": sentence} for g in page.evaluate(JS_VIEWS, cases))


REAL_PAGE = "chapters/part3/real-model.html"


def test_a_reader_moves_the_temperature_and_picks_a_prompt(visit, site_url):
    """On the built chapter: the results page explorer's temperature slider moved to its end, then another
    prompt of the menu picked. Each time the picture says the new setting, and its numbers are the kernel's."""
    v = visit(f"{site_url}/{REAL_PAGE}")
    explorers = explorers_of(v.page)
    views = [spec_of(explorers.nth(i))["view"] for i in range(explorers.count())]
    assert views == ["real_page", "real_lens", "real_heads", "real_decode", "real_patch"]
    explorer = explorers.nth(0)
    spec = spec_of(explorer)
    ex = real_page_explorer(prompt=spec["rows"][0][0]["default"])
    slider = explorer.get_by_label("temperature", exact=True)
    slider.focus()
    slider.press("End")
    explorer.page.wait_for_function("(el) => el.querySelector('svg.course-chart').getAttribute('aria-label')"
                                    ".includes('temperature 10.0')", arg=explorer.element_handle(), timeout=15000)
    hot = seen(explorer)
    assert hot[1] == "", hot
    want = ex.compute(dict(ex.defaults(), temperature=TEMPERATURES[-1]))
    assert f"{want['survivors']:,} tokens have a probability above 0" in hot[0]
    assert f'"{want["rows"][0]["token"]}" {want["rows"][0]["final"]:.3f}' in hot[0]
    menu = explorer.get_by_label("prompt", exact=True)
    other = MENU[3]
    menu.select_option(label=other)
    explorer.page.wait_for_function("([el, text]) => el.querySelector('svg.course-chart').getAttribute('aria-label')"
                                    ".includes(text)", arg=[explorer.element_handle(), json.dumps(other)[1:-1]],
                                    timeout=15000)
    picked = seen(explorer)
    want = ex.compute(dict(ex.defaults(), prompt=other, temperature=TEMPERATURES[-1]))
    assert picked[1] == "" and "temperature 10.0" in picked[0]
    assert f'"{want["rows"][0]["token"]}" {want["rows"][0]["final"]:.3f}' in picked[0]
    chosen = "falls among the tokens below" if want["chosen"] is None else f'picks "{want["chosen"]}"'
    assert chosen in picked[0]
    # The decoding explorer: greedy with the penalty picked; the text and its numbers are the build's.
    decoder = explorers.nth(3)
    decoder.get_by_label("method", exact=True).select_option(label=decoding.SHOWN["greedy, penalty"])
    explorer.page.wait_for_function("(el) => el.querySelector('svg.course-chart').getAttribute('aria-label')"
                                    ".includes('repetition penalty')", arg=decoder.element_handle(), timeout=15000)
    words, message = seen(decoder)
    ex = real_decode_explorer(prompt=spec_of(decoder)["rows"][0][0]["default"], method="greedy, penalty")
    want = ex.compute(ex.defaults())
    assert message == "" and "".join(want["pieces"]).replace("\n", "↵") in words
    assert f"mean surprisal {want['bits']:.2f} bits a token" in words
    assert v.console_errors == [] and v.outside == []
