"""The book's figures (lib.pictures.figures): a picture carries a description computed from its data, and is
shown once."""
import matplotlib

matplotlib.use("Agg")


def test_figures_carry_a_computed_description():
    import matplotlib.pyplot as plt
    from lib.pictures.figures import with_alt
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    html = with_alt(fig, 'P(Tarso) 0.99 & "quoted" <BOS>').data
    assert html.startswith(("<img", "<picture>")) and 'alt="P(Tarso) 0.99 &amp; &quot;quoted&quot; &lt;BOS&gt;"' in html
    assert not plt.get_fignums(), "the figure is closed, not drawn twice"


def test_show_puts_the_description_on_the_image():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from lib.pictures.figures import show

    InteractiveShell.instance()
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    with capture_output() as captured:
        show(fig, 'a "line"\n   <rising>')
    data = captured.outputs[0].data
    assert 'alt="a &quot;line&quot; &lt;rising&gt;"' in data["text/html"]
    assert data["text/plain"] == 'a "line" <rising>' and data["image/png"].startswith("iVBOR")
    assert not plt.get_fignums(), "the figure is closed, so it is not drawn a second time"
