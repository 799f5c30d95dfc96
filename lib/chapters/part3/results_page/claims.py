"""The claims of the chapter `chapters/part3/results-page.md`, each with its measurement."""
from __future__ import annotations

import functools

import numpy as np
import torch

import lib
from lib.claims.registry import EVERY_RUN, THIS_RUN, claim
from lib.chapters.part3.results_page.decoding import BEAMS, FULL, round_logprobs, searched_over_runs
from lib.chapters.part3.results_page.runs import broken_over_runs
from lib.content.corpora.calling_game import check_round, next_token_distribution
from lib.content.prompt_sets import PER_KIND, prompt_set
from lib.model.generate import generate, sample_many

ROUNDS_SAMPLED = 200


@functools.lru_cache(maxsize=None)
def _sampled_tokens(seed: int, temperature: float = 1.0, n: int = ROUNDS_SAMPLED) -> list[list[str]]:
    lm = lib.load("calling-game")
    eos = lm.vocab.id("<EOS>")
    with torch.no_grad():
        rounds = sample_many(lm.model, lm.encode("<BOS>"), n, lm.model.cfg.n_ctx, seed=seed,
                             temperature=temperature, stop=eos)
    return [lm.vocab.decode(r) for r in rounds]


@functools.lru_cache(maxsize=None)
def _sampled_rounds(seed: int, temperature: float = 1.0, n: int = ROUNDS_SAMPLED) -> list[tuple[bool, str]]:
    return [check_round(r) for r in _sampled_tokens(seed, temperature, n)]


def _broken_numbers(seed):
    judged = _sampled_rounds(seed)
    broken = [why for ok, why in judged if not ok]
    after_wrong = [why for why in broken if "after a wrong call" in why]
    return {"n": len(judged), "broken": len(broken), "share": len(broken) / len(judged),
            "after_wrong": len(after_wrong), "share_after_wrong": len(after_wrong) / max(1, len(broken))}


claim("results-page.broken-rounds", "results-page",
      "Sampled at temperature 1 from <BOS>, {broken:.0f} of {n:.0f} whole rounds ({share:.0%}) break the "
      "rules somewhere; {after_wrong:.0f} of those break them after a wrong call, by ending the round "
      "other than <SEP>, the caller's name, perde, <EOS>",
      holds=lambda x: 0.1 <= x["share"] <= 0.4 and x["share_after_wrong"] > 0.5,
      note="10-40% of 200 sampled rounds break the rules, most of them in the ending after a wrong call",
      scope=EVERY_RUN, models=('calling-game',))(
    _broken_numbers)

PAGE_ROUND_START = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama"
PAGE_ROUND_SEED = 3


@claim("results-page.page-round", "results-page",
       "The round this page generates (temperature 1, seed {seed:.0f}) breaks the rules; the rules checker "
       "says: {why}", holds=lambda x: x["ok"] == 0, seeded=False,
       note="the page's own generated round is one check_round rejects",
       scope=THIS_RUN, models=('calling-game',))
def _page_round(seed):
    lm = lib.load("calling-game")
    out = generate(lm.model, lm.encode(PAGE_ROUND_START), lm.model.cfg.n_ctx, use_cache=True, do_sample=True,
                   seed=PAGE_ROUND_SEED, stop=[lm.vocab.id("<EOS>")])
    ok, why = check_round(lm.vocab.decode(out.tokens))
    return {"seed": PAGE_ROUND_SEED, "ok": int(ok), "why": why, "text": lm.vocab.to_text(out.tokens)}


@functools.lru_cache(maxsize=None)
def _open_page_numbers(seed):
    lm = lib.load("calling-game")
    tvs, rules_top = [], 0
    for p in prompt_set("callee-choice", PER_KIND, seed, max_tokens=lm.model.cfg.n_ctx):
        with torch.no_grad():
            probs = torch.softmax(lm.model(lm.encode(p.text))[-1].double(), -1).numpy()
        rules = next_token_distribution(p.tokens)
        want = np.array([rules.get(t, 0.0) for t in lm.vocab.tokens])
        tvs.append(0.5 * float(np.abs(probs - want).sum()))
        rules_top += want[int(probs.argmax())] > 0
    return {"n": len(tvs), "median_tv": float(np.median(tvs)), "max_tv": float(max(tvs)), "legal_top": int(rules_top)}


claim("results-page.open-pages-follow-rules", "results-page",
      "Where the rules leave the callee open ({n:.0f} prompts cut right after chiama), the model's page stays "
      "close to the rules' own: the total variation between the two is {median_tv:.3f} at the median and at "
      "most {max_tv:.3f}, and the top word is one the rules allow on {legal_top:.0f} of them",
      holds=lambda x: x["median_tv"] < 0.1 and x["legal_top"] >= 0.95 * x["n"],
      note="callee-choice pages: median total variation from the rules' page below 0.1",
      scope=EVERY_RUN, models=('calling-game',))(_open_page_numbers)


def _temperature_numbers(seed):
    one = _sampled_rounds(seed, 1.0)
    two = _sampled_rounds(seed, 2.0)
    return {"n": len(one), "broken_1": sum(not ok for ok, _ in one), "broken_2": sum(not ok for ok, _ in two)}


claim("results-page.hotter-breaks-more", "results-page",
      "Of {n:.0f} whole rounds sampled from <BOS>, {broken_1:.0f} break the rules at temperature 1 and "
      "{broken_2:.0f} at temperature 2",
      holds=lambda x: x["broken_2"] > x["broken_1"],
      note="heating the page from temperature 1 to 2 breaks more whole rounds (not always many more)",
      scope=THIS_RUN, models=('calling-game',))(
    _temperature_numbers)


def _breaking_token(tokens: list[str]) -> int | None:
    """The position of the first token the rules give no chance after the tokens before it."""
    for j in range(1, len(tokens)):
        if next_token_distribution(tokens[:j]).get(tokens[j], 0) == 0:
            return j
    return None


@functools.lru_cache(maxsize=None)
def _breaking_numbers(seed):
    lm = lib.load("calling-game")
    rounds = _sampled_tokens(seed)
    top, probs = 0, []
    broken = [(r, j) for r in rounds if (j := _breaking_token(r)) is not None]
    for r, j in broken:
        with torch.no_grad():
            page = torch.softmax(lm.model(lm.encode(" ".join(r[:j])))[-1].double(), -1)
        tok = lm.vocab.id(r[j])
        top += int(page.argmax()) == tok
        probs.append(float(page[tok]))
    cool = sum(not ok for ok, _ in _sampled_rounds(seed, 0.5))
    return {"n": len(rounds), "broken": len(broken), "top": top, "share_top": top / max(1, len(broken)),
            "median_p": float(np.median(probs)) if probs else 0.0, "cool": cool,
            "checked": sum(not ok for ok, _ in _sampled_rounds(seed))}


claim("results-page.breaking-token", "results-page",
      "Yet an unlucky draw is not the whole story. In {broken:.0f} of the {n:.0f} rounds at temperature 1 a token breaks "
      "the rules; in {top:.0f} of them ({share_top:.0%}) that token was the model's own top word at that point, "
      "and the median probability the model gave it was {median_p:.2f}, not a long shot. Cooled to "
      "temperature 0.5, {cool:.0f} of {n:.0f} rounds still break the rules",
      holds=lambda x: x["share_top"] > 0.25 and x["median_p"] > 0.1 and x["cool"] > 0.5 * x["checked"],
      note="a quarter or more of the breaking tokens are the model's top word; the median breaking token has "
           "probability above 0.1; temperature 0.5 leaves more than half the broken rounds",
      scope=EVERY_RUN, models=('calling-game',))(_breaking_numbers)


# ----------------------------------------------------------------------------- over the shipped runs
@claim("results-page.temperature-over-runs", "results-page",
       "Over the {runs:.0f} shipped runs, {lo_1:.0%} to {hi_1:.0%} of rounds break the rules at temperature 1; "
       "at 0.5 still {lo_05:.0%} to {hi_05:.0%} (fewer than at 1 on {cooler:.0f} of the runs), and at 2 more than "
       "at 1 on {hotter:.0f}",
       holds=lambda x: x["lo_05"] >= 0.15 and x["hotter"] > x["runs"] / 2, scope=EVERY_RUN, models=("calling-game",),
       covers_runs=True, seeded=False,
       note="broken rounds at temperatures 0.5, 1 and 2 on every shipped run: cooling leaves many broken rounds")
def _temperature_over_runs(seed):
    per = list(broken_over_runs(seed).values())
    return {"runs": len(per), "lo_1": min(r[1.0] for r in per), "hi_1": max(r[1.0] for r in per),
            "lo_05": min(r[0.5] for r in per), "hi_05": max(r[0.5] for r in per),
            "cooler": sum(r[0.5] < r[1.0] for r in per), "hotter": sum(r[2.0] > r[1.0] for r in per)}


# ----------------------------------------------------------------------------- whole rounds: greedy, beams, length
@claim("results-page.whole-round-length", "results-page",
       "Over {n:.0f} rounds sampled from <BOS>, the log-probability of a whole round falls with its length "
       "(their correlation is {corr:.2f}): the {full:.0f} rounds that reach their eighth call have a median "
       "log-probability of {full_med:.1f}, the rounds a wrong call cuts short (median {short_len:.0f} tokens) "
       "{short_med:.1f}; per token the two are alike, {full_tok:.2f} and {short_tok:.2f}",
       holds=lambda x: x["corr"] < -0.8 and x["short_med"] > x["full_med"] + 3
       and abs(x["full_tok"] - x["short_tok"]) < 0.1,
       note="sum of log-probabilities of 200 sampled rounds: strongly negative correlation with length; per-token "
            "means of full and cut-short rounds within 0.1",
       scope=EVERY_RUN, models=('calling-game',))
def _whole_round_length(seed):
    lm = lib.load("calling-game")
    rounds = [[lm.vocab.id(t) for t in r] for r in _sampled_tokens(seed)]      # the rounds the claims above judge
    lengths, logp = np.array([len(r) - 1 for r in rounds]), round_logprobs(lm, rounds)
    full = lengths >= FULL
    return {"n": len(lengths), "corr": float(np.corrcoef(lengths, logp)[0, 1]), "full": int(full.sum()),
            "full_med": float(np.median(logp[full])), "short_med": float(np.median(logp[~full])),
            "short_len": float(np.median(lengths[~full])),
            "full_tok": float(np.median(logp[full] / lengths[full])),
            "short_tok": float(np.median(logp[~full] / lengths[~full]))}


@claim("results-page.beam-prefers-short", "results-page",
       "On the {runs:.0f} shipped runs, greedy decoding plays a round that keeps the rules on {greedy_valid:.0f}; "
       "beam search with {beams:.0f} beams finds a whole round more probable than greedy's on {beam_better:.0f} "
       "of them, but ranked by the sum of log-probabilities its best round is shorter than a full round on "
       "{short:.0f} and breaks the rules on {broken:.0f}; ranked by the mean per token (a length penalty of 1), "
       "shorter on {short_mean:.0f} and broken on {broken_mean:.0f}",
       holds=lambda x: x["broken"] > x["broken_mean"] and x["short"] > x["runs"] / 2 and x["beam_better"] > x["runs"] / 2,
       note="beam search by summed log-probability picks short rounds (broken on most runs); the per-token "
            "mean breaks fewer",
       scope=EVERY_RUN, models=("calling-game",), covers_runs=True, seeded=False)
def _beam_prefers_short(seed):
    per = list(searched_over_runs().values())
    return {"runs": len(per), "beams": BEAMS, "greedy_valid": sum(r["greedy"]["valid"] for r in per),
            "beam_better": sum(r["beam"]["logprob"] > r["greedy"]["logprob"] + 1e-9 for r in per),
            "short": sum(r["beam"]["length"] < FULL for r in per), "broken": sum(not r["beam"]["valid"] for r in per),
            "short_mean": sum(r["beam, mean per token"]["length"] < FULL for r in per),
            "broken_mean": sum(not r["beam, mean per token"]["valid"] for r in per)}
