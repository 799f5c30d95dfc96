"""The explorers in a kernel (lib.explorers.kernel): a widget carries the website's version, its controls come
from the definition, a number control's box takes any number the library takes and names what it refuses, and
a press on a part of a picture marked `data-choose` sets the controls it names.

Every bad input becomes a sentence in the explorer's message line (never an exception) and the last picture
stays. Each chapter's explorers' own views are tested in its unit's tests/chapters/PART/UNIT/test_explorers.py;
the page's twins are held to them in tests/browser/test_site_model.py.
"""
import json

import pytest

from lib.chapters.part1.index.explorers import machine_explorer
from lib.chapters.part3.results_page.explorers import sampling_explorer
from lib.chapters.part3.search_by_hand.explorers import temperature_explorer
from lib.content.prompts import CONFIDENT, UNCERTAIN
from lib.errors import CourseError
from lib.explorers.boxes import parse_number
from lib.explorers.definition import TEMPERATURES, shown_number
from lib.model.readout import check_temperature, prompt_logits, softmax


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
