"""Self-checks for the chapter "The results page, temperature and sampling"."""
from __future__ import annotations

import functools

import numpy as np
import torch

from lib.content.corpora.calling_game import check_round, next_token_distribution
from lib.content.prompts import CONFIDENT, UNCERTAIN
from lib.model.generate import generate
from lib.model.readout import prompt_logits, softmax, truncation_mask
from lib.exercises import Feedback, as_number, check_number, check_whole_number, per_model
from lib.exercises.site import Values, site_check
from lib.exercises.writing import Case, Mistake, WriteCheck, read_like, rows_sum_to_one
from lib.model.store import load


# ------------------------------------------------------------------ write: softmax with a temperature
def _stable(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max())
    return e / e.sum()


@functools.cache
def _logit_cases() -> tuple[Case, ...]:
    lm = load("calling-game")
    flat, sharp = prompt_logits(lm, UNCERTAIN), prompt_logits(lm, CONFIDENT)
    g = torch.Generator().manual_seed(3)
    return (Case((flat, 0.5), f"the logits after {UNCERTAIN!r} at temperature 0.5"),
            Case((sharp, 2.0), f"the logits after {CONFIDENT!r} at temperature 2"),
            Case((torch.randn(10, generator=g, dtype=torch.float64), 1.0), "10 random logits at temperature 1"),
            Case((torch.randn(6, generator=g, dtype=torch.float64) * 3, 7.5), "6 random logits at temperature 7.5"),
            Case((torch.tensor([2.0], dtype=torch.float64), 0.3), "a single logit"),
            Case((torch.tensor([1000.0, 999.0, 0.0], dtype=torch.float64), 1.0),
                 "the logits 1000, 999 and 0 at temperature 1"),
            Case((sharp, 0.01), f"the logits after {CONFIDENT!r} at temperature 0.01"))


softmax_with_temperature = WriteCheck(
    name="softmax_with_temperature",
    cases=_logit_cases,
    reference=lambda logits, t: softmax(logits, t).numpy(),
    mistakes=(
        Mistake(lambda z, t: _stable(np.asarray(z) * t),
                "the temperature multiplies the logits; it divides them (a temperature above 1 must flatten "
                "the page, below 1 sharpen it)."),
        Mistake(lambda z, t: _stable(z),
                "the page does not change with the temperature: divide the logits by it before the softmax."),
        Mistake(lambda z, t: _stable(z) / t,
                "the probabilities were divided by the temperature after the softmax, so they no longer sum "
                "to 1: the temperature divides the logits, before the softmax."),
        Mistake(lambda z, t: np.exp(np.asarray(z) / t) / np.exp(np.asarray(z) / t).sum(),
                "with large logits (or a small temperature) exp overflows to infinity and the page turns into "
                "NaN: subtract the largest logit before exp (the softmax does not change)."),
        Mistake(lambda z, t: np.exp(np.asarray(z) / t),
                "these are the exponentials, not yet probabilities: they must be divided by their sum."),
    ),
    invariants=(rows_sum_to_one("probabilities"),),
)


# ------------------------------------------------------------------ write: top-k, then top-p
def library_truncate(probs, top_k=None, top_p=None) -> np.ndarray:
    """The distribution the die is rolled on after top-k and top-p (Hugging Face's order)."""
    probs = torch.as_tensor(probs, dtype=torch.float64)
    kept = probs * truncation_mask(probs, top_k, top_p)
    return (kept / kept.sum()).numpy()


def _renormalised(keep):
    def truncate(probs, top_k=None, top_p=None):
        p = np.asarray(probs, dtype=float)
        kept = p * keep(p, top_k, top_p)
        return kept / kept.sum()
    return truncate


def _keep(p, top_k, top_p, *, judge_before_k=False, stop_short=False, worst_first=False):
    """Which tokens survive, with switches for typical mistakes (the defaults are right)."""
    order = np.argsort(p if worst_first else -p, kind="stable")
    keep = np.ones(len(p), bool)
    if top_k is not None:
        keep[top_k:] = False
    if top_p is not None:
        mass = p[order] * (1 if judge_before_k else keep)
        mass = mass / mass.sum()
        running = np.cumsum(mass)
        keep &= (running < top_p) if stop_short else (running - mass < top_p - 1e-12)
        if not stop_short:
            keep[0] = True
    out = np.zeros(len(p), bool)
    out[order] = keep
    return out


def _kept_the_best(probs, got) -> str | None:
    """Every survivor must be at least as likely as every token that was cut."""
    p, kept = np.asarray(probs, dtype=float), np.asarray(got, dtype=float) > 0
    if kept.any() and (~kept).any() and p[kept].min() < p[~kept].max():
        return "your function kept a token less likely than one it cut: top-k and top-p keep the best ones."
    return None


def _truncate_cases() -> list[Case]:
    lm = load("calling-game")
    flat, sharp = softmax(prompt_logits(lm, UNCERTAIN)), softmax(prompt_logits(lm, CONFIDENT))
    rng = np.random.default_rng(11)
    page = lambda n: torch.as_tensor(rng.dirichlet(np.ones(n)), dtype=torch.float64)
    return [Case((flat,), f"the page after {UNCERTAIN!r} with top-k 5 and top-p 0.5", {"top_k": 5, "top_p": 0.5}),
            Case((flat,), f"the page after {UNCERTAIN!r} with top-p 0.3", {"top_p": 0.3}),
            Case((page(12),), "a random page of 12 tokens with top-k 4", {"top_k": 4}),
            Case((page(12),), "a random page of 12 tokens with top-k 6 and top-p 0.6", {"top_k": 6, "top_p": 0.6}),
            Case((page(20),), "a random page of 20 tokens with top-p 0.9", {"top_p": 0.9}),
            Case((sharp,), f"the page after {CONFIDENT!r} with top-p 0.5", {"top_p": 0.5}),
            Case((page(8),), "a random page of 8 tokens with top-p 0.000001", {"top_p": 1e-6}),
            Case((page(8),), "a random page of 8 tokens with top-k 50 (more than the page holds)", {"top_k": 50}),
            Case((page(8),), "a random page of 8 tokens and no top-k or top-p", {})]


top_k_top_p = WriteCheck(
    name="top_k_top_p",
    cases=_truncate_cases,
    reference=library_truncate,
    mistakes=(
        Mistake(_renormalised(lambda p, k, q: _keep(p, k, q, judge_before_k=True)),
                "top-p was judged on the probabilities of the whole page; it comes after top-k, on the "
                "survivors' probabilities shared out again, so it keeps fewer tokens."),
        Mistake(lambda probs, top_k=None, top_p=None: np.asarray(probs) * _keep(np.asarray(probs), top_k, top_p),
                "the survivors' probabilities do not add up to 1: share the kept mass out again."),
        Mistake(_renormalised(lambda p, k, q: _keep(p, k, q, stop_short=True)),
                "the top-p set stops before its mass reaches p: it must include the token that takes the "
                "running total to p or past it (so the best token always survives)."),
        Mistake(_renormalised(lambda p, k, q: _keep(p, k, q, worst_first=True)),
                "your function kept the least likely tokens: top-k and top-p keep the best ones."),
    ),
    invariants=(rows_sum_to_one("probabilities"), lambda case, got: _kept_the_best(case.args[0], got)),
)


# ------------------------------------------------------------------ predict: top-k, then top-p
CUT_K, CUT_P, CUT_PROMPT = 5, 0.5, UNCERTAIN


def _survivor_values(lm) -> Values:
    probs = softmax(prompt_logits(lm, CUT_PROMPT))
    whole_page = int(truncation_mask(probs, top_p=CUT_P).sum())
    return Values(int(truncation_mask(probs, top_k=CUT_K, top_p=CUT_P).sum()), hints={"whole_page": whole_page},
                  fields={"whole_page": whole_page})


SURVIVORS = site_check(__name__, "survivors_after_top_k", rule="whole", compute="survivors", values=_survivor_values,
                       units=("tokens", "token"),
                       what=f"The number of survivors of top-k {CUT_K} and top-p {CUT_P}", model="calling-game",
                       args={"prompt": CUT_PROMPT, "top_k": CUT_K, "top_p": CUT_P}, texts={
    "whole_page": "{whole_page} is what top-p " + str(CUT_P) + " keeps on the whole page; after top-k the "
                  + str(CUT_K) + " survivors share the probability out again first."})


def survivors_after_top_k(lm, answer) -> Feedback:
    """How many tokens survive top-k CUT_K and then top-p CUT_P on the page after CUT_PROMPT."""
    return SURVIVORS.judge(answer, lm)


# ------------------------------------------------------------------ predict: a hotter page
HOT_TEMPERATURE, HOT_PROMPT = 3.0, CONFIDENT


def _hot_values(lm) -> Values:
    logits = prompt_logits(lm, HOT_PROMPT)
    top = int(torch.argmax(logits))
    return Values(float(softmax(logits, HOT_TEMPERATURE)[top]),
                  hints={"times": float(torch.softmax(logits.double() * HOT_TEMPERATURE, -1)[top])})


# Worked out by hand from the ten logits the chapter prints it comes within 0.003; a looser tolerance
# would accept the page's round 0.9 (a top-p setting) as a prediction.
TOP_PROB_AT = site_check(__name__, "top_prob_at", rule="number", compute="topProbAt", values=_hot_values,
                         what=f"The top token's probability at temperature {HOT_TEMPERATURE:g}", tol=0.005,
                         model="calling-game", args={"prompt": HOT_PROMPT, "temperature": HOT_TEMPERATURE}, texts={
                             "times": "that is the page with the logits multiplied by the temperature; a temperature "
                                      "divides them."})


def top_prob_at(lm, answer) -> Feedback:
    """The top token's probability after HOT_PROMPT at HOT_TEMPERATURE."""
    return TOP_PROB_AT.judge(answer, lm)


# ------------------------------------------------------------------ investigate: hot rounds break the rules
@per_model
def _broken_rounds(lm, temperature: float, seeds: range) -> int:
    """How many rounds sampled from <BOS> (one per seed) break the game's rules."""
    eos, start = lm.vocab.id("<EOS>"), lm.encode("<BOS>")
    broken = 0
    for seed in seeds:
        out = generate(lm.model, start, lm.model.cfg.n_ctx - 1, use_cache=True, do_sample=True,
                       temperature=temperature, seed=seed, stop=[eos])
        ok, _ = check_round(lm.vocab.decode(out.tokens))
        broken += not ok
    return broken


ROUNDS_TEMPERATURE, ROUNDS_SEEDS = 2.0, range(20)


def _rounds_values(lm) -> Values:
    return Values(_broken_rounds(lm, ROUNDS_TEMPERATURE, ROUNDS_SEEDS),
                  hints={"t1": _broken_rounds(lm, 1.0, ROUNDS_SEEDS)})


# The page could draw the same rounds (the seeded rolls are the website's too) and read them with the rules
# checker's twin, but 40 rounds of up to n_ctx passes each (hundreds of passes; the page has no KV cache)
# are more than a click should wait for: the default site ships the count, the class site says live.
BROKEN_ROUNDS = site_check(__name__, "broken_rounds", rule="whole", compute=None, values=_rounds_values,
                           units=("rounds", "round"),
                           what=f"The number of broken rounds at temperature {ROUNDS_TEMPERATURE:g}", model="calling-game",
                           texts={"t1": "that is the count at temperature 1: pass the temperature to the generator too."})


def broken_rounds(lm, answer) -> Feedback:
    """How many of the rounds sampled from <BOS> with ROUNDS_SEEDS at ROUNDS_TEMPERATURE break the rules."""
    return BROKEN_ROUNDS.judge(answer, lm)


# ------------------------------------------------------------------ write: the rules as a logits processor
# The rounds the cases are cut from: a later call whose answer the rules fix, and a legal round in which a
# numbered player calls Paolo (lib.chapters.part1.ablation.explorers' patching pair), then a wrong call.
_RULE_ROUNDS = ("<BOS> Pietro chiama 2 <SEP> 2 chiama 3 <SEP> 3 chiama Pietro capo <SEP> Pietro chiama Paolo Tarso",
                "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama 3 <SEP> 3 chiama 6 <SEP> 6 chiama Paolo vice",
                "<BOS> Pietro chiama 4 <SEP> 4 chiama 4 <SEP> 4 perde <EOS>")


@functools.cache
def _rule_cases() -> tuple[Case, ...]:
    from lib.chapters.part3.results_page.constrained import allowed  # deferred: the unit's module imports the game

    lm = load("calling-game")
    cases = []
    for text, cuts in zip(_RULE_ROUNDS, ((1, 2, 3, 7, 11, 16), (4, 5, 10, 17), (6, 8))):
        words = text.split()
        for n in cuts:
            prefix = words[:n]
            allowed(prefix)                           # a valid prefix (the rules checker raises otherwise)
            cases.append(Case((prefix, prompt_logits(lm, " ".join(prefix))), f"the model's logits after {' '.join(prefix)!r}"))
    g = torch.Generator().manual_seed(5)
    cases.append(Case((["<BOS>", "Pietro", "chiama"], torch.randn(len(lm.vocab), generator=g, dtype=torch.float64) * 4),
                      "random logits after '<BOS> Pietro chiama'"))
    return tuple(cases)


def _rules_reference(prefix, logits):
    from lib.chapters.part3.results_page.constrained import rules_processor  # deferred: as in _rule_cases

    return rules_processor(prefix, logits, load("calling-game").vocab.tokens).numpy()


def _rules_variant(kind: str):
    def wrong(prefix, logits):
        from lib.chapters.part3.results_page.constrained import allowed  # deferred: as in _rule_cases

        ok = np.array([t in allowed(prefix) for t in load("calling-game").vocab.tokens])
        z = np.asarray(logits, dtype=float)
        if kind == "unchanged":
            return z
        if kind == "zero":
            return np.where(ok, z, 0.0)
        if kind == "inverted":
            return np.where(ok, -np.inf, z)
        if kind == "probabilities":
            e = np.where(ok, np.exp(z - z[ok].max()), 0.0)
            return e / e.sum()
        if kind == "rules":
            rules = next_token_distribution(list(prefix))
            return np.array([np.log(rules[t]) if t in rules and rules[t] > 0 else -np.inf
                             for t in load("calling-game").vocab.tokens])
        raise ValueError(kind)
    return wrong


def _read_bans(value, like):
    """The learner's logits, a ban written as any logit below -1e6 (minus a billion works as well as
    minus infinity: its probability is 0) read as minus infinity."""
    got = np.array(read_like(value, like), dtype=float)
    got[got < -1e6] = -np.inf
    return got


rules_processor = WriteCheck(
    name="rules_processor",
    cases=_rule_cases,
    reference=_rules_reference,
    read=_read_bans,
    mistakes=(
        Mistake(_rules_variant("unchanged"), "your function left every logit as the model wrote it: the tokens the "
                                             "rules forbid after the round so far must be banned."),
        Mistake(_rules_variant("inverted"), "your function banned the tokens the rules allow and kept the ones they "
                                            "forbid."),
        Mistake(_rules_variant("zero"), "a forbidden token's logit was set to 0, which still leaves it a share of the "
                                        "page (e to the 0 against the others): a ban is a logit of minus infinity."),
        Mistake(_rules_variant("probabilities"), "your function returned probabilities; a logits processor returns "
                                                 "logits (the sampler applies the temperature and the softmax after it)."),
        Mistake(_rules_variant("rules"), "the allowed tokens' logits were replaced by the rules' own odds, so the "
                                         "model's choice among legal tokens is lost: change only the forbidden ones."),
    ),
)
