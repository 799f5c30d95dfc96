"""The self-checks of chapters/part3/lever (lib/chapters/part3/lever/checks.py): each accepts the right
answer and names the typical mistakes, without giving the answer away."""

import numpy as np
import torch

from helpers import PART3_GARBAGE, one_line_verdicts
from lib.chapters.part3.lever import checks as lever
from lib.content.prompts import CONFIDENT


def test_lever_checks(lm):
    from lib.analysis.lens import lens_view
    from lib.analysis.trajectory import residual_trajectory
    # The count over the vice set, by the lens prompt by prompt.
    prompts = lever.vice_set()
    assert len(prompts) == 40 and all("chiama Paolo" in p for p in prompts)
    at = lever.leads_after(lm, prompts, "vice")
    view = lens_view(lm, prompts[0], "vice")    # one prompt counted by hand
    assert lever.leads_after(lm, prompts[:1], "vice") == {s: int(r == 1) for s, r in zip(view.stages, view.track_ranks)}
    assert lever.vice_leads_after(lm, at["blocks.1.attn"]) and lever.vice_leads_after(lm, float(at["blocks.1.attn"]))
    if at["blocks.0.mlp"] != at["blocks.1.attn"]:
        assert "one stage earlier" in lever.vice_leads_after(lm, at["blocks.0.mlp"]).message
    if at["blocks.1.mlp"] != at["blocks.1.attn"]:
        assert "last stage" in lever.vice_leads_after(lm, at["blocks.1.mlp"]).message
    assert "whole number" in lever.vice_leads_after(lm, 36.5).message
    for garbage in PART3_GARBAGE:
        assert not lever.vice_leads_after(lm, garbage)
    # MLP 1's share of the path along vice: the pushes add up to where the path ends.
    path = residual_trajectory(lm, lever.VICE_PROMPT, toward="vice")
    share = path.pushes["blocks.1.mlp"] / sum(path.pushes.values())
    assert lever.push_share(lm, share)
    chapter = residual_trajectory(lm, CONFIDENT)
    tarso_share = chapter.pushes["blocks.1.mlp"] / sum(chapter.pushes.values())
    if abs(tarso_share - share) > 0.01:
        assert "chapter's prompt" in lever.push_share(lm, tarso_share).message
    assert "percentage" in lever.push_share(lm, share * 100).message
    assert "push itself" in lever.push_share(lm, path.pushes["blocks.1.mlp"]).message
    one_line_verdicts(lever.push_share, lm)


def test_lever_top_without_mlp_predict(lm):
    from lib.chapters.part3.lever import checks as lever
    from lib.model.readout import prompt_logits
    top = lm.vocab.tokens[int(prompt_logits(lm, lever.CONFIDENT, ablate_mlps=[1]).argmax())]
    assert lever.top_without_mlp(lm, top) and "keeps its place" in lever.top_without_mlp(lm, top).message
    assert "share of the final lead" in lever.top_without_mlp(lm, "Paolo").message
    no_mlp0 = lm.vocab.tokens[int(prompt_logits(lm, lever.CONFIDENT, ablate_mlps=[0]).argmax())]
    assert no_mlp0 == top or not lever.top_without_mlp(lm, no_mlp0), "the check asks about MLP 1, not MLP 0"
    for garbage in (None, "Tarsoo", np.array(["Tarso", "Cefa"]), 10**400, True):
        fb = lever.top_without_mlp(lm, garbage)
        assert not fb.ok and fb.message


# ------------------------------------------------------------------ the chapter's write checks
# For each, (the check, a right function written as a learner would, [(a typical wrong function, words
# its diagnosis must contain), ...]). tests/exercises/test_writing.py gathers every chapter's WRITE_CHECKS
# and runs each check on its right function, its wrong ones and garbage.
def lens_stage(resid, gain, bias, W_U, b_U):
    centred = resid - resid.mean()
    normed = centred / torch.sqrt((centred ** 2).mean() + 1e-5)
    return (normed * gain + bias) @ W_U + b_U


WRITE_CHECKS = {
    "lens_stage": (lever.lens_stage, lens_stage, [
        (lambda r, g, b, W, bu: r @ W + bu, "final LayerNorm is missing"),
        (lambda r, g, b, W, bu: lens_stage(r, g, b, W, bu) - bu, "b_U is missing"),
        (lambda r, g, b, W, bu: ((r - r.mean()) / torch.sqrt(r.var() + 1e-5) * g + b) @ W + bu, "d_model - 1"),
    ]),
}
