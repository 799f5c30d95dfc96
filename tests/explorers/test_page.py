"""An explorer on the website (lib.explorers.page): the page's element carries the definition and nothing in it
can close its script."""
import json

from lib.chapters.part3.lever.explorers import lens_explorer
from lib.explorers import page


def test_the_pages_element_carries_the_definition_and_cannot_close_its_script(lm):
    ex = lens_explorer(lm, ["<BOS> Pietro chiama Paolo"], track="</script><b>")
    html = page.html(ex, {"x": "</script>"})
    payload = html.split('class="course-explorer-spec">')[1].split("</script>")[0]
    spec = json.loads(payload)
    assert "<" not in payload and spec["rows"][1][0]["default"] == "</script><b>" and spec["default"] == {"x": "</script>"}
    assert page.FIGURE in html and "<noscript>" in html
