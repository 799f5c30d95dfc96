"""The claims of the chapter `chapters/part3/real-model.md`, each with its measurement.

Every one is a fact about this pretrained model (SmolLM2-135M-Instruct's fixed weights, as MiniLM's claims
are in Part 2), measured over the prompts of the menu by group (`prompts.GROUPS`), from the build's runs
(`stored.menu_runs()`: the full next-token logits and the lens after every block, at the last position).
"""
from __future__ import annotations

import functools

import numpy as np

from lib.analysis.calibration import auroc, auroc_interval, median_difference_interval
from lib.chapters.part3.real_model import decoding, stored
from lib.claims.registry import THIS_RUN, claim
from lib.claims.words import Max, Q
from lib.model import smollm2
from lib.explorers.definition import TEMPERATURES
from lib.model.decoding import find_loop

HALF = 15        # half of SmolLM2's 30 blocks
TOP_P = 0.9


def _softmax(logits, t: float = 1.0) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64) / t
    z = np.exp(z - z.max())
    return z / z.sum()


def entropy_bits(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def nucleus(p: np.ndarray, top_p: float = TOP_P) -> int:
    """How many tokens top-p keeps (the smallest best set whose mass reaches p)."""
    s = np.sort(p)[::-1]
    return int(np.searchsorted(np.cumsum(s), top_p) + 1)


def first_lead(lens: list[dict]) -> int:
    """The first stage (0 the embedding, b + 1 after block b) from which the final answer stays on top."""
    answer = lens[-1]["top"][0][0]
    on_top = [s["top"][0][0] == answer for s in lens]
    return next(i for i in range(len(on_top)) if all(on_top[i:]))


@functools.lru_cache(maxsize=1)
def per_prompt() -> dict[str, dict]:
    """Each menu prompt's numbers: its group, top token and probability, entropy, top-p 0.9's count, the
    stage from which the lens's top token is the answer, and the answer's lens probability half way."""
    out = {}
    for r in stored.menu_runs():
        p = _softmax(r.logits)
        out[r.text] = {"group": r.group, "top": r.summary.tokens[0], "p_top": float(p.max()),
                       "entropy": entropy_bits(p), "nucleus": nucleus(p), "first": first_lead(r.lens),
                       "half_on_top": r.lens[HALF]["top"][0][0] == r.lens[-1]["top"][0][0],
                       "p_half": r.lens[HALF]["answer"]}
    return out


def _group(name: str, key: str) -> list[float]:
    return [x[key] for x in per_prompt().values() if x["group"] == name]


def _named(numbers: dict) -> dict:
    """The numbers, with how SmolLM2's file stores the weights they come from (`smollm2.quantisation`)."""
    return {**numbers, "quant": smollm2.quantisation(short=True)}


@claim("real-model.sharp-and-flat", "real-model",
       "Over the {n_fact:.0f} prompts whose next word the world fixes, SmolLM2's page ({quant}) carries a median of "
       "{fact_med:.1f} bits (from {fact_lo:.1f} to {fact_hi:.1f}) and top-p {top_p} keeps a median of {fact_keep:.0f} "
       "tokens; over the {n_open:.0f} open prompts, more bits: {open_med:.1f} (from {open_lo:.1f} to {open_hi:.1f}), "
       "the medians {bits_diff:.1f} bits apart with a 95% bootstrap interval of {bits_diff_lo:.3f} to "
       "{bits_diff_hi:.1f}, above 0, though barely; top-p keeps a median of {open_keep:.0f} tokens there, a "
       "difference of {keep_diff:.0f} whose interval, {keep_diff_lo:.0f} to {keep_diff_hi:.0f}, holds 0: on so few "
       "prompts that difference is no finding",
       words={"more bits": Q("fact_med") < Q("open_med"), "above 0": Q("bits_diff_lo") > 0,
              "holds 0: on so few prompts that difference is no finding":
              (Q("keep_diff_lo") <= 0, Q("keep_diff_hi") >= 0)},
       seeded=False, scope=THIS_RUN,
       note="median entropy and top-p 0.9 count: fixed-answer prompts below open ones (SmolLM2's weights)")
def _(seed):
    fe, oe = _group("fact", "entropy"), _group("open", "entropy")
    fk, ok = _group("fact", "nucleus"), _group("open", "nucleus")
    bits, keep = median_difference_interval(fe, oe), median_difference_interval(fk, ok)
    return {"n_fact": len(fe), "fact_med": float(np.median(fe)), "fact_lo": min(fe), "fact_hi": max(fe),
            "n_open": len(oe), "open_med": float(np.median(oe)), "open_lo": min(oe), "open_hi": max(oe),
            "fact_keep": float(np.median(fk)), "open_keep": float(np.median(ok)), "top_p": TOP_P,
            "bits_diff": float(np.median(oe) - np.median(fe)), "bits_diff_lo": bits[0], "bits_diff_hi": bits[1],
            "keep_diff": float(np.median(ok) - np.median(fk)), "keep_diff_lo": keep[0], "keep_diff_hi": keep[1],
            "overlap": max(fe) > min(oe), "quant": smollm2.quantisation(short=True)}


@claim("real-model.lens-late", "real-model",
       "Read through the logit lens, SmolLM2's final answer ({quant}) leads late: over the {n:.0f} prompts of the "
       "menu it becomes the lens's top token for good only after block {median:.0f} on the median prompt, in the last "
       "third of the blocks (numbered 0 to 29; on {last_only:.0f} of the {n:.0f} only after the last; the earliest, "
       "after block {earliest:.0f}); half way, after block {half:.0f}, it is the top token on {on_top_half:.0f} of "
       "them, a quarter or fewer, and the median probability the lens gives it there is {p_half:.1e}",
       words={"only after block {median:.0f} on the median prompt, in the last third of the blocks":
              Q("median") >= 20,
              "on {last_only:.0f} of the {n:.0f} only after the last": Q("last_only") <= Q("n"),
              "a quarter or fewer": Q("on_top_half") <= Q("n") / 4},
       setup=("half way, after block",),
       seeded=False, scope=THIS_RUN,
       note="the lens's top token equals the final answer only in the last third of the blocks on the median prompt")
def _(seed):
    firsts = [x["first"] - 1 for x in per_prompt().values()]          # stage b + 1 is after block b
    return {"n": len(firsts), "median": float(np.median(firsts)), "earliest": min(firsts), "half": HALF - 1,
            "last_only": sum(f == 29 for f in firsts),
            "on_top_half": sum(x["half_on_top"] for x in per_prompt().values()),
            "p_half": float(np.median([x["p_half"] for x in per_prompt().values()])),
            "quant": smollm2.quantisation(short=True)}


@claim("real-model.made-up-sure", "real-model",
       "On so few prompts a flat page cannot be shown to flag an invented fact: on the {n_made:.0f} prompts about "
       "things that do not exist SmolLM2's top probability ({quant}) has a median of {made_med:.2f} (from "
       "{made_lo:.2f} to {made_hi:.2f}), on the {n_fact:.0f} real facts {fact_med:.2f}; as a detector of the invented "
       "ones among the {n:.0f}, one minus the top probability has an AUROC of {auc:.2f}, whose 95% interval, from "
       "resampling the prompts of each kind, runs from {auc_lo:.2f} to {auc_hi:.2f}, a coin's 0.5 within it",
       words={"cannot be shown to flag an invented fact": Q("auc_lo") <= 0.5,
              "a coin's 0.5 within it": (Q("auc_lo") <= 0.5, Q("auc_hi") >= 0.5)},
       setup=("prompts about things that do not exist",),
       seeded=False, scope=THIS_RUN,
       note="1 - top probability against invented-fact prompts among real-fact ones: the AUROC's bootstrap 95% interval "
            "(2,000 resamples of each kind) holds 0.5")
def _(seed):
    made, fact = _group("made-up", "p_top"), _group("fact", "p_top")
    scores = [1 - p for p in made + fact]
    labels = [True] * len(made) + [False] * len(fact)
    lo, hi = auroc_interval(scores, labels, seed=seed)
    return {"n_made": len(made), "made_med": float(np.median(made)), "made_lo": min(made), "made_hi": max(made),
            "n_fact": len(fact), "fact_med": float(np.median(fact)), "n": len(made) + len(fact),
            "auc": float(auroc(scores, labels)), "auc_lo": lo, "auc_hi": hi, "quant": smollm2.quantisation(short=True)}


@claim("real-model.summary-bound", "real-model",
       "Kept as its best {top:.0f} logits and a histogram of the other {rest:,.0f} in bins {width} logits wide, "
       "each of the {n:.0f} prompts' pages stays within {worst:.1e} of the full softmax at all {temps:.0f} "
       "temperatures the slider reaches, from {t_lo} to {t_hi}",
       words={"stays within {worst:.1e} of the full softmax at all {temps:.0f} temperatures":
              Q("worst") < Q("bound")},
       seeded=False, scope=THIS_RUN,
       note="the website's summary of each menu page: every kept probability and the rest's total within 1e-3")
def _(seed):
    runs = stored.menu_runs()
    return {"top": stored.TOP, "rest": len(runs[0].logits) - stored.TOP, "width": stored.BIN, "n": len(runs),
            "worst": stored.menu_bound(), "temps": len(TEMPERATURES), "t_lo": TEMPERATURES[0],
            "t_hi": TEMPERATURES[-1], "bound": stored.BOUND}



# ----------------------------------------------------------------------------- decoding beyond one roll
REPEAT = 8           # a continuation "repeats itself" when a stretch of this many tokens occurs in it twice
MIN_P = decoding.MIN_P
HOT = decoding.HOT


@claim("real-model.greedy-repeats", "real-model",
       "Continued greedily for {long:.0f} tokens by SmolLM2 ({quant}), {greedy4:.0f} of the {n:.0f} open prompts "
       "repeat a stretch of 4 "
       "tokens and {greedy:.0f} one of {repeat:.0f} tokens or more (the longest, {greedy_max:.0f} tokens; on average "
       "{greedy_rep:.0%} of a continuation's 4-token stretches occur in it twice); with a repetition penalty of "
       "{penalty}, fewer: {penalised4:.0f} and {penalised:.0f} do (the longest repeat, {penalised_max:.0f} tokens); "
       "sampled at temperature {hot} with min-p {min_p}, fewer too: {sampled4:.0f} and {sampled:.0f} (the longest, "
       "{sampled_max:.0f} tokens), and each repeats fewer 4-token stretches than greedy on average; greedy's "
       "continuation ends in a stretch repeated three times in a row on {loops:.0f} of the {n:.0f}",
       words={"{greedy:.0f} one of {repeat:.0f} tokens or more": Q("greedy") >= Q("n") / 5,
              "fewer: {penalised4:.0f} and {penalised:.0f} do": Q("penalised") < Q("greedy"),
              "fewer too: {sampled4:.0f} and {sampled:.0f}": Q("sampled") < Q("greedy"),
              "each repeats fewer 4-token stretches than greedy on average":
              Q("greedy_rep") > Max("penalised_rep", "sampled_rep")},
       setup=("occur in it twice",),
       seeded=False, scope=THIS_RUN,
       note="greedy continuations of the open prompts repeat 8-token stretches on at least a fifth; the penalty and "
            "a hot sample cut by min-p on fewer, and repeat fewer 4-token stretches on average")
def _(seed):
    runs = decoding.runs()
    out = {"long": decoding.LONG, "n": len(runs["greedy"]), "repeat": REPEAT, "penalty": decoding.PENALTY,
           "quant": smollm2.quantisation(short=True),
           "hot": HOT, "min_p": MIN_P,
           "loops": sum(find_loop(r["tokens"]) is not None for r in runs["greedy"])}
    for key, method in (("greedy", "greedy"), ("penalised", "greedy, penalty"), ("sampled", "sampled, min-p")):
        longest = [decoding.longest_repeat(r["tokens"]) for r in runs[method]]
        out.update({key: sum(x >= REPEAT for x in longest), key + "4": sum(x >= 4 for x in longest),
                    key + "_max": max(longest),
                    key + "_rep": float(np.mean([decoding.repeated_share(r["tokens"]) for r in runs[method]]))})
    return out


@claim("real-model.beam-dull", "real-model",
       "Over the first {new:.0f} tokens of each open prompt's continuation, SmolLM2's own surprisal ({quant}) has a "
       "median of {beam:.2f} bits a token for the best of {beams:.0f} beams, less than greedy's {greedy:.2f}, itself "
       "less than the {sampled:.2f} of a sample at temperature 1; beam search's best also stops at an end of turn "
       "within {new:.0f} tokens on {beam_short:.0f} of the {n:.0f} prompts (the shortest, {beam_min:.0f} tokens)",
       words={"less than greedy's {greedy:.2f}, itself less than": (Q("beam") < Q("greedy"), Q("greedy") < Q("sampled"))},
       setup=("stops at an end of turn within",),
       seeded=False, scope=THIS_RUN,
       note="median surprisal per token: beam below greedy below sampling, on the open prompts")
def _(seed):
    runs = decoding.runs()
    new = decoding.NEW

    def med(method):
        return float(np.median([decoding.surprisal_bits(r["logprobs"][:new]) for r in runs[method]]))
    lengths = [len(r["tokens"]) for r in runs["beam"]]
    return {"new": new, "beams": decoding.BEAMS, "beam": med("beam"), "greedy": med("greedy"), "sampled": med("sampled"),
            "n": len(lengths), "beam_short": sum(n < new for n in lengths), "beam_min": min(lengths),
            "quant": smollm2.quantisation(short=True)}


@claim("real-model.sequence-length", "real-model",
       "The log-probability of SmolLM2's greedy continuation ({quant}) as a whole falls with its length: after "
       "{a:.0f}, {b:.0f} and {c:.0f} tokens it has a median of {lp_a:.1f}, {lp_b:.1f} and {lp_c:.1f} (natural "
       "logarithms) over the open prompts, while its mean per token stays within half a nat, between {tok_lo:.2f} "
       "and {tok_hi:.2f}",
       words={"falls with its length": (Q("lp_a") > Q("lp_b"), Q("lp_b") > Q("lp_c")),
              "stays within half a nat": Q("tok_hi") - Q("tok_lo") < 0.5}, seeded=False,
       scope=THIS_RUN, note="the summed log-probability falls with length; the per-token mean does not")
def _(seed):
    rows = [r["logprobs"] for r in decoding.runs()["greedy"] if len(r["logprobs"]) >= decoding.LONG]
    cuts = (decoding.LONG // 4, decoding.LONG // 2, decoding.LONG)
    sums = [float(np.median([sum(x[:c]) for x in rows])) for c in cuts]
    means = [s / c for s, c in zip(sums, cuts)]
    return {"a": cuts[0], "b": cuts[1], "c": cuts[2], "lp_a": sums[0], "lp_b": sums[1], "lp_c": sums[2],
            "tok_lo": min(means), "tok_hi": max(means), "n": len(rows), "quant": smollm2.quantisation(short=True)}


@claim("real-model.min-p", "real-model",
       "On the menu's {n_fact:.0f} fact and {n_open:.0f} open pages of SmolLM2 ({quant}), min-p {min_p} keeps a "
       "median of {f1:.1f} and {o1:.1f} tokens at temperature 1, where top-p {top_p} keeps {tf1:,.1f} and "
       "{to1:,.1f}; heated to {hot}, min-p keeps {fh:.1f} and {oh:.1f}, fewer on the sharper fact pages, and top-p "
       "more than ten times as many, {tfh:,.0f} and {toh:,.0f}",
       words={"fewer on the sharper fact pages": Q("fh") < Q("oh"),
              "more than ten times as many": (10 * Q("oh") < Q("tfh"), 10 * Q("oh") < Q("toh"))}, seeded=False,
       scope=THIS_RUN, note="heated, min-p keeps tens of tokens and follows the page's sharpness; top-p keeps thousands")
def _(seed):

    def med(group, t, which):
        return float(np.median([decoding.kept_counts(r.logits, t, MIN_P, TOP_P)[which]
                                for r in stored.menu_runs() if r.group == group]))
    return {"n_fact": len(_group("fact", "p_top")), "n_open": len(_group("open", "p_top")), "min_p": MIN_P,
            "top_p": TOP_P, "hot": HOT, "f1": med("fact", 1.0, 0), "o1": med("open", 1.0, 0), "tf1": med("fact", 1.0, 1),
            "to1": med("open", 1.0, 1), "fh": med("fact", HOT, 0), "oh": med("open", HOT, 0),
            "tfh": med("fact", HOT, 1), "toh": med("open", HOT, 1), "quant": smollm2.quantisation(short=True)}
