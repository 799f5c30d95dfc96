"""The registry of the library's figure functions (lib.pictures.gallery): every function of lib.pictures.figures
that draws a picture is drawn by an entry (so tests/pictures/test_legibility.py holds it to the page's rules),
and an entry's name says which it draws. (Each entry is drawn and checked in test_legibility.py.)"""
import ast
import inspect

from lib.pictures import figures, gallery

# The figure functions that draw a picture from data, the ones the gallery must hold: those taking an
# axes (`ax`) or returning a figure of their own, less the plumbing every picture goes through.
PLUMBING = {"subplots", "title", "cell_text", "style_axes", "label_offsets"}


def drawing_functions() -> set[str]:
    out = set()
    for name, fn in inspect.getmembers(figures, inspect.isfunction):
        if fn.__module__ != figures.__name__ or name.startswith("_") or name in PLUMBING:
            continue
        params = list(inspect.signature(fn).parameters)
        source = inspect.getsource(fn)
        if params[:1] == ["ax"] or "return fig" in source:
            out.add(name)
    return out


def drawn_by_the_gallery() -> set[str]:
    tree = ast.parse(inspect.getsource(gallery))
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "figures"}


def test_every_figure_function_is_drawn_by_an_entry():
    drawing = drawing_functions()
    assert {"results_page", "lens_grid", "scatter_map", "belt_strip", "number_grids"} <= drawing
    missing = drawing - drawn_by_the_gallery()
    assert not missing, f"figure functions no gallery entry draws (add an @example to lib/pictures/gallery.py): {missing}"


def test_each_entry_names_a_function_it_draws():
    for name, draw in gallery.FIGURES.items():
        called = {node.attr for node in ast.walk(ast.parse(inspect.getsource(draw)))
                  if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "figures"}
        assert name.split(":")[0].split(" ")[0] in called, name
