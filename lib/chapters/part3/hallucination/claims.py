"""The claims of the chapter `chapters/part3/hallucination.md`, each with its measurement."""
from __future__ import annotations

import functools
import random

import numpy as np
import torch

import lib
from lib.analysis import calibration
from lib.analysis.flatness import detector_report, labelled_signs
from lib.claims.registry import claim
from lib.content.corpora.calling_game import GameOptions, next_token_distribution, sample_round
from lib.content.prompt_sets import KINDS, _cuts

HALLUCINATION_ROUNDS = 800
SURE = 0.95   # a top probability at or above this is a "sure" answer


@functools.lru_cache(maxsize=None)
def judged_cuts(seed: int, rounds: int = HALLUCINATION_ROUNDS) -> list[tuple[str, str, float, bool]]:
    """Every distinct prompt cut from `rounds` seeded rounds where the rules fix the next token (the
    five labelled kinds), as (kind, text, the model's top probability, whether its top word breaks the
    rules). One forward pass per round reads every cut in it (the model is causal)."""
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
            out.append((kind, text, float(p[top]), rules.get(lm.vocab.tokens[top], 0) == 0))
    return out


def _mistake_numbers(seed):
    cuts = judged_cuts(seed)
    fixed = [c for c in cuts if c[0] != "after-wrong-call"]
    mistakes = [p for _, _, p, wrong in fixed if wrong]
    right = [p for _, _, p, wrong in fixed if not wrong]
    after_wrong = [wrong for kind, _, _, wrong in cuts if kind == "after-wrong-call"]
    at_wrong = [wrong for kind, _, _, wrong in cuts if kind == "wrong-call"]
    return {"n": len(fixed), "rounds": HALLUCINATION_ROUNDS, "mistakes": len(mistakes),
            "mistakes_unsure": sum(p < SURE for p in mistakes),
            "share_mistakes_unsure": float(np.mean([p < SURE for p in mistakes])) if mistakes else 0.0,
            "share_right_unsure": float(np.mean([p < SURE for p in right])),
            "median_mistake": float(np.median(mistakes)) if mistakes else 1.0,
            "median_right": float(np.median(right)), "sure": SURE,
            "n_at_wrong": len(at_wrong), "wrong_at_wrong": sum(at_wrong),
            "n_after_wrong": len(after_wrong), "wrong_after_wrong": sum(after_wrong),
            "share_wrong_after_wrong": float(np.mean(after_wrong)) if after_wrong else 0.0}


claim("hallucination.mistakes-rare", "hallucination",
      "Over every prompt cut from {rounds:,.0f} fresh rounds where the rules fix the next word "
      "({n:,.0f} distinct prompts), the model's top word breaks the rules on {mistakes:.0f}",
      holds=lambda x: x["mistakes"] / x["n"] < 0.02,
      note="top word against the rules on under 2% of prompts of the five fixed kinds")(_mistake_numbers)

claim("hallucination.mistakes-unsure", "hallucination",
      "Its mistakes do not look like its right answers: {mistakes_unsure:.0f} of the {mistakes:.0f} mistakes "
      "({share_mistakes_unsure:.0%}) come with a top probability below {sure:.2f}, against "
      "{share_right_unsure:.0%} of its right answers; the median top probability is {median_mistake:.2f} "
      "on a mistake and {median_right:.4f} on a right answer",
      holds=lambda x: x["mistakes"] >= 10 and x["share_mistakes_unsure"] > 3 * x["share_right_unsure"],
      note="share of mistakes with top probability < 0.95 exceeds three times that of right answers")(
    _mistake_numbers)

claim("hallucination.after-wrong-call", "hallucination",
      "Right after a wrong call its top word breaks the rules on {wrong_at_wrong:.0f} of {n_at_wrong:.0f} "
      "prompts; on the positions that follow it, where the rules fix the rest of the round (the <SEP>, the "
      "loser's name, perde, <EOS>), on {wrong_after_wrong:.0f} of {n_after_wrong:,.0f} "
      "({share_wrong_after_wrong:.1%}), several times its rate elsewhere",
      holds=lambda x: x["share_wrong_after_wrong"] > 3 * x["mistakes"] / x["n"],
      note="the mistake rate on the fixed positions after a wrong call exceeds three times the rate at the "
           "five kinds")(
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
      "A page flatter than one bit flags {imp_flagged:.0f} of {n_imp:.0f} random impossible prompts "
      "({imp_share:.0%}; at half a bit, {imp_flagged_half:.0f}), and {open_flagged:.0f} of the {open_total:.0f} "
      "legal prompts where the caller may choose (and {fixed_flagged:.0f} of the {fixed_total:.0f} whose word the "
      "rules fix); {n_sure:.0f} of the impossible prompts ({share_sure:.0%}) get a top word above 0.9",
      holds=lambda x: x["imp_share"] < 0.5 and x["open_flagged"] >= 0.9 * x["open_total"] and x["share_sure"] > 0.3,
      note="the one-bit flag misses most impossible prompts, flags nearly every open legal one, and many "
           "impossible prompts get a sure top word")(_flag_numbers)


# ----------------------------------------------------------------------------- calibration, two regimes
CALIBRATION_BINS = 10
CHECK_SHARE = 0.05   # the least-sure share of answers a person checks by hand


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


@functools.lru_cache(maxsize=None)
def _calibration_numbers(seed):
    conf, right, pairs = played_positions(seed)
    fixed = [c for c in judged_cuts(seed) if c[0] != "after-wrong-call"]
    sure = np.array([p for _, _, p, _ in fixed])
    wrong = np.array([w for _, _, _, w in fixed])
    groups = _flag_groups(seed)
    imp = [s.top_prob for s in groups["impossible"]]
    legal = [s.top_prob for s in groups["legal_open"] + groups["legal_fixed"]]
    shifted = calibration.auroc(1 - np.array(imp + legal), [True] * len(imp) + [False] * len(legal))
    confident = [s for s in groups["impossible"] if s.top_prob > 0.9]
    local = sum((s.prompt.split()[-1], s.top) in pairs for s in confident)
    return {"positions": len(conf), "rounds": HALLUCINATION_ROUNDS, "ece": calibration.expected_calibration_error(conf, right, CALIBRATION_BINS),
            "accuracy": float(right.mean()), "bins": CALIBRATION_BINS, "n_fixed": len(fixed), "mistakes": int(wrong.sum()),
            "auroc": calibration.auroc(1 - sure, wrong), "check": 100 * CHECK_SHARE,
            "caught": calibration.caught_in_top(1 - sure, wrong, CHECK_SHARE), "n_imp": len(imp), "n_legal": len(legal),
            "shift_auroc": shifted, "n_confident": len(confident), "local": local,
            "local_share": local / len(confident) if confident else 0.0}


claim("hallucination.calibrated-allowed", "hallucination",
      "On rounds the game allows ({positions:,.0f} positions of {rounds:,.0f} fresh rounds) the top probability is "
      "calibrated: the top word is the one the round went on to play {accuracy:.0%} of the time, and over "
      "{bins:.0f} bins of confidence the expected calibration error is {ece:.4f}. It also finds the model's own "
      "mistakes: over the {n_fixed:,.0f} prompts whose next word the rules fix, one minus the top probability "
      "ranks a mistake above a right answer with probability {auroc:.3f} (the AUROC), and checking the least-sure "
      "{check:.0f}% of answers catches {caught:.0f} of the {mistakes:.0f} mistakes",
      holds=lambda x: x["ece"] < 0.02 and x["auroc"] > 0.9 and x["caught"] > x["mistakes"] / 2,
      note="on allowed rounds: expected calibration error under 0.02, AUROC for the model's mistakes above 0.9, "
           "the least-sure 5% holds most mistakes")(_calibration_numbers)

claim("hallucination.shift-blind", "hallucination",
      "Under shift the same number is blind: as a detector of the {n_imp:.0f} random impossible prompts among "
      "{n_legal:.0f} legal ones, one minus the top probability has an AUROC of {shift_auroc:.2f}, worse than a coin "
      "(0.5): the impossible prompts get surer pages than the legal ones. Of the {n_confident:.0f} impossible prompts answered above 0.9, {local:.0f} "
      "get a word that follows the prompt's last word somewhere in the game: the local grammar, "
      "applied where the whole prompt breaks the rules",
      holds=lambda x: x["shift_auroc"] < 0.6 and x["local_share"] > 0.5,
      note="on shifted prompts the top probability does not separate impossible from legal prompts (AUROC under "
           "0.6); most confident answers to impossible prompts follow the last word's local grammar")(
    _calibration_numbers)
