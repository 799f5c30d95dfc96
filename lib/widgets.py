"""Live views for a kernel: ipywidgets controls around the explorers, drawn with matplotlib.

Every callback catches `CourseError` and shows its message inside the widget, so a bad value
never becomes a traceback in front of a learner.
"""
from __future__ import annotations

import matplotlib.pyplot as plt

from . import explorers, figures
from .errors import CourseError


def temperature_explorer(lm, prompts: list[str], temperature: float = 1.0, k: int = 10):
    """A temperature slider and a prompt box over the model's results page."""
    import ipywidgets as W

    slider = W.FloatLogSlider(value=temperature, base=10, min=-1, max=1, step=0.05,
                              description="temperature", readout_format=".2f", continuous_update=True,
                              style={"description_width": "initial"})
    prompt = W.Combobox(value=prompts[0], options=list(prompts), description="prompt", ensure_option=False,
                        layout=W.Layout(width="26em"), style={"description_width": "initial"})
    message = W.HTML()
    out = W.Output()

    def draw(*_):
        try:
            page = explorers.temperature_page(lm, prompt.value, slider.value, k)
        except CourseError as e:
            message.value = f'<span class="course-error" style="color:#bc4c00">{e}</span>'
            return
        message.value = ""
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(6, 3.2))
            figures.results_page(ax, page, title=f"{prompt.value}  ->  (temperature {slider.value:.2f})")
            fig.tight_layout()
            plt.show()

    slider.observe(draw, names="value")
    prompt.observe(draw, names="value")
    draw()
    box = W.VBox([W.HBox([prompt, slider]), message, out])
    box.add_class("course-explorer")
    return box
