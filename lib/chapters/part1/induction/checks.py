"""Self-checks for the chapter "Induction heads: a circuit that forms"."""
from __future__ import annotations

import numpy as np
import torch

from lib.analysis import induction
from lib.analysis.ablation import head_name
from lib.chapters.part1.induction.smol import MAX_TEXT
from lib.exercises import Feedback
from lib.exercises.site import Values, site_check
from lib.chapters.part1.induction import smol
from lib.exercises.writing import Case, Mistake, WriteCheck
from lib.model.store import load, read_model, run_label, shipped_runs

# The run the investigate exercise opens: one the chapter's pictures never show.
INVESTIGATED_RUN = "seed 3"
# The sequences the predict and investigate checks measure on (the chapter's claims use 0, 1, 2).
CHECK_SEED = 11


# ------------------------------------------------------------------------------------- write
def _prefix_shifted(pattern, tokens):
    """Mistake: the attention on the earlier occurrence itself, not on the position after it."""
    a, toks, shares = np.asarray(pattern, float), list(tokens), []
    for i in range(len(toks)):
        same = [j for j in range(i) if toks[j] == toks[i]]
        if same:
            shares.append(a[i, same].sum())
    return float(np.mean(shares)) if shares else 0.0


def _prefix_all_queries(pattern, tokens):
    """Mistake: the mean over every query, those whose token never occurred before included."""
    a, toks = np.asarray(pattern, float), list(tokens)
    return float(np.mean([a[i, [j + 1 for j in range(i) if toks[j] == toks[i]]].sum() for i in range(len(toks))]))


def _previous_token(pattern, tokens):
    """Mistake: the previous-token score."""
    a = np.asarray(pattern, float)
    return float(np.mean([a[i, i - 1] for i in range(1, len(a))])) if len(a) > 1 else 0.0


def _random_pattern(rng, T):
    s = rng.normal(size=(T, T)) * 2
    s[np.triu(np.ones((T, T), bool), 1)] = -np.inf
    e = np.exp(s - s.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _prefix_cases() -> tuple[Case, ...]:
    rng = np.random.default_rng(5)
    lm = load("induction")
    b = induction.sequences(CHECK_SEED, per_period=1, periods=[7])[0]
    _, cache = lm.model.run_with_cache(torch.as_tensor(b.ids[0]))
    r = induction.roles(induction.pattern_scores(lm.model, induction.sequences(CHECK_SEED, per_period=4)))
    words = lm.vocab.decode(b.ids[0].tolist())
    real = cache["blocks.1.attn.pattern"][r.induction[1]].double().numpy()
    tokens = list("abcabdca")
    return (Case((_random_pattern(rng, len(tokens)), tokens), "a random pattern over a b c a b d c a"),
            Case((real, words), f"the induction model's {head_name(r.induction)} on {' '.join(words)}"),
            Case((_random_pattern(rng, 6), list("aaaaaa")), "one token six times"),
            Case((_random_pattern(rng, 5), list("abcde")), "five different tokens (no token occurs twice)"),
            Case((_random_pattern(rng, 1), ["a"]), "a single token"))


prefix_matching_score = WriteCheck(
    name="prefix_matching_score",
    cases=_prefix_cases,
    reference=induction.prefix_matching_score,
    mistakes=(
        Mistake(_prefix_shifted, "you measure the attention on the earlier occurrence of the query's token itself; an "
                                 "induction head looks one position further, at the token that came after it."),
        Mistake(_prefix_all_queries, "you average over every query, also those whose token never occurred before; "
                                     "those have nowhere to look, so leave them out of the mean."),
        Mistake(_previous_token, "that is the previous-token score: the attention on the position just before the "
                                 "query, whatever token sits there."),
    ),
)


# ------------------------------------------------------------------------------------- predict
ABLATION_OPTIONS = ("barely moves", "rises, but stays below the first copy's", "rises above the first copy's")


def induction_heads(model, batches) -> list:
    """Every layer-1 head whose induction score passes `induction.FORMED`."""
    s = induction.pattern_scores(model, batches)["induction"]
    return [(1, h) for h in range(model.cfg.n_heads) if s[1, h] >= induction.FORMED]


def _ablation_values(lm) -> Values:
    batches = induction.sequences(CHECK_SEED, per_period=8)
    clean = induction.clean(lm.model, batches)["loss"]
    ablated = induction.resample_ablation(lm.model, batches, induction_heads(lm.model, batches))["loss"]
    first = induction.in_context_loss(lm.model, batches)["first_copy_loss"]
    answer = ABLATION_OPTIONS[0 if ablated < clean + 0.1 else 1 if ablated < first else 2]
    return Values(answer, options=ABLATION_OPTIONS,
                  fields={"clean": f"{clean:.2f}", "ablated": f"{ablated:.2f}", "first": f"{first:.2f}"})


ABLATE_INDUCTION = site_check(__name__, "ablate_induction_heads", rule="choice", compute=None, values=_ablation_values,
                             model="induction", texts={
    "right": "with every induction head's write taken from another sequence, the second copy goes from {clean} nats "
             "to {ablated}, above the first copy's {first}: the heads still copy, confidently, the letters of the "
             "other sequence.",
    "wrong": "replace the write of every layer-1 head whose induction score passes 0.5 by its write on another "
             "sequence of the same period, and measure the loss on the second copy beside the first copy's."})


def _other_model(lm) -> Feedback | None:
    if getattr(lm, "name", None) != "induction":
        return Feedback(False, "this check reads the induction model: call it with lm = lib.load(\"induction\"), "
                               f"not {getattr(lm, 'name', type(lm).__name__)!s}.")
    return None


def ablate_induction_heads(lm, answer) -> Feedback:
    """What resample-ablating every induction head at once does to the loss on the second copy."""
    refused = _other_model(lm)
    return refused if refused is not None else ABLATE_INDUCTION.judge(answer, lm)


# ------------------------------------------------------------------------------------- investigate
def investigated_run():
    """The run the investigate exercise opens (a shipped run the chapter does not show)."""
    folder = {run_label(f): f for f in shipped_runs("induction")}[INVESTIGATED_RUN]
    return read_model("induction", folder)


def _reader_values(lm) -> Values:
    run = investigated_run()
    r = induction.roles(induction.pattern_scores(run.model, induction.sequences(CHECK_SEED, per_period=8)))
    k = induction.composition_scores(run.model)["K"][r.previous[1]]
    heads = tuple(head_name((1, h)) for h in range(run.model.cfg.n_heads))
    q = induction.composition_scores(run.model)["Q"][r.previous[1]]
    return Values(heads[int(np.argmax(k))], options=heads,
                  fields={"previous": head_name(r.previous), "score": f"{k.max():.2f}", "q_head": heads[int(np.argmax(q))]})


K_READER = site_check(__name__, "k_reader", rule="choice", compute=None, values=_reader_values, model="induction",
                      texts={
    "right": "{answer} reads the previous-token head {previous} through its keys the most (K-composition {score}).",
    "wrong": "not that one: find the run's previous-token head by its score first, then compare its K-composition "
             "score with each head of layer 1."})


def k_reader(lm, answer) -> Feedback:
    """On the run seed 3, the layer-1 head with the largest K-composition score with the previous-token head."""
    refused = _other_model(lm)
    return refused if refused is not None else K_READER.judge(answer, lm)


# ------------------------------------------------------------------ predict on your own text: copying without the heads
def _without_heads_values(text: str) -> Values:
    """On the learner's text read twice: with the induction heads found on it switched off (zero), does SmolLM2's top
    choice still get more than half of the second copy right (its first token left out)?"""
    from lib.model import smollm2  # deferred: the model is read only when a learner checks

    v = smol.run(smollm2.load(), text, True, "induction", "zero")
    after = v["copy_off"] if v["copy_off"] is not None else v["copy"]
    expected = "yes" if after["accuracy"] > 0.5 else "no"
    return Values(expected, options=("yes", "no"), fields={
        "n": len(v["off"]), "before": f"{v['copy']['accuracy']:.0%}", "after": f"{after['accuracy']:.0%}",
        "expected": expected})


WITHOUT_HEADS = site_check(__name__, "copies_without_heads", rule="choice", compute="smolCopiesWithout",
                           values=_without_heads_values, own="Your text", args={"most": MAX_TEXT},
                           own_example="Zork plinth umber quasar, Mavis Oduya and Teodor Brnčić", texts={
    "right": "{expected}: on your text SmolLM2 gets {before} of the second copy with every head, and {after} with the "
             "{n} induction heads found switched off.",
    "wrong": "not on your text: compare the second copy with and without the heads in the explorer above."})


def copies_without_heads(text, answer) -> Feedback:
    """Predict, on a text of your own read twice: with its induction heads switched off, does SmolLM2 still predict
    more than half of the second copy? ("yes" or "no")"""
    return WITHOUT_HEADS.judge_text(text, answer)
