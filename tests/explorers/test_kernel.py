"""The explorers in a kernel: their views, their definitions, and their widgets.

Every bad input becomes a sentence in the explorer's message line (never an exception) and the last
picture stays; controls are found by their names, pictures read through their views (the numbers),
never through titles. The page's twins of these views are held to them in
tests/browser/test_site_model.py.
"""
import json
import math

import pytest

from lib.errors import CourseError
from lib.chapters.part1.index.explorers import machine_explorer
from lib.chapters.part2.residual_path.explorers import path_explorer
from lib.chapters.part2.three_ways.explorers import AXES, plane_builder, tsne_explorer
from lib.chapters.part3.lever.explorers import lens_explorer
from lib.chapters.part3.results_page.explorers import sampling_explorer
from lib.chapters.part3.search_by_hand.explorers import temperature_explorer
from lib.explorers import page
from lib.analysis.lens import lens_view
from lib.analysis.sampling import sampling_view
from lib.explorers.boxes import nearest_stop, parse_number, parse_position, parse_seed, parse_top_k, parse_top_p
from lib.explorers.definition import TEMPERATURES, Control, log_stops, shown_number
from lib.explorers.registry import every_example
from lib.model.readout import check_temperature, prompt_logits, softmax
from lib.model.store import load

from lib.content.prompts import CONFIDENT, UNCERTAIN


@pytest.fixture(scope="module")
def lm():
    return load("calling-game")


def every_explorer(lm):
    """Every registered explorer in each of its example settings (the registry, not a list here)."""
    return every_example()


# ----------------------------------------------------------------------------- views
def test_sampling_view_reshapes_truncates_and_rolls(lm):
    v = sampling_view(lm, UNCERTAIN, temperature=2.0, top_k=3, seed=4, k=28)
    assert v.survivors == 3
    assert math.isclose(sum(r.final for r in v.rows), 1.0, rel_tol=1e-9)
    assert math.isclose(sum(r.heated for r in v.rows), 1.0, rel_tol=1e-9)
    kept = [r.token for r in v.rows if r.final > 0]
    assert v.chosen in kept and len(kept) == 3
    assert [r.token for r in v.rows[:3]] == kept, "top-k keeps the best three"
    assert sampling_view(lm, UNCERTAIN, 2.0, 3, None, False, 4).chosen == v.chosen
    g = sampling_view(lm, UNCERTAIN, use_greedy=True, seed=11)
    assert g.chosen == v.rows[0].token and g.greedy
    hot = sampling_view(lm, UNCERTAIN, temperature=8.0, k=28)
    assert [r.token for r in hot.rows] == [r.token for r in v.rows], "temperature never changes the order"


def test_the_picks_probability_is_read_from_the_distribution(lm):
    """A roll outside the ten rows shown still reports its own probability (not 0)."""
    seeds = [s for s in range(400) if sampling_view(lm, UNCERTAIN, 5.0, seed=s, k=3).chosen not in
             [r.token for r in sampling_view(lm, UNCERTAIN, 5.0, k=3).rows]]
    assert seeds, "no roll at temperature 5 left the top three"
    v = sampling_view(lm, UNCERTAIN, 5.0, seed=seeds[0], k=3)
    assert v.chosen_prob > 0


def test_top_p_keeps_the_smallest_set_reaching_p(lm):
    v = sampling_view(lm, UNCERTAIN, top_p=0.5, k=28)
    heated = [r.heated for r in v.rows]
    n = v.survivors
    assert sum(heated[:n]) >= 0.5 > sum(heated[:n - 1])


@pytest.mark.parametrize("text, message", [("0", "at least 1"), ("2.5", "whole number"), ("abc", "whole number")])
def test_parse_top_k_says_what_is_allowed(text, message):
    with pytest.raises(CourseError, match=message):
        parse_top_k(text)


@pytest.mark.parametrize("text", ["0", "1.5", "-0.2", "nan", "x"])
def test_parse_top_p_says_what_is_allowed(text):
    with pytest.raises(CourseError, match=r"top-p"):
        parse_top_p(text)


@pytest.mark.parametrize("parse, text", [(parse_seed, "-1"), (parse_seed, "1e3"),
                                         (parse_seed, str(2**63)),
                                         (lambda t: parse_position(t, 4), "4"),
                                         (lambda t: parse_position(t, 4), "x")])
def test_seeds_and_positions_say_what_is_allowed(parse, text):
    with pytest.raises(CourseError, match="whole number from 0 to"):
        parse(text)


def test_blank_means_no_limit_or_the_last_position():
    assert parse_top_k(" ") is None and parse_top_p("") is None
    assert parse_top_k("5") == 5 and parse_top_p("0.9") == 0.9
    assert parse_position("", 4) == 3 and parse_position("0", 4) == 0
    assert parse_seed(" 7 ") == 7


def test_lens_view_ends_at_the_model_output_at_any_position(lm):
    v = lens_view(lm, CONFIDENT)
    assert v.track == "Tarso" and v.track_ranks[-1] == 1 and v.position == 3
    final = softmax(prompt_logits(lm, CONFIDENT))
    assert math.isclose(v.track_probs[-1], float(final[lm.vocab.id("Tarso")]), rel_tol=1e-5)
    assert v.stages[0] == "embed" and len(v.top) == len(v.stages)
    assert lens_view(lm, CONFIDENT, "Cefa").track == "Cefa"
    earlier = lens_view(lm, CONFIDENT, position=2)
    shorter = lens_view(lm, UNCERTAIN)
    assert earlier.position == 2 and earlier.track_probs == pytest.approx(shorter.track_probs), \
        "position 2 of a prompt reads what the prompt cut there reads last"
    with pytest.raises(CourseError, match="unknown token"):
        lens_view(lm, CONFIDENT, "Tars")


# ----------------------------------------------------------------------------- definitions
def test_every_definition_is_json_and_computes_its_defaults(lm):
    for ex in every_explorer(lm):
        spec = json.loads(json.dumps(ex.spec()))
        assert spec["view"] == ex.view and all(c["description"] for row in spec["rows"] for c in row), ex.view
        view = ex.compute(ex.defaults())
        assert json.loads(json.dumps(view, allow_nan=False)) == json.loads(json.dumps(view)), ex.view


def test_a_slider_shows_the_value_it_uses():
    assert TEMPERATURES[0] == 0.1 and TEMPERATURES[-1] == 10.0 and 1.0 in TEMPERATURES
    assert all(float(shown_number(t)) == t for t in TEMPERATURES)
    assert len(TEMPERATURES) == len(set(TEMPERATURES)) > 300, "continuous to the eye: hundreds of stops"
    assert shown_number(0.1) == "0.100" and shown_number(1.0) == "1.00" and shown_number(10.0) == "10.0"
    assert log_stops(1, 100, 2, 2) == (1.0, 10.0, 100.0)


def test_a_typed_number_is_read_as_pythons_float_reads_it_and_finds_its_stop():
    assert [parse_number(t) for t in ("0.02", " 1e-4 ", "1_000", "-1", "abc", "")] == [0.02, 1e-4, 1000.0, -1.0, "abc", ""]
    assert math.isnan(parse_number("nan")) and parse_number("inf") == math.inf and parse_number(2) == 2.0
    stops = TEMPERATURES
    assert stops[nearest_stop(stops, 1.0)] == 1.0 and stops[nearest_stop(stops, 2.0)] == 2.0
    assert nearest_stop(stops, 0.02) == 0 and nearest_stop(stops, 50.0) == nearest_stop(stops, math.inf) == len(stops) - 1
    assert [nearest_stop(stops, v) for v in ("abc", 0.0, -3.0, math.nan)] == [0, 0, 0, 0]
    near = stops[nearest_stop(stops, 0.5123)]
    assert all(abs(math.log(near / 0.5123)) <= abs(math.log(s / 0.5123)) for s in stops), "the nearest in the log"
    with pytest.raises(ValueError, match="increasing positive stops"):
        Control("t", "t", "a number", "number", 1.0, options=(2.0, 1.0))


def test_a_control_refuses_a_default_outside_its_options():
    with pytest.raises(ValueError, match="not one of its options"):
        Control("p", "perplexity", "how many neighbours", "choice", 7, options=(2, 5))
    with pytest.raises(ValueError, match="unknown control kind"):
        Control("p", "perplexity", "how many neighbours", "dial", 7)


def test_the_tsne_explorer_offers_only_perplexities_the_points_allow():
    for points, n in (("calling-game", 28), ("real-language", 84)):
        ex = tsne_explorer(points, perplexity=5)
        perplexity = next(c for c in ex.controls if c.name == "perplexity")
        assert perplexity.options and max(perplexity.options) < n
        assert "precomputed" in ex.note.lower() and str(n) in ex.note
    with pytest.raises(CourseError, match="not one of this set's stops"):
        tsne_explorer("calling-game", perplexity=40)


def test_the_pages_element_carries_the_definition_and_cannot_close_its_script(lm):
    ex = lens_explorer(lm, ["<BOS> Pietro chiama Paolo"], track="</script><b>")
    html = page.html(ex, {"x": "</script>"})
    payload = html.split('class="course-explorer-spec">')[1].split("</script>")[0]
    spec = json.loads(payload)
    assert "<" not in payload and spec["rows"][1][0]["default"] == "</script><b>" and spec["default"] == {"x": "</script>"}
    assert page.FIGURE in html and "<noscript>" in html


# ----------------------------------------------------------------------------- widgets in a kernel
def test_a_widget_always_carries_the_websites_version(lm):
    """No switch: the same output holds the live widget (JupyterLab) and the page's element (website)."""
    bundle = temperature_explorer(lm, [CONFIDENT])._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert 'class="course-explorer course-live"' in bundle["text/html"]
    spec = json.loads(bundle["text/html"].split('class="course-explorer-spec">')[1].split("</script>")[0])
    assert spec["model"] == "calling-game" and spec["default"]["page"][0][0] == "Tarso"


def test_the_widgets_controls_come_from_the_definition(lm):
    ex = sampling_explorer(lm, [UNCERTAIN])
    box = ex.widget()
    assert list(box.controls) == [c.name for c in ex.controls]
    for c in ex.controls:
        w = box.controls[c.name]
        assert w.description == c.label and (w.slider if c.kind == "number" else w).tooltip == c.description
        if c.kind == "number":
            assert w.box.tooltip == c.description and w.slider.description == c.label
    assert box.controls["temperature"].value == 1.0 and box.controls["temperature"].box.value == "1.00"


def test_sampling_widget_shows_every_bad_input_as_a_message(lm):
    box = sampling_explorer(lm, [UNCERTAIN]).widget()
    assert box.message.value == "" and box.figure.view == "sampling"
    first = box.figure.data
    for name, value, expected in (("top_k", "0", "top-k"), ("top_k", "", None), ("top_p", "1.5", "top-p"),
                                  ("top_p", "", None), ("seed", "-2", "seed"), ("seed", "3", None),
                                  ("prompt", "<BOS> pippo", "unknown token 'pippo'"), ("prompt", "", "empty"),
                                  ("prompt", "<BOS> " * 60, "at most 48"), ("prompt", CONFIDENT, None)):
        before = box.figure.data
        box.controls[name].value = value
        if expected:
            assert expected in box.message.value and 'role="alert"' in box.message.value
            assert box.figure.data == before, "a bad value leaves the last good picture"
        else:
            assert box.message.value == ""
    assert box.figure.data != first and box.figure.data["rows"][0]["token"] == "Tarso"


@pytest.mark.parametrize("make", [temperature_explorer, sampling_explorer])
def test_a_typed_temperature_over_the_librarys_whole_range(lm, make):
    """The temperature box takes any number the read-out takes (the slider pins at its end beyond its
    range); text, 0, negatives, nan, inf and values below MIN_TEMPERATURE get check_temperature's
    sentence, and the last good picture stays."""
    box = make(lm, [UNCERTAIN]).widget()
    t = box.controls["temperature"]
    for text, value, stop in (("0.02", 0.02, TEMPERATURES[0]), ("50", 50.0, TEMPERATURES[-1]),
                              ("1e-4", 1e-4, TEMPERATURES[0]), ("1e-6", 1e-6, TEMPERATURES[0]),
                              ("1000", 1000.0, TEMPERATURES[-1]), (" 2 ", 2.0, 2.0)):
        t.box.value = text
        assert box.message.value == "" and t.value == value and t.slider.value == stop, text
        assert box.figure.data["temperature"] == value
    page = box.figure.data["page" if make is temperature_explorer else "rows"]
    heated = [p for _, p in page] if make is temperature_explorer else [r["heated"] for r in page]
    want = softmax(prompt_logits(lm, UNCERTAIN), 2.0).sort(descending=True).values[:len(heated)].tolist()
    assert heated == pytest.approx(want, abs=1e-12)
    for text in ("abc", "0", "-1", "nan", "inf", "1e-7", ""):
        before, stop = box.figure.data, t.slider.value
        t.box.value = text
        with pytest.raises(CourseError) as refused:
            check_temperature(parse_number(text))
        if make is sampling_explorer and text in ("0", "1e-7"):      # temperature 0 is the greedy switch
            assert "that is greedy decoding, the greedy switch beside top-p: switch it on" in box.message.value
        else:
            assert str(refused.value) in box.message.value, text
        # The message names the box; the slider stays at the temperature the picture uses.
        assert box.message.value.split(">")[1].startswith("temperature") and "keeps the last temperature" in box.message.value
        assert box.figure.data == before and t.slider.value == stop, text
    t.slider.value = TEMPERATURES[5]
    assert t.box.value == shown_number(TEMPERATURES[5]) and box.message.value == ""
    assert box.figure.data["temperature"] == TEMPERATURES[5]
    t.value = 0.003                                        # set from Python, as the benchmark sets it
    assert t.box.value == "0.003" and t.slider.value == TEMPERATURES[0] and box.figure.data["temperature"] == 0.003


def test_a_click_on_the_machines_map_sets_its_menu_in_a_kernel(lm):
    """The renderer sends {"choose": "part=..."} when a marked part of the map is clicked (render.js);
    the kernel's widget sets the "show" menu to it, as the page does, and ignores what it does not know."""
    box = machine_explorer(lm, [CONFIDENT]).widget()
    show = box.controls["part"]
    start = box.figure.data

    def click(choose):      # the custom message as ipywidgets delivers it from the front end
        box.figure._handle_msg({"content": {"data": {"method": "custom", "content": {"choose": choose}}},
                                "buffers": []})

    for choose, part in (("part=readout", "readout"), ("part=MLP1", "MLP1"), ("part=L1H2", "L1H2")):
        click(choose)
        assert show.value == part and box.figure.data["detail"]["part"] == part, choose
    assert box.figure.data != start
    before = box.figure.data
    for junk in ("part=L9H9", "nothing=1", "part", "L0H1=True"):
        click(junk)
        assert show.value == "L1H2" and box.figure.data == before, junk
    box.figure._handle_msg({"content": {"data": {"method": "custom", "content": "part=readout"}}, "buffers": []})
    assert show.value == "L1H2"


def test_the_seed_picks_what_the_library_picks(lm):
    from lib.model.readout import sample

    box = sampling_explorer(lm, [UNCERTAIN]).widget()
    for seed in (0, 1, 17, 2**63 - 1):
        box.controls["seed"].value = str(seed)
        assert box.figure.data["chosen"] == lm.vocab.tokens[sample(prompt_logits(lm, UNCERTAIN), seed=seed)]


def test_lens_and_temperature_widgets_show_bad_input_as_a_message(lm):
    box = lens_explorer(lm, [CONFIDENT]).widget()
    box.controls["track"].value = "banana!"
    assert "unknown token" in box.message.value
    box.controls["track"].value = ""
    box.controls["position"].value = "9"
    assert "position must be" in box.message.value
    box.controls["position"].value = "1"
    assert box.message.value == "" and box.figure.data["position"] == 1
    box.controls["prompt"].value = "   "
    assert "empty" in box.message.value
    box = temperature_explorer(lm, [UNCERTAIN]).widget()
    box.controls["prompt"].value = "<BOS> Pietro chiam"
    assert "did you mean 'chiama'" in box.message.value


def test_greedy_decoding_at_temperature_0_points_to_the_greedy_switch(lm):
    box = sampling_explorer(lm, [UNCERTAIN]).widget()
    box.controls["greedy"].value = True
    box.controls["temperature"].box.value = "0"
    assert "that is greedy decoding, which is on: it takes the most probable token whatever" in box.message.value
    assert box.figure.data["greedy"] is True and box.figure.data["temperature"] == 1.0


def test_tsne_widget_moves_with_every_control():
    box = tsne_explorer().widget()
    first = box.figure.data
    assert first["seeds"] == [0, 1] and first["perplexity"] == 5 and len(first["layouts"]) == 2
    box.controls["right"].value = 3
    assert box.figure.data["seeds"] == [0, 3] and box.figure.data["layouts"][0] == first["layouts"][0]
    box.controls["perplexity"].value = 15
    assert box.figure.data["perplexity"] == 15 and box.figure.data["layouts"][0] != first["layouts"][0]


def test_plane_builder_messages_and_redraws():
    box = plane_builder().widget()
    start = box.figure.data
    assert start["axes"] == ["Paolo - Pietro", "Tarso + Cefa - capo - vice"] and round(start["spread"], 2) == 0.13
    box.controls["axis_2"].value = "Paolo - Paolo"
    assert "zero vector" in box.message.value and box.figure.data == start
    box.controls["axis_2"].value = "Pippo"
    assert "'Pippo' is not a token" in box.message.value
    box.controls["axis_2"].value = "Paolo"
    assert box.message.value == "" and box.figure.data != start
    box.controls["axis_2"].value = "Paolo - Pietro"
    assert "points along the first" in box.message.value
    # A word set's change puts that set's own axes in the boxes (the game's words are not MiniLM's points),
    # and the "where this sits" line, true of the game model's embedding table only, goes.
    assert box.children[-3].layout.display is None and "embedding table" in box.children[-3].value
    box.controls["points"].value = "real-language"
    assert box.message.value == "" and "queen" in box.figure.data["labels"]
    assert [box.controls[a].value for a in ("axis_1", "axis_2")] == list(AXES["real-language"])
    assert box.figure.data["axes"] == list(AXES["real-language"]) and box.children[-3].layout.display == "none"
    # One bad box: the message names it, the picture keeps its last good value, the other box still works.
    box.controls["axis_1"].value = "Paolo"
    assert box.message.value.startswith('<span class="course-error" role="alert"') and "axis 1: 'Paolo' is not" in box.message.value
    assert box.figure.data["axes"] == list(AXES["real-language"])
    box.controls["axis_2"].value = "big - small"
    assert "axis 1: 'Paolo'" in box.message.value and box.figure.data["axes"] == [AXES["real-language"][0], "big - small"]
    box.controls["axis_1"].value = "cat"
    assert box.message.value == "" and box.figure.data["axes"] == ["cat", "big - small"]
    box.controls["points"].value = "calling-game"
    assert box.figure.data == start and box.message.value == "" and box.children[-3].layout.display is None


def test_path_explorer_switches_change_the_path(lm):
    box = path_explorer(lm).widget()
    start = box.figure.data
    assert start["off"] == [] and start["ablated"] is None and start["prob"] == pytest.approx(0.9999, abs=1e-4)
    box.controls["MLP0"].value = True
    assert box.figure.data["off"] == ["MLP 0"] and box.figure.data["prob"] == pytest.approx(0.0204, abs=1e-4)
    box.controls["MLP0"].value = False
    assert box.figure.data == start
    box.controls["prompt"].value = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama Pietro"
    box.controls["toward"].value = "Cefa"
    assert box.message.value == "" and box.figure.data["toward"] == "Cefa"


def test_a_press_on_a_patching_cell_picks_it_in_a_kernel(lm):
    """A cell of the patching grid is marked data-choose="cell=ROW&position=P" (pictures.js): the kernel's
    widget sets both controls, as the page does, and the view shows that cell's results page."""
    from lib.chapters.part1.ablation.explorers import patching_explorer

    box = patching_explorer(lm).widget()
    box.figure._handle_msg({"content": {"data": {"method": "custom", "content": {"choose": "cell=MLP1&position=7"}}},
                            "buffers": []})
    data = box.figure.data
    assert box.controls["cell"].value == "MLP1" and box.controls["position"].value == "7"
    assert data["cell"] == "MLP1" and data["position"] == 7
    assert abs(data["recovered"] - data["grid"][data["rows"].index("MLP1")][7]) < 1e-12
    assert data["legal"] is True and data["corrupted"] != data["clean"]
