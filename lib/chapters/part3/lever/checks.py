"""Self-checks for the chapter "The lever: watching the answer form"."""
from __future__ import annotations

from functools import partial
import functools
from types import SimpleNamespace

import numpy as np
import torch

from lib.analysis.lens import lens_view, read_out
from lib.model.transformer import LayerNorm
from lib.exercises.site import Values, site_check
from lib.exercises.writing import Case, Mistake, WriteCheck
from lib.content.prompts import CONFIDENT
from lib.analysis.trajectory import residual_trajectory
from lib.exercises import Feedback, check_choice, check_number
from lib.content.prompt_sets import epithet_sets
from lib.model.readout import prompt_logits
from lib.model.store import load


# The investigations go where the chapter's figures do not: a numbered player calls Paolo, and the
# model must say vice.
VICE_PROMPT = "<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo"


# The lens explorer reads any one prompt; how typical that prompt's path is takes a set of them: the
# later turns where a numbered player calls Paolo, drawn with one seed.
VICE_SET_SEED, VICE_STAGE = 0, "blocks.1.attn"


@functools.cache
def vice_set() -> tuple[str, ...]:
    """The 40 later-turn prompts of the vice set drawn with VICE_SET_SEED, as text."""
    n_ctx = load("calling-game").model.cfg.n_ctx
    return tuple(p.text for p in epithet_sets(40, VICE_SET_SEED, max_tokens=n_ctx)["vice"])


def leads_after(lm, prompts, word: str) -> dict[str, int]:
    """For each stage of the lens, on how many of `prompts` it puts `word` first."""
    views = [lens_view(lm, p, word) for p in prompts]
    return {stage: sum(v.track_ranks[i] == 1 for v in views) for i, stage in enumerate(views[0].stages)}


def _leads_values(lm) -> Values:
    counts = leads_after(lm, vice_set(), "vice")
    stages = list(counts)
    before = stages[stages.index(VICE_STAGE) - 1]
    return Values(counts[VICE_STAGE], hints={"before": counts[before], "final": counts[stages[-1]]})


VICE_LEADS = site_check(__name__, "vice_leads_after", rule="whole", compute="leadsAfterStage", values=_leads_values,
                        what="The count", model="calling-game",
                        args=lambda: {"prompts": list(vice_set()), "word": "vice", "stage": VICE_STAGE}, texts={
    "before": "that is the count one stage earlier, after block 0's MLP; read the lens after block 1's attention.",
    "final": "that counts the prompts where vice leads after the last stage, the model's own answer; the question "
             "stops after block 1's attention."})


def vice_leads_after(lm, answer) -> Feedback:
    """Investigate: on how many prompts of the vice set the lens puts vice first after VICE_STAGE."""
    return VICE_LEADS.judge(answer, lm)


PUSH_COMPONENT = "blocks.1.mlp"


def _push_values(lm) -> Values:
    traj = residual_trajectory(lm, VICE_PROMPT, toward="vice")
    expected = traj.pushes[PUSH_COMPONENT] / float(traj.coords[-1, 0])
    chapter = residual_trajectory(lm, CONFIDENT)
    return Values(expected, hints={"chapter": chapter.pushes[PUSH_COMPONENT] / float(chapter.coords[-1, 0]),
                                   "percent": expected * 100, "push": traj.pushes[PUSH_COMPONENT]})


# The library computes it exactly; a tolerance wider than 0.002 would accept probabilities the
# chapter prints to two decimals. The page computes it as the path explorer does (the push of a block is
# the step its write makes along the first axis, the toward word's own row).
PUSH_SHARE = site_check(__name__, "push_share", rule="number", compute="pushShare", values=_push_values,
                        what=f"The share of {PUSH_COMPONENT}'s push", tol=0.002, model="calling-game",
                        args={"prompt": VICE_PROMPT, "toward": "vice", "chapter_prompt": CONFIDENT,
                              "chapter_toward": "Tarso", "component": PUSH_COMPONENT}, texts={
    "chapter": "that is the share on the chapter's prompt, toward Tarso; measure along vice's axis on the new prompt.",
    "percent": "that is a percentage; give the share as a fraction of 1.",
    "push": "that is the push itself; divide it by where the path ends along the axis."})


def push_share(lm, answer) -> Feedback:
    """Investigate: the share of the final coordinate along vice that block 1's MLP pushes on VICE_PROMPT."""
    return PUSH_SHARE.judge(answer, lm)


# ------------------------------------------------------------------ write: one stage of the logit lens
def _model_parts(gain, bias, W_U, b_U):
    """What the library's read-out needs of a model: its final LayerNorm and its unembedding."""
    norm = LayerNorm(len(gain)).double()
    with torch.no_grad():
        norm.w.copy_(torch.as_tensor(gain, dtype=torch.float64))
        norm.b.copy_(torch.as_tensor(bias, dtype=torch.float64))
    return SimpleNamespace(ln_final=norm, W_U=torch.as_tensor(W_U, dtype=torch.float64),
                           b_U=torch.as_tensor(b_U, dtype=torch.float64))


def library_lens_stage(resid, gain, bias, W_U, b_U) -> np.ndarray:
    """The logits the lens reads off one residual vector: the model's own final LayerNorm, then W_U."""
    return read_out(_model_parts(gain, bias, W_U, b_U), torch.as_tensor(resid, dtype=torch.float64)).numpy()


def _lens_by_hand(resid, gain, bias, W_U, b_U, *, norm=True, centre=True, ddof=0, eps=1e-5, affine=True,
                  unembed_bias=True):
    """The lens written out with switches, each switch one typical mistake (the defaults are right)."""
    x = np.asarray(resid, dtype=float)
    if norm:
        c = x - x.mean() if centre else x
        x = c / np.sqrt((c ** 2).sum() / (len(x) - ddof) + eps)
        if affine:
            x = x * np.asarray(gain, float) + np.asarray(bias, float)
    out = x @ np.asarray(W_U, float)
    return out + np.asarray(b_U, float) if unembed_bias else out



@functools.cache
def _lens_cases() -> tuple[Case, ...]:
    hw = load("hand-wired")
    m = hw.model
    prompt = "<BOS> the king is"
    _, cache = m.run_with_cache(hw.encode(prompt))
    parts = tuple(t.detach().double() for t in (m.ln_final.w, m.ln_final.b, m.W_U, m.b_U))
    g = torch.Generator().manual_seed(5)
    r = lambda *shape, std=1.0: torch.randn(*shape, generator=g, dtype=torch.float64) * std
    d, v = 12, 9
    random_parts = (1 + r(d, std=0.3), r(d, std=0.3), r(d, v, std=0.4), r(v, std=0.5))
    return (Case((cache["blocks.0.resid_mid"][-1].double(), *parts),
                 f"the hand-wired model's residual after attention 0 on {prompt!r}"),
            Case((cache["resid_final"][-1].double(), *parts), f"its final residual on {prompt!r}"),
            Case((r(d, std=3.0) + 2.0, *random_parts), "a random residual of 12 numbers, 9 words"),
            Case((torch.full((d,), 0.5, dtype=torch.float64) + r(d, std=1e-3), *random_parts),
                 "a residual whose 12 numbers barely differ"))


lens_stage = WriteCheck(
    name="lens_stage",
    cases=_lens_cases,
    reference=library_lens_stage,
    rtol=1e-6, atol=1e-8,
    mistakes=(
        Mistake(partial(_lens_by_hand, norm=False),
                "the final LayerNorm is missing: the lens reads every stage through the model's own last step, "
                "LayerNorm first, then W_U."),
        Mistake(partial(_lens_by_hand, unembed_bias=False), "the unembedding's bias b_U is missing."),
        Mistake(partial(_lens_by_hand, affine=False),
                "the LayerNorm's learned gain and bias are missing: after normalising, multiply by the gain "
                "and add the bias."),
        Mistake(partial(_lens_by_hand, centre=False),
                "the residual is not centred: LayerNorm subtracts the mean of its numbers before dividing by "
                "their spread."),
        Mistake(partial(_lens_by_hand, ddof=1),
                "the spread is the sample standard deviation (dividing by d_model - 1, torch.std's default); "
                "LayerNorm divides by d_model."),
        Mistake(partial(_lens_by_hand, eps=0.0),
                "eps is missing: LayerNorm adds 1e-5 to the variance before the square root, which matters "
                "when the numbers barely differ."),
    ),
)


# ------------------------------------------------------------------ predict: the largest share is not the one needed
WITHOUT_MLP = 1


def _without_values(lm) -> Values:
    tokens = lm.vocab.tokens
    intact = tokens[int(prompt_logits(lm, CONFIDENT).argmax())]
    expected = tokens[int(prompt_logits(lm, CONFIDENT, ablate_mlps=[WITHOUT_MLP]).argmax())]
    return Values(expected, options=tuple(tokens),
                  fields={"others": "it keeps its place" if expected == intact else f"{intact} loses its place"})


TOP_WITHOUT_MLP = site_check(__name__, "top_without_mlp", rule="choice", compute="topWithoutMlp",
                             values=_without_values, model="calling-game", args={"prompt": CONFIDENT, "mlp": WITHOUT_MLP},
                             texts={
    "right": "{answer}: with MLP " + str(WITHOUT_MLP) + " off, {others}.",
    "wrong": "not {answer}. A component's share of the final lead says how much it adds, not whether the lead "
             "survives without it: subtract MLP " + str(WITHOUT_MLP) + "'s push from the lead and see what is left."})


def top_without_mlp(lm, answer) -> Feedback:
    """Predict: the top word on the chapter's prompt with MLP WITHOUT_MLP switched off."""
    return TOP_WITHOUT_MLP.judge(answer, lm)
