"""The claims of the chapter `chapters/part3/results-page.md`, each with its measurement."""
from __future__ import annotations

import functools

import numpy as np
import torch

import lib
from lib.claims.registry import EVERY_RUN, THIS_RUN, claim
from lib.claims.words import Q
from lib.chapters.part3.results_page.decoding import BEAMS, FULL, round_logprobs, searched_here
from lib.chapters.part3.results_page.runs import broken
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
      "On {runs}, sampled at temperature 1 from <BOS>, {share:.0%} of {n:.0f} whole rounds break the rules "
      "somewhere, from 10% to 40%; most of those, {share_after_wrong:.0%}, break them after a wrong call, by ending "
      "the round other than <SEP>, the caller's name, perde, <EOS>",
      words={"from 10% to 40%": (Q("share") >= 0.1, Q("share") <= 0.4),
             "most of those": Q("share_after_wrong") > 0.5},
      setup=("by ending the round other than <SEP>",),
      others="{share:.0%} of the rounds break the rules, {share_after_wrong:.0%} of those after a wrong call",
      note="10-40% of 200 sampled rounds break the rules, most of them in the ending after a wrong call",
      scope=EVERY_RUN, models=('calling-game',))(
    _broken_numbers)

PAGE_ROUND_START = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama"
PAGE_ROUND_SEED = 3


@claim("results-page.page-round", "results-page",
       "The round this page generates (temperature 1, seed {seed:.0f}) breaks the rules; the rules checker "
       "says: {why}", words={"breaks the rules": Q("ok").eq(0)}, seeded=False,
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
    return {"n": len(tvs), "median_tv": float(np.median(tvs)), "max_tv": float(max(tvs)), "legal_top": int(rules_top),
            "legal_share": rules_top / len(tvs)}


claim("results-page.open-pages-follow-rules", "results-page",
      "On {runs}, where the rules leave the callee open ({n:.0f} prompts cut right after chiama), the model's page "
      "stays close to the rules' own: the total variation between the two is {median_tv:.3f} at the median, under "
      "0.1 (at most {max_tv:.3f}), and the top word is one the rules allow on {legal_share:.0%} of them, 95% or more",
      words={"stays close to the rules' own: the total variation between the two is {median_tv:.3f} at the median, "
             "under 0.1 (at most {max_tv:.3f})": Q("median_tv") < 0.1,
             "95% or more": Q("legal_share") >= 0.95},
      others="the median total variation is {median_tv:.3f}, and the top word is allowed on {legal_share:.0%}",
      note="callee-choice pages: median total variation from the rules' page below 0.1",
      scope=EVERY_RUN, models=('calling-game',))(_open_page_numbers)


def _temperature_numbers(seed):
    one = _sampled_rounds(seed, 1.0)
    two = _sampled_rounds(seed, 2.0)
    return {"n": len(one), "broken_1": sum(not ok for ok, _ in one), "broken_2": sum(not ok for ok, _ in two)}


claim("results-page.hotter-breaks-more", "results-page",
      "Of {n:.0f} whole rounds sampled from <BOS>, {broken_1:.0f} break the rules at temperature 1 and more, "
      "{broken_2:.0f}, at temperature 2",
      words={"and more, {broken_2:.0f}, at temperature 2": Q("broken_2") > Q("broken_1")},
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
            "checked": sum(not ok for ok, _ in _sampled_rounds(seed)),
            "cool_share": cool / max(1, sum(not ok for ok, _ in _sampled_rounds(seed)))}


claim("results-page.breaking-token", "results-page",
      "On {runs}, an unlucky draw is not the whole story: of the rounds at temperature 1 in which a token breaks "
      "the rules, {share_top:.0%}, a quarter or more, broke them with the model's own top word at that point, and the "
      "median probability the model gave the breaking token was {median_p:.2f}, above 0.1, not a long shot; cooled "
      "to temperature 0.5, {cool_share:.0%} as many rounds still break the rules, more than half",
      words={"an unlucky draw is not the whole story": Q("share_top") > 0.25,
             "a quarter or more": Q("share_top") > 0.25,
             "above 0.1, not a long shot": Q("median_p") > 0.1,
             "more than half": Q("cool_share") > 0.5},
      others="{share_top:.0%} of the breaking tokens were the top word, their median probability {median_p:.2f}, and "
             "cooling to 0.5 leaves {cool_share:.0%} as many broken rounds",
      note="a quarter or more of the breaking tokens are the model's top word; the median breaking token has "
           "probability above 0.1; temperature 0.5 leaves more than half the broken rounds",
      scope=EVERY_RUN, models=('calling-game',))(_breaking_numbers)


# ----------------------------------------------------------------------------- over the panel of runs
def _temperatures(seed):
    r = broken(0)
    return {"share_05": r[0.5], "share_1": r[1.0], "share_15": r[1.5], "share_2": r[2.0],
            "hotter_by": r[2.0] - r[1.0], "cooler_by": r[1.0] - r[0.5]}


claim("results-page.temperature-over-runs", "results-page",
      "On {runs}, cooling the page from temperature 1 to 0.5 still leaves {share_05:.0%} of the rounds broken, 15% or "
      "more",
      words={"15% or more": Q("share_05") >= 0.15},
      others="{share_05:.0%} of the rounds stay broken at 0.5",
      scope=EVERY_RUN, models=("calling-game",), seeded=False,
      note="broken rounds at temperature 0.5 on each run of the panel: cooling leaves many broken rounds")(_temperatures)

claim("results-page.hotter-over-runs", "results-page",
      "On {runs}, heating it to 2 breaks more rounds than at 1 (by {hotter_by:.0%} of them)",
      words={"breaks more rounds than at 1": Q("hotter_by") > 0},
      others="temperature 2 breaks {hotter_by:+.0%} of the rounds against 1",
      scope=EVERY_RUN, models=("calling-game",), seeded=False,
      note="broken rounds at temperature 2 against 1, on each run of the panel")(_temperatures)


# ----------------------------------------------------------------------------- whole rounds: greedy, beams, length
@claim("results-page.whole-round-length", "results-page",
       "On {runs}, over {n:.0f} rounds sampled from <BOS>, the log-probability of a whole round falls with its length "
       "(their correlation {corr:.2f}, below -0.8): at the median, the rounds that reach their eighth call sit "
       "{gap:.1f} nats below the rounds a wrong call cuts short, more than 3, yet per token the two are alike, "
       "within 0.1 nats ({tok_gap:.2f})",
       words={"below -0.8": Q("corr") < -0.8,
              "sit {gap:.1f} nats below the rounds a wrong call cuts short, more than 3": Q("gap") > 3,
              "per token the two are alike, within 0.1 nats": Q("tok_gap") < 0.1},
       others="the correlation is {corr:.2f}, the short rounds' median minus the full rounds' {gap:.1f} nats, and "
              "{tok_gap:.2f} per token apart",
       note="sum of log-probabilities of 200 sampled rounds: strongly negative correlation with length; per-token "
            "medians of full and cut-short rounds within 0.1",
       scope=EVERY_RUN, models=('calling-game',))
def _whole_round_length(seed):
    lm = lib.load("calling-game")
    rounds = [[lm.vocab.id(t) for t in r] for r in _sampled_tokens(seed)]      # the rounds the claims above judge
    lengths, logp = np.array([len(r) - 1 for r in rounds]), round_logprobs(lm, rounds)
    full = lengths >= FULL
    out = {"n": len(lengths), "corr": float(np.corrcoef(lengths, logp)[0, 1]), "full": int(full.sum()),
           "full_med": float(np.median(logp[full])), "short_med": float(np.median(logp[~full])),
           "short_len": float(np.median(lengths[~full])),
           "full_tok": float(np.median(logp[full] / lengths[full])),
           "short_tok": float(np.median(logp[~full] / lengths[~full]))}
    return {**out, "gap": out["short_med"] - out["full_med"], "tok_gap": abs(out["full_tok"] - out["short_tok"])}


def _beams(seed):
    r = searched_here()
    return {"beams": BEAMS, "full": FULL, "greedy_valid": int(r["greedy"]["valid"]),
            "beam_gain": r["beam"]["logprob"] - r["greedy"]["logprob"], "beam_length": r["beam"]["length"],
            "beam_valid": int(r["beam"]["valid"]), "mean_length": r["beam, mean per token"]["length"],
            "mean_valid": int(r["beam, mean per token"]["valid"]), "greedy_length": r["greedy"]["length"]}


claim("results-page.beam-beats-greedy", "results-page",
      "On {runs}, beam search with {beams:.0f} beams finds a whole round more probable than greedy decoding's (by "
      "{beam_gain:.1f} nats)",
      words={"finds a whole round more probable than greedy decoding's": Q("beam_gain") > 1e-9},
      others="beam search's best round minus greedy's is {beam_gain:.1f} nats",
      scope=EVERY_RUN, models=("calling-game",), seeded=False,
      note="beam search's best round, by summed log-probability, against the greedy one")(_beams)

claim("results-page.beam-prefers-short", "results-page",
      "On {runs}, ranked by the sum of log-probabilities, beam search's best round is shorter than a full round "
      "({beam_length:.0f} tokens, where a full round has {full:.0f} or more) and breaks the rules",
      words={"is shorter than a full round": Q("beam_length") < Q("full"), "breaks the rules": Q("beam_valid").eq(0)},
      setup=("or more",),
      others="its best round has {beam_length:.0f} tokens",
      scope=EVERY_RUN, models=("calling-game",), seeded=False,
      note="beam search by summed log-probability picks a short round that breaks the rules")(_beams)

claim("results-page.beam-mean-keeps-rules", "results-page",
      "On {runs}, ranked instead by the mean per token (a length penalty of 1), its best round keeps the rules "
      "({mean_length:.0f} tokens)",
      words={"its best round keeps the rules": Q("mean_valid").eq(1)},
      others="that round, {mean_length:.0f} tokens, breaks them",
      scope=EVERY_RUN, models=("calling-game",), seeded=False,
      note="beam search by mean log-probability per token finds a round that keeps the rules")(_beams)
