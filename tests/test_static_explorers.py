"""The website's precomputed explorers show exactly what the live widgets show.

For sampled points of every explorer's grid, the live widget is set to the same values and its
picture (or its message) must equal what the page would look up. Plus the framework: keys, the
parts, the escaping of the data, and the build-only switch.
"""
import html
import json
import random

import pytest

from lib.explorers import static_specs, widgets
from lib.explorers.static import BUILD_FLAG, StaticExplorer, select, slider, toggle, const
from lib.explorers.static import Part
from lib.model.store import load

CONFIDENT, UNCERTAIN = "<BOS> Pietro chiama Paolo", "<BOS> Pietro chiama"
OTHER = "<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo"


@pytest.fixture(scope="module")
def lm():
    return load("calling-game")


def live_controls(box):
    return [c for row in box.children[:-2] for c in row.children]


def settings(spec: StaticExplorer, n: int, seed: int = 0):
    """`n` settings of the controls that the website holds (default first), drawn at random."""
    controls = spec.controls
    rng = random.Random(seed)
    out = [{c.name: c.value for c in controls.values()}]
    tries = 0
    while len(out) < n and tries < 50 * n:
        tries += 1
        values = {name: rng.choice(c.options) for name, c in controls.items()}
        parts, message = spec.lookup(values)
        if message != spec.missing:
            out.append(values)
    return out


def assert_same(box, spec, set_live, n=12):
    figure, message = box.children[-1], box.children[-2]
    for values in settings(spec, n):
        set_live(values)
        parts, expected_message = spec.lookup(values)
        if expected_message:
            assert html.escape(expected_message, quote=False) in message.value, (values, message.value)
        else:
            assert message.value == "", (values, message.value)
            assert figure.value == "".join(parts), values


def test_temperature(lm):
    prompts = [UNCERTAIN, CONFIDENT]
    box = widgets.temperature_explorer(lm, prompts)
    spec = static_specs.temperature(lm, prompts, 1.0, 10)
    prompt, temp = live_controls(box)
    stops = {static_specs._label(t): t for t in static_specs.TEMPERATURE_STOPS}

    def set_live(v):
        prompt.value, temp.value = v["prompt"], stops[v["temperature"]]
    assert_same(box, spec, set_live)


def test_sampling(lm):
    prompts = [UNCERTAIN, CONFIDENT, "<BOS> banana chiama"]
    box = widgets.sampling_explorer(lm, prompts)
    spec = static_specs.sampling(lm, prompts, 10)
    prompt, temp, top_k, top_p, greedy, seed = live_controls(box)
    stops = {static_specs._label(t): t for t in static_specs.SAMPLING_TEMPERATURES}

    def set_live(v):
        prompt.value, temp.value, top_k.value, top_p.value = v["prompt"], stops[v["temperature"]], v["top_k"], v["top_p"]
        greedy.value, seed.value = v["greedy"] == "on", int(v["seed"])
    assert_same(box, spec, set_live, n=20)


def test_lens_and_patterns(lm):
    prompts = [CONFIDENT, OTHER]
    box = widgets.lens_explorer(lm, prompts)
    spec = static_specs.lens(lm, prompts, "", 3)
    prompt, track = live_controls(box)

    def set_lens(v):
        prompt.value, track.value = v["prompt"], v["track"]
    assert_same(box, spec, set_lens)

    box = widgets.pattern_viewer(lm, prompts, 0, 3)
    spec = static_specs.pattern(lm, prompts, 0, 3)
    prompt, layer, head = live_controls(box)

    def set_pattern(v):
        prompt.value, layer.value, head.value = v["prompt"], int(v["layer"]), int(v["head"])
    assert_same(box, spec, set_pattern)


def test_ablation_holds_pairs_and_whole_layers(lm):
    prompts = [CONFIDENT, OTHER]
    box = widgets.ablation_explorer(lm, prompts)
    spec = static_specs.ablation(lm, prompts, "")
    prompt, _track, *toggles = live_controls(box)
    names = [n for n in spec.controls if n.startswith("off_")]

    def set_live(v):
        prompt.value = v["prompt"]
        for t, n in zip(toggles, names):
            t.value = v[n] == "on"
    assert_same(box, spec, set_live, n=16)
    # All of layer 0 off, as the chapter asks, is on the website; three scattered heads are not.
    values = {c.name: c.value for c in spec.controls.values()}
    layer0 = dict(values, **{n: "on" for n in names if n.startswith("off_L0")})
    assert spec.lookup(layer0)[1] == ""
    scattered = dict(values, off_L0H0="on", off_L0H1="on", off_L1H2="on")
    assert spec.lookup(scattered)[1] == spec.missing and "up to two heads" in spec.missing
    set_live(layer0)
    assert box.children[-1].value == "".join(spec.lookup(layer0)[0])


def test_kv_cache_calculator():
    box = widgets.kv_cache_calculator()
    spec = static_specs.kv_cache((32, 32768, 32, 128, 2))
    boxes = live_controls(box)

    def set_live(v):
        for b, name in zip(boxes, ("layers", "context", "heads", "d_head", "bytes")):
            b.value = v[name]
    assert_same(box, spec, set_live)


def test_maps():
    box = widgets.tsne_explorer()
    spec = static_specs.tsne("calling-game", 5, (0, 1))
    _which, perp, left, right = live_controls(box)

    def set_tsne(v):
        perp.value, left.value, right.value = int(v["perplexity"]), int(v["left"]), int(v["right"])
    assert_same(box, spec, set_tsne, n=10)
    too_many = {"perplexity": "40", "left": "0", "right": "1"}
    assert "below the number of points (28)" in spec.lookup(too_many)[1]

    box = widgets.plane_builder()
    spec = static_specs.plane("calling-game", "Paolo - Pietro", "Tarso + Cefa - capo - vice")
    _which, first, second = live_controls(box)

    def set_plane(v):
        first.value, second.value = v["axis_1"], v["axis_2"]
    assert_same(box, spec, set_plane, n=15)
    assert "zero vector" in spec.lookup({"axis_1": "Paolo - Paolo", "axis_2": "Tarso"})[1]


def test_path(lm):
    box = widgets.path_explorer(lm)
    spec = static_specs.path(lm, CONFIDENT, "Tarso", "Paolo")
    toggles = live_controls(box)
    names = list(spec.controls)

    def set_live(v):
        for t, n in zip(toggles, names):
            t.value = v[n] == "on"
    assert_same(box, spec, set_live, n=12)


def test_the_page_data_cannot_close_its_script_and_stores_each_picture_once():
    spec = StaticExplorer([[select("a", "a", ["x", "y"], "x"), toggle("t", "switch")]],
                          [const("<div>"), Part("tab", ("a", "t")), const("</div>")])
    spec.fill("tab", ("a", "t"), lambda a, t: "</script><b>same</b>" if t == "off" else f"<i>{a}</i>")
    page = spec.render()
    payload = page.split('class="course-explorer-data">')[1].rsplit("</script>", 1)[0]
    assert "</script>" not in payload
    data = json.loads(payload)
    assert data["strings"].count("</script><b>same</b>") == 1 and len(data["tables"]["tab"]) == 4
    assert data["tables"]["tab"]["0|0"] == data["tables"]["tab"]["1|0"]
    assert '<label class="course-control"' in page and 'aria-pressed="false"' in page
    # Without JavaScript the default picture is there.
    assert '<div class="course-figure" aria-live="polite"><div>' in page


def test_the_grids_are_made_only_while_the_book_is_built(monkeypatch, lm):
    box = widgets.temperature_explorer(lm, [CONFIDENT])
    monkeypatch.delenv(BUILD_FLAG, raising=False)
    assert "text/html" not in box._repr_mimebundle_()
    monkeypatch.setenv(BUILD_FLAG, "1")
    bundle = box._repr_mimebundle_()
    assert "course-static" in bundle["text/html"] and "application/vnd.jupyter.widget-view+json" in bundle


def test_controls_refuse_a_default_outside_their_options():
    with pytest.raises(ValueError, match="not one of its options"):
        slider("p", "perplexity", [2, 5], 7)
