"""The claims of the chapter `chapters/part3/mechanism.md`, each with its measurement.

The labelled prompts are `lib.content.prompt_sets.fixed_and_open`, drawn with the claim's seed.
"""
from __future__ import annotations

import functools

import numpy as np
import torch

import lib
from lib.chapters.part3.mechanism.query_length import SCALES, length_and_confidence, winner_flips
from lib.analysis.search import model_dictionary, model_query
from lib.claims.registry import EVERY_RUN, THIS_RUN, claim
from lib.claims.words import Q
from lib.content.prompt_sets import fixed_and_open, hand_wired_prompts

HW_PROMPTS = 200


@functools.lru_cache(maxsize=None)
def _length_numbers(seed):
    hw = lib.load("hand-wired")
    stats = length_and_confidence(hw, hand_wired_prompts(HW_PROMPTS, seed))
    return {"n": len(stats.top_probs), "corr_len": stats.correlation_with("query_lengths"),
            "corr_raw": stats.correlation_with("raw_lengths"), "corr_align": stats.correlation_with("alignments"),
            "len_ratio": float(stats.query_lengths.max() / stats.query_lengths.min()),
            "raw_ratio": float(stats.raw_lengths.max() / stats.raw_lengths.min())}


claim("mechanism.layernorm-length", "mechanism",
      "On {runs}, behind the hand-wired model's final LayerNorm the query's length still varies (by a factor of "
      "{len_ratio:.2f} over {n:.0f} prompts cut from its sentences, against {raw_ratio:.1f} before it) and still "
      "tracks confidence: the top probability's rank correlation with the length is above 0.5 ({corr_len:+.2f}; "
      "with the query's alignment to the top word's column, {corr_align:+.2f})",
      words={"rank correlation with the length is above 0.5": Q("corr_len") > 0.5},
      others="the rank correlation with the length is {corr_len:+.2f}",
      note="rank correlation of top probability with query length behind the final LayerNorm above 0.5",
      scope=EVERY_RUN, models=('hand-wired',))(
    _length_numbers)

claim("mechanism.length-over-alignment", "mechanism",
      "Squeezed as it is, the length follows confidence more closely than the alignment does "
      "({corr_len:+.2f} against {corr_align:+.2f})",
      words={"more closely than the alignment does": Q("corr_len") > Q("corr_align")},
      note="behind the final LayerNorm, rank correlation with length exceeds that with alignment",
      scope=THIS_RUN, models=('hand-wired',))(_length_numbers)


@functools.lru_cache(maxsize=None)
def _flip_numbers(seed):
    lm = lib.load("calling-game")
    fixed, open_ = fixed_and_open(seed, lm.model.cfg.n_ctx)
    return {"n_fixed": len(fixed), "n_open": len(open_), "lo": float(min(SCALES)), "hi": float(max(SCALES)),
            "flips_open": winner_flips(lm, open_), "flips_fixed": winner_flips(lm, fixed),
            "flips_open_nobias": winner_flips(lm, open_, bias=False),
            "flips_fixed_nobias": winner_flips(lm, fixed, bias=False)}


claim("mechanism.direction-picks", "mechanism",
      "On {runs}, scaling the query between {lo:.2f} and {hi:.0f} times its length, with the bias set to zero, "
      "never changes the winner, on none of {n_open:.0f} prompts where the rules leave the callee open and none of "
      "{n_fixed:.0f} where they fix the next word",
      words={"never changes the winner, on none of {n_open:.0f} prompts where the rules leave the callee open and "
             "none of {n_fixed:.0f}": (Q("flips_open_nobias").eq(0), Q("flips_fixed_nobias").eq(0))},
      others="it changes the winner on {flips_open_nobias:.0f} open and {flips_fixed_nobias:.0f} fixed prompts",
      note="without the bias, scaling the query never changes the winner (labelled prompts of the seed)",
      scope=EVERY_RUN, models=('calling-game',))(_flip_numbers)

claim("mechanism.bias-settles-ties", "mechanism",
      "With the bias, the same scaling changes the winner on {flips_open:.0f} of the {n_open:.0f} open prompts "
      "and on {flips_fixed:.0f} of the {n_fixed:.0f} fixed ones",
      words={"With the bias, the same scaling changes the winner on {flips_open:.0f}": Q("flips_open") > 0,
             "and on {flips_fixed:.0f} of the {n_fixed:.0f} fixed ones": Q("flips_fixed") <= 0.02 * Q("n_fixed")},
      note="with the bias, the length settles some near-ties where the callee is open, almost none elsewhere",
      scope=THIS_RUN, models=('calling-game',))(
    _flip_numbers)


@functools.lru_cache(maxsize=None)
def _cg_length_numbers(seed):
    lm = lib.load("calling-game")
    fixed, open_ = fixed_and_open(seed, lm.model.cfg.n_ctx)
    stats = length_and_confidence(lm, fixed + open_)
    return {"n": len(stats.top_probs), "corr_len": stats.correlation_with("query_lengths"),
            "corr_align": stats.correlation_with("alignments")}


claim("mechanism.cg-length", "mechanism",
      "On {runs}, in the calling-game model, which has no final LayerNorm, the top probability's rank correlation "
      "with the query's length over {n:.0f} labelled prompts is above 0.5 ({corr_len:+.2f}; with its alignment, "
      "{corr_align:+.2f})",
      words={"is above 0.5": Q("corr_len") > 0.5},
      others="it is {corr_len:+.2f}", setup=("which has no final LayerNorm",),
      note="calling-game: rank correlation of top probability with query length above 0.5",
      scope=EVERY_RUN, models=('calling-game',))(_cg_length_numbers)


@functools.lru_cache(maxsize=None)
def _angle_numbers(seed):
    lm = lib.load("calling-game")
    fixed, open_ = fixed_and_open(seed, lm.model.cfg.n_ctx)
    words, cols = zip(*model_dictionary(lm).items())
    cols = np.array(cols)

    def agree(prompt):
        h = model_query(lm, prompt)
        cos = cols @ h / (np.linalg.norm(cols, axis=1) * np.linalg.norm(h))
        with torch.no_grad():
            logits = lm.model(lm.encode(prompt))[-1]
        return words[int(np.argmax(cos))] == lm.vocab.tokens[int(logits.argmax())]

    agree_fixed, agree_open = sum(agree(p) for p in fixed), sum(agree(p) for p in open_)
    return {"n_fixed": len(fixed), "n_open": len(open_), "agree_fixed": agree_fixed, "agree_open": agree_open,
            "fixed_share": agree_fixed / len(fixed), "open_share": agree_open / len(open_)}


claim("mechanism.angle-vs-dot", "mechanism",
      "On {runs}, ranked by angle alone, the first word is the model's own first word on {fixed_share:.0%} of the "
      "prompts where the rules fix the next word, 95% or more, and on only {open_share:.0%} of those where they "
      "leave the callee open, under 80%",
      words={"95% or more": Q("fixed_share") >= 0.95, "on only {open_share:.0%} of those where they leave the callee "
             "open, under 80%": Q("open_share") < 0.8},
      others="the angle's first word is the model's on {fixed_share:.0%} of the fixed prompts and {open_share:.0%} of "
             "the open ones",
      note="cosine ranking agrees with the model's top word on fixed prompts, much less on open ones",
      scope=EVERY_RUN, models=('calling-game',))(_angle_numbers)
