"""The explorers' pure functions, and their widgets: every bad input becomes a message in the
widget (never an exception), and the figure stays."""
import math

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from lib.pictures import charts
from lib.explorers import views as explorers, widgets  # noqa: E402
from lib.errors import CourseError  # noqa: E402
from lib.model.readout import softmax  # noqa: E402
from lib.model.readout import prompt_logits  # noqa: E402
from lib.model.store import load  # noqa: E402

UNCERTAIN, CONFIDENT = "<BOS> Pietro chiama", "<BOS> Pietro chiama Paolo"


@pytest.fixture(scope="module")
def lm():
    return load("calling-game")


def test_sampling_view_reshapes_truncates_and_rolls(lm):
    v = explorers.sampling_view(lm, UNCERTAIN, temperature=2.0, top_k=3, seed=4, k=28)
    assert v.survivors == 3
    assert math.isclose(sum(r.final for r in v.rows), 1.0, rel_tol=1e-9)
    assert math.isclose(sum(r.heated for r in v.rows), 1.0, rel_tol=1e-9)
    kept = [r.token for r in v.rows if r.final > 0]
    assert v.chosen in kept and len(kept) == 3
    assert [r.token for r in v.rows[:3]] == kept, "top-k keeps the best three"
    # The same seed rolls the same token; greedy takes the top line whatever the seed.
    assert explorers.sampling_view(lm, UNCERTAIN, 2.0, 3, None, False, 4).chosen == v.chosen
    g = explorers.sampling_view(lm, UNCERTAIN, use_greedy=True, seed=11)
    assert g.chosen == v.rows[0].token and g.greedy
    # Temperature never changes the order.
    hot = explorers.sampling_view(lm, UNCERTAIN, temperature=8.0, k=28)
    assert [r.token for r in hot.rows] == [r.token for r in v.rows]


def test_top_p_keeps_the_smallest_set_reaching_p(lm):
    v = explorers.sampling_view(lm, UNCERTAIN, top_p=0.5, k=28)
    heated = [r.heated for r in v.rows]
    n = v.survivors
    assert sum(heated[:n]) >= 0.5 > sum(heated[:n - 1])


@pytest.mark.parametrize("text, message", [("0", "at least 1"), ("2.5", "whole number"), ("abc", "whole number")])
def test_parse_top_k_says_what_is_allowed(text, message):
    with pytest.raises(CourseError, match=message):
        explorers.parse_top_k(text)


@pytest.mark.parametrize("text", ["0", "1.5", "-0.2", "nan", "x"])
def test_parse_top_p_says_what_is_allowed(text):
    with pytest.raises(CourseError, match=r"top-p"):
        explorers.parse_top_p(text)


def test_blank_means_no_limit():
    assert explorers.parse_top_k(" ") is None and explorers.parse_top_p("") is None
    assert explorers.parse_top_k("5") == 5 and explorers.parse_top_p("0.9") == 0.9


def test_lens_view_ends_at_the_model_output(lm):
    v = explorers.lens_view(lm, CONFIDENT)
    assert v.track == "Tarso" and v.track_ranks[-1] == 1
    final = softmax(prompt_logits(lm, CONFIDENT))
    assert math.isclose(v.track_probs[-1], float(final[lm.vocab.id("Tarso")]), rel_tol=1e-5)
    assert v.stages[0] == "embed" and len(v.top) == len(v.stages)
    assert explorers.lens_view(lm, CONFIDENT, "Cefa").track == "Cefa"
    with pytest.raises(CourseError, match="unknown token"):
        explorers.lens_view(lm, CONFIDENT, "Tars")


def message_of(box) -> str:
    return box.children[-2].value


def controls(box):
    return [c for row in box.children[:-2] for c in row.children]


@pytest.fixture
def draws(monkeypatch):
    """Every chart the widgets draw, in order."""
    shown = []
    for name in ("bar_chart", "lens_chart"):
        original = getattr(charts, name)

        def counted(*args, _original=original, **kwargs):
            out = _original(*args, **kwargs)
            shown.append(out)
            return out

        monkeypatch.setattr(charts, name, counted)
    return shown


def figure_of(box) -> str:
    return box.children[-1].value


def test_sampling_widget_shows_every_bad_input_as_a_message(lm, draws):
    box = widgets.sampling_explorer(lm, [UNCERTAIN])
    prompt, temperature, top_k, top_p, greedy, seed = controls(box)
    assert message_of(box) == "" and len(draws) == 1
    first = figure_of(box)
    assert "<svg" in first and 'role="img"' in first and "tokens survive truncation" in first
    for control, value, expected in ((top_k, "0", "top-k"), (top_k, "", None), (top_p, "1.5", "top-p"), (top_p, "", None),
                                     (prompt, "<BOS> pippo", "unknown token 'pippo'"),
                                     (prompt, "", "empty"), (prompt, "<BOS> " * 60, "at most 48"),
                                     (prompt, CONFIDENT, None)):
        before = len(draws)
        control.value = value
        if expected:
            assert expected in message_of(box) and 'role="alert"' in message_of(box)
            assert len(draws) == before, "a bad value leaves the last good figure on screen"
        else:
            assert message_of(box) == "" and len(draws) == before + 1
    assert figure_of(box) != first and "Tarso" in figure_of(box), "the figure and its description follow the prompt"


def test_lens_and_temperature_widgets_show_bad_input_as_a_message(lm, draws):
    box = widgets.lens_explorer(lm, [CONFIDENT])
    prompt, track = controls(box)
    track.value = "banana!"
    assert "unknown token" in message_of(box)
    track.value = ""
    prompt.value = "   "
    assert "empty" in message_of(box)
    box = widgets.temperature_explorer(lm, [UNCERTAIN])
    prompt, slider = controls(box)
    prompt.value = "<BOS> Pietro chiam"
    assert "did you mean 'chiama'" in message_of(box)


def test_charts_are_svg_with_a_description_and_escape_their_text():
    svg = charts.bar_chart([("<BOS>", 0.5), ("Tarso", 0.25)], alt='a "page" <b>', highlight="Tarso", ghost=[0.6, 0.3])
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "&lt;BOS&gt;" in svg and "<BOS>" not in svg and "&lt;b&gt;" in svg
    assert svg.count("<rect") == 4 and charts.PALETTE["accent"] in svg
    import xml.dom.minidom
    xml.dom.minidom.parseString(svg)   # well-formed


def test_lens_chart_is_well_formed(lm):
    import xml.dom.minidom
    view = explorers.lens_view(lm, CONFIDENT)
    svg = charts.lens_chart(view, "lens")
    xml.dom.minidom.parseString(svg)
    assert svg.count("Tarso") >= 4 and "P(Tarso)" in svg


def test_tsne_explorer_moves_with_every_control_and_refuses_a_perplexity_too_large():
    box = widgets.tsne_explorer()
    which, perp, left, right = controls(box)
    first = figure_of(box)
    assert first.count("<svg") == 2 and "seed 0" in first and "seed 1" in first and message_of(box) == ""
    right.value = 3
    assert "seed 3" in figure_of(box) and figure_of(box) != first
    perp.value = 15
    after_perp = figure_of(box)
    assert "perplexity 15" in after_perp
    perp.value = 40                      # 40 >= 28 points: a message, and the last picture stays
    assert "below the number of points (28)" in message_of(box) and figure_of(box) == after_perp
    which.value = "real-language"        # 84 points: 40 is allowed there
    assert message_of(box) == "" and "queen" in figure_of(box) and "perplexity 40" in figure_of(box)


def test_plane_builder_messages_and_redraws():
    box = widgets.plane_builder()
    which, first, second = controls(box)
    start = figure_of(box)
    assert "Paolo - Pietro" in start and "13% of the spread" in start
    second.value = "Paolo - Paolo"
    assert "zero vector" in message_of(box) and figure_of(box) == start
    second.value = "Pippo"
    assert "'Pippo' is not a token" in message_of(box)
    second.value = "Paolo"
    assert message_of(box) == "" and figure_of(box) != start
    second.value = "Paolo - Pietro"
    assert "points along the first" in message_of(box)


def test_path_explorer_toggles_change_the_path(lm):
    box = widgets.path_explorer(lm)
    toggles = controls(box)
    assert [t.description for t in toggles][-2:] == ["MLP 0", "MLP 1"]
    start = figure_of(box)
    assert "off: nothing" in start and "P(Tarso) 0.9999" in start
    toggles[-2].value = True
    assert "off: MLP 0" in figure_of(box) and "P(Tarso) 0.0204" in figure_of(box)
    toggles[-2].value = False
    assert figure_of(box) == start
