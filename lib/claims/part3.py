"""The claims of Part 3 (the final step as a search), each with its measurement."""
from __future__ import annotations

from lib.claims.registry import claim

import functools
import random

import numpy as np
import torch

# ----------------------------------------------------------------------------- hallucination
HALLUCINATION_ROUNDS = 800
SURE = 0.95   # a top probability at or above this is a "sure" answer


@functools.lru_cache(maxsize=None)
def judged_cuts(seed: int, rounds: int = HALLUCINATION_ROUNDS) -> list[tuple[str, str, float, bool]]:
    """Every distinct prompt cut from `rounds` seeded rounds where the rules fix the next token (the
    five labelled kinds), as (kind, text, the model's top probability, whether its top word breaks the
    rules). One forward pass per round reads every cut in it (the model is causal)."""
    import lib
    from lib.content.corpora.calling_game import GameOptions, next_token_distribution, sample_round
    from lib.content.prompt_sets import KINDS, _cuts

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

# ----------------------------------------------------------------------------- results page
ROUNDS_SAMPLED = 200


@functools.lru_cache(maxsize=None)
def _sampled_rounds(seed: int, temperature: float = 1.0, n: int = ROUNDS_SAMPLED) -> list[tuple[bool, str]]:
    import lib
    from lib.content.corpora.calling_game import check_round
    from lib.model.generate import sample_many

    lm = lib.load("calling-game")
    eos = lm.vocab.id("<EOS>")
    with torch.no_grad():
        rounds = sample_many(lm.model, lm.encode("<BOS>"), n, lm.model.cfg.n_ctx, seed=seed,
                             temperature=temperature, stop=eos)
    return [check_round(lm.vocab.decode(r)) for r in rounds]


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
      note="10-40% of 200 sampled rounds break the rules, most of them in the ending after a wrong call")(
    _broken_numbers)

PAGE_ROUND_START = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama"
PAGE_ROUND_SEED = 3


@claim("results-page.page-round", "results-page",
       "The round this page generates (temperature 1, seed {seed:.0f}) breaks the rules; the rules checker "
       "says: {why}", holds=lambda x: x["ok"] == 0, seeded=False,
       note="the page's own generated round is one check_round rejects")
def _page_round(seed):
    import lib
    from lib.content.corpora.calling_game import check_round
    from lib.model.generate import generate

    lm = lib.load("calling-game")
    out = generate(lm.model, lm.encode(PAGE_ROUND_START), lm.model.cfg.n_ctx, use_cache=True, do_sample=True,
                   seed=PAGE_ROUND_SEED, stop=[lm.vocab.id("<EOS>")])
    ok, why = check_round(lm.vocab.decode(out.tokens))
    return {"seed": PAGE_ROUND_SEED, "ok": int(ok), "why": why, "text": lm.vocab.to_text(out.tokens)}


# ----------------------------------------------------------------------------- mechanism: a final LayerNorm
HW_PROMPTS = 200


@functools.lru_cache(maxsize=None)
def _length_numbers(seed):
    import lib
    from lib.analysis.query_length import length_and_confidence
    from lib.content.prompt_sets import hand_wired_prompts

    hw = lib.load("hand-wired")
    stats = length_and_confidence(hw, hand_wired_prompts(HW_PROMPTS, seed))
    return {"n": len(stats.top_probs), "corr_len": stats.correlation_with("query_lengths"),
            "corr_raw": stats.correlation_with("raw_lengths"), "corr_align": stats.correlation_with("alignments"),
            "len_ratio": float(stats.query_lengths.max() / stats.query_lengths.min()),
            "raw_ratio": float(stats.raw_lengths.max() / stats.raw_lengths.min())}


claim("mechanism.layernorm-length", "mechanism",
      "Behind the hand-wired model's final LayerNorm the query's length still varies (by a factor of "
      "{len_ratio:.2f} over {n:.0f} prompts cut from its sentences, against {raw_ratio:.1f} before it) and still "
      "tracks confidence: the top probability's rank correlation with the length is {corr_len:+.2f}, with the "
      "query's alignment to the top word's column {corr_align:+.2f}",
      holds=lambda x: x["corr_len"] > 0.5,
      note="rank correlation of top probability with query length behind the final LayerNorm above 0.5")(
    _length_numbers)

claim("mechanism.length-over-alignment", "mechanism",
      "Squeezed as it is, the length follows confidence more closely than the alignment does "
      "({corr_len:+.2f} against {corr_align:+.2f})",
      holds=lambda x: x["corr_len"] > x["corr_align"],
      note="behind the final LayerNorm, rank correlation with length exceeds that with alignment")(_length_numbers)


# ----------------------------------------------------------------------------- mechanism: the calling-game model
PER_KIND = 40


@functools.lru_cache(maxsize=None)
def _mechanism_sets(seed):
    import lib
    from lib.content.prompt_sets import KINDS, OPEN_KINDS, prompt_set

    lm = lib.load("calling-game")
    n_ctx = lm.model.cfg.n_ctx
    fixed = [p.text for kind in KINDS for p in prompt_set(kind, PER_KIND, seed, max_tokens=n_ctx)]
    open_ = [p.text for kind in OPEN_KINDS for p in prompt_set(kind, PER_KIND, seed, max_tokens=n_ctx)]
    return lm, fixed, open_


@functools.lru_cache(maxsize=None)
def _flip_numbers(seed):
    from lib.analysis.query_length import SCALES, winner_flips

    lm, fixed, open_ = _mechanism_sets(seed)
    return {"n_fixed": len(fixed), "n_open": len(open_), "lo": float(min(SCALES)), "hi": float(max(SCALES)),
            "flips_open": winner_flips(lm, open_), "flips_fixed": winner_flips(lm, fixed),
            "flips_open_nobias": winner_flips(lm, open_, bias=False),
            "flips_fixed_nobias": winner_flips(lm, fixed, bias=False)}


claim("mechanism.direction-picks", "mechanism",
      "Scaling the query between {lo:.2f} and {hi:.0f} times its length, with the bias set to zero, changes the "
      "winner on {flips_open_nobias:.0f} of {n_open:.0f} prompts where the rules leave the callee open and on "
      "{flips_fixed_nobias:.0f} of {n_fixed:.0f} where they fix the next word",
      holds=lambda x: x["flips_open_nobias"] == 0 and x["flips_fixed_nobias"] == 0,
      note="without the bias, scaling the query never changes the winner (labelled prompts of the seed)")(_flip_numbers)

claim("mechanism.bias-settles-ties", "mechanism",
      "With the bias, the same scaling changes the winner on {flips_open:.0f} of the {n_open:.0f} open prompts "
      "and on {flips_fixed:.0f} of the {n_fixed:.0f} fixed ones",
      holds=lambda x: x["flips_open"] > 0 and x["flips_fixed"] <= 0.02 * x["n_fixed"],
      note="with the bias, the length settles some near-ties where the callee is open, almost none elsewhere")(
    _flip_numbers)


@functools.lru_cache(maxsize=None)
def _cg_length_numbers(seed):
    from lib.analysis.query_length import length_and_confidence

    lm, fixed, open_ = _mechanism_sets(seed)
    stats = length_and_confidence(lm, fixed + open_)
    return {"n": len(stats.top_probs), "corr_len": stats.correlation_with("query_lengths"),
            "corr_align": stats.correlation_with("alignments")}


claim("mechanism.cg-length", "mechanism",
      "In the calling-game model, which has no final LayerNorm, the top probability's rank correlation with "
      "the query's length over {n:.0f} labelled prompts is {corr_len:+.2f}, with its alignment {corr_align:+.2f}",
      holds=lambda x: x["corr_len"] > 0.5,
      note="calling-game: rank correlation of top probability with query length above 0.5")(_cg_length_numbers)


# ----------------------------------------------------------------------------- hallucination: the flatness flag
@functools.lru_cache(maxsize=None)
def _flag_numbers(seed):
    import lib
    from lib.analysis.flatness import detector_report, labelled_signs

    lm = lib.load("calling-game")
    groups = labelled_signs(lm, n=40, seed=seed, n_random=500)
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


# ----------------------------------------------------------------------------- lever: what each stage writes
@functools.lru_cache(maxsize=None)
def _lever_numbers(seed):
    import lib
    from lib.analysis.logit_difference import difference_view, summarise
    from lib.content.prompt_sets import prompt_set

    lm = lib.load("calling-game")
    later = [difference_view(lm, p.text, p.target)
             for p in prompt_set("epithet-later-turn", PER_KIND, seed, max_tokens=lm.model.cfg.n_ctx)]
    summary = summarise(later)
    block0_end = later[0].stages.index("blocks.0.mlp")
    return {"n": summary.n, "on_top0": summary.on_top[block0_end], "on_top_final": summary.on_top[-1],
            "p0": float(summary.median_prob[block0_end]), "d0": float(summary.median_difference[block0_end]),
            "dfinal": float(summary.median_difference[-1]), "mlp1_largest": summary.largest["blocks.1.mlp"],
            "mlp1_share": float(summary.median_share["blocks.1.mlp"]),
            "mlp0_share": float(summary.median_share["blocks.0.mlp"])}


claim("lever.block0-ranks", "lever",
      "Read through the logit lens after block 0, the right epithet already comes first on {on_top0:.0f} of "
      "{n:.0f} later turns, with a median probability of only {p0:.2f}; by the end it is first on "
      "{on_top_final:.0f} of them, with a median lead of {dfinal:.1f} logits over the rival epithet",
      holds=lambda x: x["on_top0"] >= 0.75 * x["n"] and x["on_top_final"] >= 0.95 * x["n"] and x["p0"] < 0.9,
      note="logit lens on later-turn epithet prompts: first after block 0 on most, nearly all at the end")(
    _lever_numbers)

claim("lever.mlp1-writes", "lever",
      "Of the final lead, MLP 1 writes the largest share on {mlp1_largest:.0f} of the {n:.0f} later turns "
      "(median share {mlp1_share:.0%}; MLP 0, {mlp0_share:.0%}): what it writes, which is not the same as "
      "what the answer needs",
      holds=lambda x: x["mlp1_largest"] > x["n"] / 2,
      note="direct attribution: MLP 1 writes the largest share of the final logit lead on most later turns")(
    _lever_numbers)


# ----------------------------------------------------------------------------- practice: the context decides
@functools.lru_cache(maxsize=None)
def _context_numbers(seed):
    import lib
    from lib.analysis.signs import read_signs
    from lib.content.prompt_sets import prompt_set

    lm = lib.load("calling-game")
    out = {}
    for key, epithet in (("peer", "Tarso"), ("number", "vice")):
        judged = [read_signs(lm, p.text) for p in prompt_set("epithet-later-turn", PER_KIND, seed,
                                                             max_tokens=lm.model.cfg.n_ctx, target=epithet)]
        out[f"{key}_n"] = len(judged)
        out[f"{key}_right"] = sum(s.top == epithet for s in judged)
        out[f"{key}_median"] = float(np.median([s.top_prob for s in judged]))
    return out


claim("practice.context-decides", "practice",
      "On later turns that end in a call to Paolo, the model answers Tarso on {peer_right:.0f} of {peer_n:.0f} "
      "prompts where Pietro is calling (median probability {peer_median:.4f}) and vice on {number_right:.0f} "
      "of {number_n:.0f} where a numbered player is calling (median {number_median:.4f})",
      holds=lambda x: x["peer_right"] >= 0.9 * x["peer_n"] and x["number_right"] >= 0.9 * x["number_n"],
      note="who is calling, read from the context, decides the epithet on at least 90% of each set")(
    _context_numbers)


# ----------------------------------------------------------------------------- results page: open choices
@functools.lru_cache(maxsize=None)
def _open_page_numbers(seed):
    from lib.content.corpora.calling_game import next_token_distribution
    from lib.content.prompt_sets import prompt_set

    lm, _, _ = _mechanism_sets(seed)
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
      note="callee-choice pages: median total variation from the rules' page below 0.1")(_open_page_numbers)


# ----------------------------------------------------------------------------- tools: the referee
REFEREE_ROUNDS = 30


@functools.lru_cache(maxsize=None)
def _referee_numbers(seed):
    import lib
    from lib.content.conveyor import referee, run_belt
    from lib.content.corpora.calling_game import check_round

    lm = lib.load("calling-game")
    valid = 0
    for k in range(REFEREE_ROUNDS):
        belt = run_belt(lm, "<BOS>", referee(seed=seed * REFEREE_ROUNDS + k))
        valid += check_round(belt.words())[0]
    return {"n": REFEREE_ROUNDS, "valid": valid}


claim("tools.referee-valid", "tools",
      "With the referee as its tool, greedy decoding plays {valid:.0f} of {n:.0f} rounds by the rules (each "
      "round with its own referee seed)",
      holds=lambda x: x["valid"] >= 0.9 * x["n"],
      note="greedy play with the referee tool gives a valid round on at least 90% of referee seeds")(
    _referee_numbers)


# ----------------------------------------------------------------------------- search by hand: long when sure
@functools.lru_cache(maxsize=None)
def _query_length_numbers(seed):
    from lib.analysis.search import model_query

    lm, fixed, open_ = _mechanism_sets(seed)
    fixed_len = np.array([np.linalg.norm(model_query(lm, p)) for p in fixed])
    open_len = np.array([np.linalg.norm(model_query(lm, p)) for p in open_])
    return {"n_fixed": len(fixed), "n_open": len(open_), "fixed_median": float(np.median(fixed_len)),
            "open_median": float(np.median(open_len)), "open_hi": float(open_len.max()),
            "fixed_above": int((fixed_len > open_len.max()).sum())}


claim("search-by-hand.long-when-sure", "search-by-hand",
      "Over labelled prompts, the query is longer where the rules fix the next word (median length "
      "{fixed_median:.1f} over {n_fixed:.0f} prompts) than where they leave the callee open (median "
      "{open_median:.1f} over {n_open:.0f}); {fixed_above:.0f} of the {n_fixed:.0f} fixed prompts have a query "
      "longer than the longest open one",
      holds=lambda x: x["fixed_median"] > 3 * x["open_median"] and x["fixed_above"] >= 0.9 * x["n_fixed"],
      note="median query length on fixed-word prompts exceeds 3 times that on open-choice prompts, and 90% "
           "of fixed prompts exceed the longest open one")(
    _query_length_numbers)


def _temperature_numbers(seed):
    one = _sampled_rounds(seed, 1.0)
    two = _sampled_rounds(seed, 2.0)
    return {"n": len(one), "broken_1": sum(not ok for ok, _ in one), "broken_2": sum(not ok for ok, _ in two)}


claim("results-page.hotter-breaks-more", "results-page",
      "Of {n:.0f} whole rounds sampled from <BOS>, {broken_1:.0f} break the rules at temperature 1 and "
      "{broken_2:.0f} at temperature 2",
      holds=lambda x: x["broken_2"] > x["broken_1"],
      note="heating the page from temperature 1 to 2 breaks more whole rounds (not always many more)")(
    _temperature_numbers)


@functools.lru_cache(maxsize=None)
def _angle_numbers(seed):
    from lib.analysis.search import model_dictionary, model_query

    lm, fixed, open_ = _mechanism_sets(seed)
    words, cols = zip(*model_dictionary(lm).items())
    cols = np.array(cols)

    def agree(prompt):
        h = model_query(lm, prompt)
        cos = cols @ h / (np.linalg.norm(cols, axis=1) * np.linalg.norm(h))
        with torch.no_grad():
            logits = lm.model(lm.encode(prompt))[-1]
        return words[int(np.argmax(cos))] == lm.vocab.tokens[int(logits.argmax())]

    return {"n_fixed": len(fixed), "n_open": len(open_), "agree_fixed": sum(agree(p) for p in fixed),
            "agree_open": sum(agree(p) for p in open_)}


claim("mechanism.angle-vs-dot", "mechanism",
      "Ranked by angle alone, the first word is the model's own first word on {agree_fixed:.0f} of {n_fixed:.0f} "
      "prompts where the rules fix the next word, and on only {agree_open:.0f} of {n_open:.0f} where they leave "
      "the callee open",
      holds=lambda x: x["agree_fixed"] >= 0.95 * x["n_fixed"] and x["agree_open"] < 0.8 * x["n_open"],
      note="cosine ranking agrees with the model's top word on fixed prompts, much less on open ones")(_angle_numbers)


# ----------------------------------------------------------------------------- scale
GPT3_PARAMETERS = 175e9     # Brown et al. (2020), the model's own name


@claim("scale.dictionary-share", "scale",
       "GPT-3's dictionary, {gpt3_rows:,.0f} rows of {gpt3_d:,.0f} numbers, is {gpt3_share:.2%} of its 175 billion "
       "parameters; the calling-game model's, {toy_rows:.0f} rows of {toy_d:.0f}, is {toy_share:.0%} of its "
       "{toy_params:,.0f}",
       holds=lambda x: x["gpt3_share"] < 0.01 < x["toy_share"], seeded=False,
       note="the read-out dictionary is under 1% of GPT-3's parameters and over 1% of the toy's")
def _(seed):
    import lib
    from lib.analysis.scale import SHAPES

    lm = lib.load("calling-game")
    v, d = SHAPES["GPT-3 (175B)"]
    tv, td = lm.model.cfg.vocab_size, lm.model.cfg.d_model
    params = sum(p.numel() for p in lm.model.parameters())
    return {"gpt3_rows": v, "gpt3_d": d, "gpt3_share": v * d / GPT3_PARAMETERS, "toy_rows": tv, "toy_d": td,
            "toy_share": tv * td / params, "toy_params": params}


@claim("scale.last-step-is-search", "scale",
       "On {n:.0f} labelled prompts, the calling-game model's own next-token scores are the query's dot products "
       "with every dictionary column plus the bias, to within {bound:.0e}, and the search's first word is the "
       "model's on all {agree:.0f}",
       holds=lambda x: x["max_err"] < x["bound"] and x["agree"] == x["n"],
       note="logits equal query . W_U + b_U on every labelled prompt of the seed (fixed and open kinds)")
def _(seed):
    from lib.analysis.search import model_dictionary

    lm, fixed, open_ = _mechanism_sets(seed)
    prompts = fixed + open_
    encoded = [lm.encode(p) for p in prompts]
    width = max(len(ids) for ids in encoded)
    pad = lm.vocab.id("<PAD>")
    batch = torch.tensor([ids + [pad] * (width - len(ids)) for ids in encoded])   # causal: padding is never read
    logits, cache = lm.model.run_with_cache(batch)
    last = torch.tensor([len(ids) - 1 for ids in encoded])
    rows = torch.arange(len(prompts))
    key = "ln_final" if lm.model.ln_final is not None else "resid_final"
    queries = cache[key][rows, last].double().numpy()                       # [prompt, d_model]
    own = logits[rows, last].double().numpy()                               # the model's own scores
    columns = np.array(list(model_dictionary(lm).values())).T               # [d_model, vocab]
    scores = queries @ columns + lm.model.b_U.detach().double().numpy()     # the search, by hand
    return {"n": len(prompts), "max_err": float(np.abs(scores - own).max()), "bound": 1e-4,
            "agree": int((scores.argmax(1) == own.argmax(1)).sum())}


# ----------------------------------------------------------------------------- lever: attribution beside ablation
@claim("lever.writes-vs-needs", "lever",
       "On later turns whose answer is Tarso ({held:.0f} answered of {n:.0f}), mean ablation loses "
       "{lost_attn0:.0f} of them without block 0's attention, {lost_mlp0:.0f} without MLP 0, {lost_mlp1:.0f} without "
       "MLP 1 and {lost_attn1:.0f} without block 1's attention; yet block 0's attention writes a median of only "
       "{dla_attn0:+.2f} logits onto Tarso directly (above the average word's), against {dla_mlp1:+.2f} for MLP 1",
       holds=lambda x: (min(x["lost_attn0"], x["lost_mlp0"], x["lost_mlp1"]) >= 0.9 * x["held"]
                        and x["lost_attn1"] <= 0.1 * x["held"] and x["dla_attn0"] < 1 < x["dla_mlp1"]),
       note="mean ablation: attention 0 and both MLPs needed on 90%+ of later-turn Tarso answers, attention 1 on "
            "10% or less; attention 0's median direct attribution to Tarso under one logit")
def _(seed):
    import lib
    from lib.analysis.lens import direct_logit_attribution, group_by_block
    from lib.claims.part2 import _later_turns
    from lib.content.prompt_sets import prompt_set

    lm = lib.load("calling-game")
    x = _later_turns(seed)
    tarso = lm.vocab.id("Tarso")
    dla = {"blocks.0.attn": [], "blocks.1.mlp": []}
    for p in prompt_set("epithet-later-turn", 40, seed, lm.model.cfg.n_ctx, target="Tarso"):
        _, cache = lm.model.run_with_cache(lm.encode(p.text))
        shares = group_by_block(direct_logit_attribution(lm.model, cache))
        for k in dla:
            dla[k].append(float(shares[k][tarso] - shares[k].mean()))
    return {"n": x["tarso_n"], "held": x["tarso_held"], "lost_attn0": x["tarso_mean_attn0"],
            "lost_mlp0": x["tarso_mean_mlp0"], "lost_mlp1": x["tarso_mean_mlp1"], "lost_attn1": x["tarso_mean_attn1"],
            "dla_attn0": float(np.median(dla["blocks.0.attn"])), "dla_mlp1": float(np.median(dla["blocks.1.mlp"]))}
