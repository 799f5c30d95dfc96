"""The claims of the chapter `chapters/part3/hallucination.md`, each with its measurement."""
from __future__ import annotations

import functools
import random

import numpy as np
import torch

import lib
from lib.analysis import calibration
from lib.analysis.flatness import detector_report, labelled_signs
from lib.claims.registry import EVERY_RUN, claim
from lib.claims.words import Q
from lib.model.readout import entropy_bits, top1_margin
from lib.content.corpora.calling_game import GameOptions, next_token_distribution, sample_round
from lib.content.prompt_sets import KINDS, _cuts

HALLUCINATION_ROUNDS = 800
SURE = 0.95   # a top probability at or above this is a "sure" answer


@functools.lru_cache(maxsize=None)
def judged_cuts(seed: int, rounds: int = HALLUCINATION_ROUNDS) -> list[tuple[str, str, float, bool, float, float]]:
    """Every distinct prompt cut from `rounds` seeded rounds where the rules fix the next token (the
    five labelled kinds), as (kind, text, the model's top probability, whether its top word breaks the
    rules, the page's entropy in bits, its top-1 margin). One forward pass per round reads every cut in it
    (the model is causal)."""
    lm = lib.load("calling-game")
    n_ctx = lm.model.cfg.n_ctx
    rng = random.Random(seed)
    seen, out = set(), []
    for _ in range(rounds):
        tokens = sample_round(rng, GameOptions())[:n_ctx]
        cuts = [(prefix, kind) for prefix, kind, _, _ in _cuts(tokens) if kind in KINDS and len(prefix) <= n_ctx]
        wrong = [prefix for prefix, kind in cuts if kind == "wrong-call"]
        if wrong:   # the rest of the round is fixed too: <SEP>, the loser's name, perde, <EOS>
            cuts += [(tokens[:j], "after-wrong-call") for j in range(len(wrong[0]) + 1, len(tokens))]
        if not cuts:
            continue
        with torch.no_grad():
            probs = torch.softmax(lm.model(lm.encode(" ".join(tokens))).double(), -1)
        for prefix, kind in cuts:
            text = " ".join(prefix)
            if text in seen:
                continue
            seen.add(text)
            p = probs[len(prefix) - 1]
            top = int(p.argmax())
            rules = next_token_distribution(prefix)
            page = p.numpy()
            out.append((kind, text, float(p[top]), rules.get(lm.vocab.tokens[top], 0) == 0, entropy_bits(page),
                        top1_margin(page)))
    return out


def _mistake_numbers(seed):
    cuts = judged_cuts(seed)
    fixed = [c for c in cuts if c[0] != "after-wrong-call"]
    mistakes = [c[2] for c in fixed if c[3]]
    right = [c[2] for c in fixed if not c[3]]
    after_wrong = [c[3] for c in cuts if c[0] == "after-wrong-call"]
    at_wrong = [c[3] for c in cuts if c[0] == "wrong-call"]
    return {"n": len(fixed), "rounds": HALLUCINATION_ROUNDS, "mistakes": len(mistakes),
            "mistakes_unsure": sum(p < SURE for p in mistakes),
            "share_mistakes_unsure": float(np.mean([p < SURE for p in mistakes])) if mistakes else 0.0,
            "share_right_unsure": float(np.mean([p < SURE for p in right])),
            "median_mistake": float(np.median(mistakes)) if mistakes else 1.0,
            "median_right": float(np.median(right)), "sure": SURE,
            "n_at_wrong": len(at_wrong), "wrong_at_wrong": sum(at_wrong),
            "n_after_wrong": len(after_wrong), "wrong_after_wrong": sum(after_wrong),
            "share_wrong_after_wrong": float(np.mean(after_wrong)) if after_wrong else 0.0,
            "share_wrong_at_wrong": float(np.mean(at_wrong)) if at_wrong else 0.0,
            "mistake_share": len(mistakes) / len(fixed),
            "after_ratio": (float(np.mean(after_wrong)) if after_wrong else 0.0) / max(len(mistakes) / len(fixed), 1e-12)}


claim("hallucination.mistakes-rare", "hallucination",
      "On {runs}, over the prompts cut from {rounds:,.0f} fresh rounds where the rules fix the next word "
      "({n:,.0f} distinct prompts), the model's top word breaks the rules on {mistakes:.0f}, under 2.5% of them",
      words={"under 2.5% of them": Q("mistake_share") < 0.025},
      others="its top word breaks the rules on {mistake_share:.1%} of them",
      note="top word against the rules on under 2.5% of prompts of the five fixed kinds (a run trained on a seed of "
           "its own came out at 2.0%, so 2% would sit inside one run's sampling noise)",
      scope=EVERY_RUN, models=('calling-game',))(_mistake_numbers)

claim("hallucination.mistakes-unsure", "hallucination",
      "On {runs}, its mistakes do not look like its right answers: {share_mistakes_unsure:.0%} of the mistakes come "
      "with a top probability below {sure:.2f}, more than three times the share of its right answers that do "
      "({share_right_unsure:.1%}), with {mistakes:.0f} mistakes to count, 10 or more",
      words={"its mistakes do not look like its right answers: {share_mistakes_unsure:.0%} of the mistakes come with "
             "a top probability below {sure:.2f}, more than three times":
             Q("share_mistakes_unsure") > 3 * Q("share_right_unsure"),
             "10 or more": Q("mistakes") >= 10},
      others="{share_mistakes_unsure:.0%} of {mistakes:.0f} mistakes and {share_right_unsure:.1%} of the right answers "
             "come with a top probability below {sure:.2f}", setup=("come with a top probability below",),
      note="share of mistakes with top probability < 0.95 exceeds three times that of right answers",
      scope=EVERY_RUN, models=('calling-game',))(
    _mistake_numbers)

claim("hallucination.after-wrong-call", "hallucination",
      "On {runs}, on the positions that follow a wrong call, where the rules fix the rest of the round (the <SEP>, "
      "the loser's name, perde, <EOS>), its top word breaks the rules on {share_wrong_after_wrong:.1%} of them, more "
      "than three times its rate at the five kinds of prompts ({after_ratio:.0f} times)",
      words={"more than three times its rate at the five kinds of prompts": Q("after_ratio") > 3},
      others="it breaks them on {share_wrong_after_wrong:.1%} of those positions, {after_ratio:.1f} times its rate "
             "elsewhere",
      note="the mistake rate on the fixed positions after a wrong call exceeds three times the rate at the "
           "five kinds",
      scope=EVERY_RUN, models=('calling-game',))(
    _mistake_numbers)


@functools.lru_cache(maxsize=None)
def _flag_groups(seed):
    return labelled_signs(lib.load("calling-game"), n=40, seed=seed, n_random=500)


@functools.lru_cache(maxsize=None)
def _flag_numbers(seed):
    groups = _flag_groups(seed)
    one, half = detector_report(groups, 1.0), detector_report(groups, 0.5)
    imp = groups["impossible"]
    sure = [s for s in imp if s.top_prob > 0.9]
    return {"n_imp": one.impossible.total, "imp_flagged": one.impossible.flagged, "imp_share": one.impossible.share,
            "imp_flagged_half": half.impossible.flagged, "open_flagged": one.legal_open.flagged,
            "open_total": one.legal_open.total, "fixed_flagged": one.legal_fixed.flagged,
            "fixed_total": one.legal_fixed.total, "n_sure": len(sure), "share_sure": len(sure) / len(imp)}


claim("hallucination.flag-weak", "hallucination",
      "On {runs}, a page flatter than one bit flags only {imp_share:.0%} of random impossible prompts, under half (at "
      "half a bit, {imp_share_half:.0%}), but {open_share:.0%} of the legal prompts where the caller may choose, 90% "
      "or more (and {fixed_share:.0%} of those whose word the rules fix); {share_sure:.0%} of the impossible prompts, "
      "more than 30%, get a top word above 0.9",
      words={"a page flatter than one bit flags only {imp_share:.0%} of random impossible prompts, under half":
             Q("imp_share") < 0.5,
             "90% or more": Q("open_share") >= 0.9,
             "more than 30%, get a top word above 0.9": Q("share_sure") > 0.3},
      setup=("at half a bit",),
      others="the one-bit flag catches {imp_share:.0%} of the impossible prompts and {open_share:.0%} of the open "
             "legal ones, and {share_sure:.0%} of the impossible prompts get a top word over 0.9",
      note="the one-bit flag misses most impossible prompts, flags nearly every open legal one, and many "
           "impossible prompts get a sure top word",
      scope=EVERY_RUN, models=('calling-game',))(
    lambda seed: {**(x := _flag_numbers(seed)), "imp_share_half": x["imp_flagged_half"] / x["n_imp"],
                  "open_share": x["open_flagged"] / x["open_total"], "fixed_share": x["fixed_flagged"] / x["fixed_total"]})


# ----------------------------------------------------------------------------- calibration, two regimes
CALIBRATION_BINS = 10
CHECK_SHARE = 0.05   # the least-sure share of answers a person checks by hand
EASY = 0.99          # a position whose top probability is at least this is an easy one


@functools.lru_cache(maxsize=None)
def played_positions(seed: int, rounds: int = HALLUCINATION_ROUNDS):
    """Every position of `rounds` fresh seeded rounds: the model's top probability, whether its top word is
    the word the round went on to play, and every (word, next word) pair the rounds contain."""
    lm = lib.load("calling-game")
    rng = random.Random(seed)
    conf, right, pairs = [], [], set()
    for _ in range(rounds):
        tokens = sample_round(rng, GameOptions())[:lm.model.cfg.n_ctx]
        ids = lm.encode(" ".join(tokens))
        pairs.update(zip(tokens, tokens[1:]))
        with torch.no_grad():
            probs = torch.softmax(lm.model(ids).double(), -1)
        top = probs.argmax(-1)
        for j in range(len(ids) - 1):
            conf.append(float(probs[j, top[j]]))
            right.append(int(top[j]) == ids[j + 1])
    return np.array(conf), np.array(right), frozenset(pairs)


FLOOR_DRAWS = 200    # outcomes drawn from the confidences for the calibrated model's ECE


def calibration_floor(conf, seed: int, draws: int = FLOOR_DRAWS) -> np.ndarray:
    """What a model calibrated exactly scores: the expected calibration error of `draws` sets of outcomes, each
    answer right with the probability its confidence says (a finite sample's error is above 0 even then)."""
    rng = np.random.default_rng(seed)
    return np.array([calibration.expected_calibration_error(conf, rng.random(len(conf)) < conf, CALIBRATION_BINS)
                     for _ in range(draws)])


def _auroc(unsure, mistakes) -> float:
    return calibration.auroc(np.asarray(unsure, float), np.asarray(mistakes, bool))


@functools.lru_cache(maxsize=None)
def _calibration_numbers(seed):
    conf, right, pairs = played_positions(seed)
    fixed = [c for c in judged_cuts(seed) if c[0] != "after-wrong-call"]
    sure = np.array([c[2] for c in fixed])
    wrong = np.array([c[3] for c in fixed])
    entropy = np.array([c[4] for c in fixed])
    margin = np.array([c[5] for c in fixed])
    easy = conf >= EASY
    ece = calibration.expected_calibration_error(conf, right, CALIBRATION_BINS)
    ece_hard = calibration.expected_calibration_error(conf[~easy], right[~easy], CALIBRATION_BINS)
    aurocs = {"top": _auroc(1 - sure, wrong), "entropy": _auroc(entropy, wrong), "margin": _auroc(1 - margin, wrong)}
    groups = _flag_groups(seed)
    imp = [s.top_prob for s in groups["impossible"]]
    legal = [s.top_prob for s in groups["legal_open"] + groups["legal_fixed"]]
    shifted = calibration.auroc(1 - np.array(imp + legal), [True] * len(imp) + [False] * len(legal))
    confident = [s for s in groups["impossible"] if s.top_prob > 0.9]
    local = sum((s.prompt.split()[-1], s.top) in pairs for s in confident)
    caught = calibration.caught_in_top(1 - sure, wrong, CHECK_SHARE)
    auroc_hard = _auroc(1 - conf[~easy], ~right[~easy])
    floor = calibration_floor(conf[~easy], seed)
    legal_fixed = [s.top_prob for s in groups["legal_fixed"]]
    legal_open = [s.top_prob for s in groups["legal_open"]]
    return {"ece_floor": float(floor.mean()), "ece_floor_high": float(np.quantile(floor, 0.95)),
            "floor_ratio": ece_hard / float(floor.mean()), "floor_draws": len(floor),
            "shift_fixed": calibration.auroc(1 - np.array(imp + legal_fixed), [True] * len(imp) + [False] * len(legal_fixed)),
            "shift_open": calibration.auroc(1 - np.array(imp + legal_open), [True] * len(imp) + [False] * len(legal_open)),
            "n_fixed_legal": len(legal_fixed), "n_open_legal": len(legal_open),
            "positions": len(conf), "rounds": HALLUCINATION_ROUNDS, "bins": CALIBRATION_BINS, "easy_at": EASY,
            "easy_share": float(easy.mean()), "easy_acc": float(right[easy].mean()),
            "ece": ece, "ece_hard": ece_hard, "ece_ratio": ece_hard / ece if ece > 0 else float("inf"),
            "accuracy": float(right.mean()), "auroc_all": _auroc(1 - conf, ~right),
            "auroc_hard": auroc_hard, "hard_right": float(right[~easy].mean()),
            "n_fixed": len(fixed), "mistakes": int(wrong.sum()), "check": 100 * CHECK_SHARE, "caught": caught,
            "caught_share": caught / max(1, int(wrong.sum())),
            "auroc_top": aurocs["top"], "auroc_entropy": aurocs["entropy"], "auroc_margin": aurocs["margin"],
            "auroc_gap": aurocs["top"] - auroc_hard,
            "top_lead": aurocs["top"] - max(aurocs["entropy"], aurocs["margin"]),
            "best_reading": max(aurocs, key=aurocs.get),
            "n_imp": len(imp), "n_legal": len(legal), "shift_auroc": shifted, "n_confident": len(confident),
            "local": local, "local_share": local / len(confident) if confident else 0.0}


claim("hallucination.easy-positions", "hallucination",
      "On {runs}, most positions of rounds the game allows are easy: of {positions:,.0f} positions in {rounds:,.0f} "
      "fresh rounds, {easy_share:.0%} get a top probability of {easy_at:.2f} or more, and there the top word is the "
      "one the round went on to play {easy_acc:.1%} of the time",
      words={"most positions of rounds the game allows are easy": Q("easy_share") > 0.5},
      others="{easy_share:.0%} of the positions get a top probability of {easy_at:.2f} or more",
      setup=("or more",),
      note="over half the positions of allowed rounds have a top probability of 0.99 or more",
      scope=EVERY_RUN, models=('calling-game',))(_calibration_numbers)

claim("hallucination.calibration-hard", "hallucination",
      "On {runs}, the expected calibration error over the hard positions, those below {easy_at:.2f}, is "
      "{ece_hard:.3f} ({bins:.0f} bins of confidence, equal in width), {floor_ratio:.1f} times what a model "
      "calibrated exactly would score on as many positions with the same confidences ({ece_floor:.3f}, its outcomes "
      "drawn from them {floor_draws:.0f} times), and so not calibrated exactly",
      words={"and so not calibrated exactly": Q("ece_hard") > Q("ece_floor_high")},
      others="it is {ece_hard:.3f}, and a perfectly calibrated model would score {ece_floor:.3f} on average",
      setup=("the hard positions, those below", "what a model calibrated exactly would score", "equal in width",
             "with the same confidences"),
      note="the expected calibration error on the positions with a top probability below 0.99 exceeds the 95th "
           "percentile of what a calibrated model (outcomes drawn from the same confidences) scores there",
      scope=EVERY_RUN, models=('calling-game',))(_calibration_numbers)

claim("hallucination.detectors", "hallucination",
      "On {runs}, ranking the {n_fixed:,.0f} prompts whose next word the rules fix by how unsure the page is, to find "
      "the model's own mistakes, three readings of the page do about as well as each other: one minus the top "
      "probability reaches an AUROC of {auroc_top:.2f}, the entropy {auroc_entropy:.2f} and one minus the margin "
      "{auroc_margin:.2f}, all above 0.9; checking the least-sure {check:.0f}% by the top probability catches "
      "{caught_share:.0%} of each run's mistakes, more than half",
      words={"three readings of the page do about as well as each other":
             (abs(Q("auroc_top") - Q("auroc_entropy")) < 0.02, abs(Q("auroc_top") - Q("auroc_margin")) < 0.02,
              abs(Q("auroc_entropy") - Q("auroc_margin")) < 0.02),
             "all above 0.9": (Q("auroc_top") > 0.9, Q("auroc_entropy") > 0.9, Q("auroc_margin") > 0.9),
             "more than half": Q("caught_share") > 0.5},
      others="the top probability reaches {auroc_top:.2f}, the entropy {auroc_entropy:.2f} and the margin "
             "{auroc_margin:.2f}, and the least-sure {check:.0f}% hold {caught_share:.0%} of the mistakes",
      setup=("the least-sure",),
      note="AUROC of one minus the top probability, the entropy and one minus the margin at ranking the model's "
           "mistakes on fixed-word prompts: each above 0.9, every two within 0.02; the least-sure 5% hold "
           "most mistakes",
      scope=EVERY_RUN, models=('calling-game',))(_calibration_numbers)

claim("hallucination.allowed-auroc", "hallucination",
      "On {runs}, on the hard positions of the allowed rounds, where a top word the round did not play is usually "
      "an open choice taken another way, one minus the top probability ranks the positions whose top word was not "
      "played first with an AUROC of {auroc_hard:.2f}, above 0.8: there a low top probability flags words taken "
      "another way, choices the rules allow",
      words={"above 0.8": Q("auroc_hard") > 0.8},
      others="it ranks them with an AUROC of {auroc_hard:.2f}",
      setup=("a top word the round did not play", "whose top word was not played"),
      note="on the hard positions (top probability below 0.99) of allowed rounds, the AUROC for a top word the round "
           "did not play is above 0.8",
      scope=EVERY_RUN, models=('calling-game',))(_calibration_numbers)

claim("hallucination.shift-blind", "hallucination",
      "On {runs}, telling the {n_imp:.0f} random impossible prompts from legal ones, a different task from finding "
      "the model's mistakes, one minus the top probability does no better than a coin against the "
      "{n_fixed_legal:.0f} legal prompts whose word the rules fix (an AUROC of {shift_fixed:.2f}, between 0.4 and "
      "0.6), and against the {n_open_legal:.0f} where the caller may choose it ranks the impossible prompts as the "
      "surer ones (an AUROC of {shift_open:.2f}, below 0.1)",
      words={"does no better than a coin against the {n_fixed_legal:.0f} legal prompts whose word the rules fix (an "
             "AUROC of {shift_fixed:.2f}, between 0.4 and 0.6)": (Q("shift_fixed") > 0.4, Q("shift_fixed") < 0.6),
             "ranks the impossible prompts as the surer ones (an AUROC of {shift_open:.2f}, below 0.1)":
             Q("shift_open") < 0.1},
      others="the AUROC is {shift_fixed:.2f} against the fixed-word prompts and {shift_open:.2f} against the open ones",
      note="one minus the top probability: AUROC between 0.4 and 0.6 for impossible against fixed-word legal prompts, "
           "below 0.1 against open legal prompts",
      scope=EVERY_RUN, models=('calling-game',))(_calibration_numbers)

claim("hallucination.local-grammar", "hallucination",
      "On {runs}, of the impossible prompts answered above 0.9, most ({local_share:.0%}) get a word that follows the "
      "prompt's last word somewhere in the game: the local grammar, applied where the whole prompt breaks the rules",
      words={"most ({local_share:.0%})": Q("local_share") > 0.5}, setup=("answered above 0.9",),
      others="{local_share:.0%} of them get such a word",
      note="most confident answers to impossible prompts follow the last word's local grammar",
      scope=EVERY_RUN, models=('calling-game',))(_calibration_numbers)
