"""The self-checks of chapters/part1/why-attention (lib/chapters/part1/why_attention/checks.py): each accepts
the right answer and names the typical mistakes, without giving the answer away."""


from lib.chapters.part1.why_attention import checks as why_attention


def test_why_attention_checks():
    # The T: the horizontal filter at the centre stop sees the bar on its negative row.
    assert why_attention.centre_response(-2) and why_attention.centre_response(-2.0)
    assert "vertical" in why_attention.centre_response(4).message
    assert "too low" in why_attention.centre_response(-3).message
    assert "too high" in why_attention.centre_response(6).message      # the vertical stroke's printed answer
    assert "whole number" in why_attention.centre_response(5.5).message
    assert "whole number" in why_attention.centre_response("minus two").message
    assert why_attention.predicted_class("vertical") and not why_attention.predicted_class("horizontal")
    assert "scores lower" in why_attention.predicted_class("horizontal").message
    assert "one of" in why_attention.predicted_class("diagonal").message
