"""Self-checks for the chapter "Switching attention off"."""
from __future__ import annotations

import torch

from lib.analysis.ablation import KINDS, ablation_view, all_heads, head_effects, head_name, reference_set
from lib.exercises import Feedback, NOT_ANSWERED, as_number, check_choice, check_whole_number, per_model, same_option, unanswered
from lib.exercises.site import Values, site_check
from lib.analysis.head_survey import HOLDS_AT, ablation_survey, single_heads
from lib.analysis.patching import patch
from lib.content.prompt_sets import epithet_sets
from lib.model.readout import token_prob
from lib.model.store import load

CEFA_PROMPT = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama Pietro"
# A later call the explorer does not offer: Paolo, called by a numbered player, calls Pietro.
LATER_CALL = "<BOS> Pietro chiama 6 <SEP> 6 chiama Paolo vice <SEP> Paolo chiama Pietro"


# The page says which head Cefa needs most (L0H3, on every prompt of the Cefa set); the exercise ranks
# all eight heads and asks for the one in second place, which the page never names.
RANK = 2


def _cefa_values(lm) -> Values:
    effects = head_effects(lm, CEFA_PROMPT, "Cefa")
    ranked = sorted((g for g in effects if g), key=effects.get)      # every head, the most needed first
    best = ranked[RANK - 1]
    return Values(head_name(best[0]), options=tuple(head_name(h) for h in all_heads(lm.model)),
                  hints={"first": head_name(ranked[0][0])}, fields={"drop": effects[best]})


CEFA_HEAD = site_check(__name__, "cefa_head", rule="choice", compute="rankedHead", values=_cefa_values,
                       model="calling-game", args={"prompt": CEFA_PROMPT, "token": "Cefa", "rank": RANK},
                       texts={
    "right": "{answer} comes second: switched off alone, it lowers Cefa to {drop:.4f}.",
    "wrong": "switching {answer} off leaves Cefa higher than switching off the head in second place does; "
             "rank all eight.",
    "first": "{answer} comes first: it is the head the section above found. Which head comes next?"})


def cefa_head(lm, answer) -> Feedback:
    """The head in second place when all eight, each switched off alone, are ranked by how low they leave
    P(Cefa) on CEFA_PROMPT."""
    return CEFA_HEAD.judge(answer, lm)


@per_model
def _top_with_every_head_off(lm) -> str:
    return ablation_view(lm, LATER_CALL, list(all_heads(lm.model)), None).page[0][0]


def _all_off_values(lm) -> Values:
    return Values(_top_with_every_head_off(lm), options=tuple(lm.vocab.tokens), hints={"cefa": "Cefa"})


EVERY_HEAD_OFF_TOP = site_check(__name__, "every_head_off_top", rule="choice", compute="topWithHeadsOff",
                                values=_all_off_values, model="calling-game", args={"prompt": LATER_CALL, "wrong_tokens": {"cefa": "Cefa"}}, texts={
    "right": "with attention off the model cannot see who calls, and falls back on {answer}.",
    "wrong": "not that one: think of what the last position knows on its own, its token and where it stands, and "
             "which caller the model then assumes.",
    "cefa": "Cefa needs to know who calls, and the caller stands at an earlier position: with every head off, "
            "nothing reaches the last position from the positions before it."})


def every_head_off_top(lm, answer) -> Feedback:
    """The token the model puts first on LATER_CALL with every head of both layers switched off."""
    return EVERY_HEAD_OFF_TOP.judge(answer, lm)


# ------------------------------------------------------------------ investigate: the three ways, on a set the page never shows
KIND_SET_SEED = 5          # the page's sets use seeds 0 to 2
KIND_EPITHET = "Cefa"
KIND_HEAD = "L0H3"


def _kind_set(lm):
    return epithet_sets(40, KIND_SET_SEED, max_tokens=lm.model.cfg.n_ctx)[KIND_EPITHET]


@per_model
def _lost_each_way(lm) -> tuple[int, int, int]:
    group, switch = _kind_set(lm), {KIND_HEAD: single_heads(lm.model)[KIND_HEAD]}   # the one head asked about
    # The explorer's reference (the page computes it): matched by position. The chapter's claims match by role.
    return tuple(ablation_survey(lm, group, switch, kind=kind, seed=KIND_SET_SEED, match="position").lost(KIND_HEAD)
                 for kind in KINDS)


def _kind_args() -> dict:
    """What the page's twin reads: the set's prompts and the tokens the rules fix after them (inputs of
    the question, not its answer: the page switches the head off and counts)."""
    group = _kind_set(load("calling-game"))
    return {"prompts": [p.text for p in group], "targets": [p.target for p in group], "head": KIND_HEAD,
            "seed": KIND_SET_SEED, "holds_at": HOLDS_AT}


def _kind_examples(lm) -> Values:
    """Answers the tests type (an open check ships no values): the right one, and one per text."""
    zero, mean, resample = _lost_each_way(lm)
    return Values((zero, mean, resample), hints={"three": (zero, mean), "order": (mean, zero, resample)
                                                 if mean != zero else (resample, mean, zero),
                                                 "count": (zero, mean + 1, resample)})


LOST_EACH_WAY = site_check(__name__, "lost_each_way", rule="open", reads="tuple", compute="lostEachWay",
                           values=_kind_examples, model="calling-game", args=_kind_args, texts={
    "three": "give three whole numbers, in the order zero, mean, resample: (lost to zero ablation, lost to mean "
             "ablation, lost to resample ablation).",
    "right": KIND_HEAD + " costs {zero} answers zeroed, {mean} replaced by its mean and {resample} replaced by "
             "another round's write.",
    "order": "the three counts are right but not in the order asked: zero, mean, resample.",
    "count": "the count for {wrong} ablation is not what the library finds on that set: use the " + KIND_EPITHET
             + f" set of epithet_sets(40, {KIND_SET_SEED}, ...), and pass the same seed and match=\"position\" to "
               "ablation_survey."})


def lost_each_way(lm, answer) -> Feedback:
    """Investigate: answers KIND_HEAD loses on the KIND_EPITHET set of seed KIND_SET_SEED, switched off by
    zero, mean and resample ablation, as three whole numbers in that order."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    try:
        values = [as_number(v) for v in answer]
    except TypeError:
        values = []
    if len(values) != len(KINDS) or any(v is None or v != int(v) for v in values):
        return LOST_EACH_WAY.say("three")
    expected = _lost_each_way(lm)
    if list(map(int, values)) == list(expected):
        return LOST_EACH_WAY.say("right", True, **dict(zip(KINDS, expected)))
    if sorted(map(int, values)) == sorted(expected):
        return LOST_EACH_WAY.say("order")
    return LOST_EACH_WAY.say("count", wrong=" and ".join(k for k, v, e in zip(KINDS, values, expected) if int(v) != e))


# ------------------------------------------------------------------ investigate: which write carries the caller
# A legal pair the explorer does not start with: a numbered player calls Pietro (capo); in the corrupted
# round, of the same length, Paolo calls him (Cefa). Built by lib.content.corruptions.legal_corruptions.
PATCH_CLEAN = "<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo vice <SEP> Paolo chiama 7 <SEP> 7 chiama Pietro"
PATCH_CORRUPTED = "<BOS> Pietro chiama 5 <SEP> 5 chiama 7 <SEP> 7 chiama Paolo vice <SEP> Paolo chiama Pietro"
PATCH_TARGET, PATCH_AGAINST = "capo", "Cefa"


@per_model
def _best_patch(lm) -> tuple[str, int]:
    r = patch(lm, PATCH_CLEAN, PATCH_CORRUPTED, PATCH_TARGET, PATCH_AGAINST)
    best = max(r.head_cells(), key=lambda c: c["recovered"])
    return best["head"], int(best["position"])


def _patch_examples(lm) -> Values:
    """Answers the tests type (an open check ships no values): the right one, and one per text."""
    head, position = _best_patch(lm)
    other = next(head_name(h) for h in all_heads(lm.model) if head_name(h) != head)
    return Values((head, position), hints={"pair": (head,), "wrong_head": (other, position),
                                           "position": (head, position + 1), "no_head": ("MLP0", position)})


BEST_PATCH = site_check(__name__, "best_patch", rule="open", reads="tuple", compute="bestPatch",
                        values=_patch_examples, model="calling-game",
                        args={"clean": PATCH_CLEAN, "corrupted": PATCH_CORRUPTED, "target": PATCH_TARGET,
                              "against": PATCH_AGAINST}, texts={
    "pair": 'give a pair: the head\'s name and the position, such as ("L1H2", 3).',
    "wrong_head": "another head's write brings back more of the difference; read the heads' rows of the grid, not "
                  "the MLPs'."})


def best_patch(lm, answer) -> Feedback:
    """Investigate: the head and position whose write, patched from PATCH_CLEAN into PATCH_CORRUPTED (a legal
    round of the same length), brings back the largest fraction of the capo-Cefa logit difference."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    if not (isinstance(answer, (tuple, list)) and len(answer) == 2):
        return BEST_PATCH.say("pair")
    head, position = answer
    best_head, best_position = _best_patch(lm)
    names = [head_name(h) for h in all_heads(lm.model)]
    fb = check_choice(head, names, best_head, right="", wrong=BEST_PATCH.texts["wrong_head"])
    if not fb:
        return fb
    return check_whole_number(position, best_position, what="The position")


# ------------------------------------------------------------------ investigate: a reference distribution of one's own
REFERENCE_SEED = 5            # the Tarso set of this seed (the page's sets use seeds 0 to 2)
REFERENCE_HEAD = (0, 3)


def reference_set_prompts(lm):
    return epithet_sets(40, REFERENCE_SEED, max_tokens=lm.model.cfg.n_ctx)["Tarso"]


def tarso_kept(lm, keep=("Pietro", "Paolo"), replace=True) -> int:
    """Of the Tarso prompts of `reference_set_prompts`, how many keep P(Tarso) >= HOLDS_AT with
    REFERENCE_HEAD's write at the last position (the callee) replaced by its average over the later-call
    callees of the reference set whose token is in `keep` (all callees when `keep` is None); with
    `replace` False, the intact model's count."""
    ref = reference_set(lm)
    layer, head = REFERENCE_HEAD
    name = f"blocks.{layer}.attn.head_out"
    where = [(r, q) for r, q in ref.role_slots["callee"] if keep is None or lm.vocab.tokens[ref.rounds[r][q]] in keep]
    value = torch.stack([ref.writes[name][r, q, head] for r, q in where]).mean(0)

    def hook(x, _):
        out = x.clone()
        out[-1, head] = value
        return out
    kept = 0
    for p in reference_set_prompts(lm):
        logits = lm.model.run_with_hooks(lm.encode(p.text), fwd_hooks=[(name, hook)] if replace else [])
        kept += float(torch.softmax(logits[-1].double(), -1)[lm.vocab.id("Tarso")]) >= HOLDS_AT
    return kept


@per_model
def _finer_counts(lm) -> tuple[int, int, int]:
    """The finer reference's count, the every-callee reference's and the intact model's."""
    return tarso_kept(lm), tarso_kept(lm, None), tarso_kept(lm, replace=False)


# A notebook exercise: the learner builds the average and puts it in with a hook, which no explorer of the
# page does, so the website gives it no answer box (lib/explorers/js/checks.js says to run it live).
def finer_reference(lm, answer) -> Feedback:
    """Investigate: how many prompts of the Tarso set of seed REFERENCE_SEED keep Tarso with L0H3's write at the
    callee replaced by its average over the reference set's later callees that are Pietro or Paolo."""
    fine, every, intact = _finer_counts(lm)
    return check_whole_number(answer, fine, what="The count", hints={
        every: "that is what the average over every later callee gives, numbered players included: keep only the "
               "callees that are Pietro or Paolo.",
        intact: "that is the intact model's count: replace the head's write at the last position."})
