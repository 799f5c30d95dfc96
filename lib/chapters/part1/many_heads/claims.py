"""The claims of the chapter `chapters/part1/many-heads.md`, each with its measurement.

The prompts are labelled sets (`lib.content.prompt_sets`) drawn with the claim's seed.
"""
from __future__ import annotations

import functools

import numpy as np

from lib.analysis.calling_sets import N, OPENING, calling_game, n_ctx
from lib.analysis.head_survey import ablation_survey, head_disagreement, untrained_twin
from lib.analysis.positions import lag_similarity, offset_preference, order_test, without_positions
from lib.claims.registry import EVERY_RUN, THIS_RUN
from lib.claims.registry import claim as register
from lib.claims.words import All, Either, Q
from lib.content.prompt_sets import KINDS, prompt_set
from lib.model.readout import token_prob

# Measured with torch on one thread (the chapter's models are tiny: see `lib.claims.registry.claim`).
claim = functools.partial(register, one_thread=True)


@claim("many-heads.heads-differ", "many-heads",
       "On {runs}, averaged over each pair of layer-0 heads and {n:.0f} later-turn prompts, the total-variation "
       "distance between two heads' rows of weights is {trained:.2f}, more than ten times ({ratio:.0f} times) what "
       "it is for the model as initialised, before training",
       words={"more than ten times": Q("ratio") > 10},
       others="the distance is {trained:.2f}, {ratio:.0f} times the initialised model's",
       note="layer 0's heads disagree (mean total-variation distance) ten times more after training than before",
       scope=EVERY_RUN, models=('calling-game',))
def _heads_differ(seed):
    later = prompt_set("epithet-later-turn", N, seed, max_tokens=n_ctx())
    trained = head_disagreement(calling_game(), later, 0)
    fresh = head_disagreement(untrained_twin(calling_game()), later, 0)
    return {"n": len(later), "trained": trained, "fresh": fresh, "ratio": trained / fresh}


@claim("many-heads.writes-add", "many-heads",
       "On {runs}, over {n:.0f} later-turn prompts and both layers, the attention write is the sum of its four "
       "heads' terms to within {gap:max:.0e}",
       words={"is the sum of its four heads' terms to within {gap:max:.0e}": Q("gap") < 1e-4},
       others="the largest gap is {gap:.0e}",
       note="largest gap between a layer's attention write and the sum of its heads' writes",
       scope=EVERY_RUN, models=('calling-game',))
def _writes_add(seed):
    lm = calling_game()
    gap = 0.0
    for p in prompt_set("epithet-later-turn", N, seed, max_tokens=n_ctx()):
        _, c = lm.model.run_with_cache(lm.encode(p.text))
        for layer in range(lm.model.cfg.n_layers):
            parts = c[f"blocks.{layer}.attn.head_out"].sum(1)
            gap = max(gap, float((parts - c[f"blocks.{layer}.attn_out"]).abs().max()))
    return {"n": N, "gap": gap}


@functools.lru_cache(maxsize=None)
def _order_tests(seed):
    lm = calling_game()
    sequences = [lm.encode(p.text) for p in prompt_set("epithet-later-turn", N, seed, max_tokens=n_ctx())]
    return (order_test(without_positions(lm).model, sequences, seed=seed), order_test(lm.model, sequences, seed=seed))


@claim("many-heads.order-from-positions", "many-heads",
       "On {runs}, over {shuffled:.0f} shuffled later-turn prompts, without positions layer 0's write at the last "
       "position never changes by more than {flat_l0:max:.0e}, float rounding, while layer 1's changes by up to "
       "{flat_l1:.2f}; with the learned positions, layer 0 already changes by up to {pos_l0:.2f}",
       words={"never changes by more than {flat_l0:max:.0e}, float rounding": Q("flat_l0") < 1e-4,
              "while layer 1's changes by up to {flat_l1:.2f}": Q("flat_l1") > 0.1,
              "layer 0 already changes by up to {pos_l0:.2f}": Q("pos_l0") > 0.1},
       others="without positions layer 0's write changes by up to {flat_l0:.0e} and layer 1's by {flat_l1:.2f}; with "
              "them layer 0's by {pos_l0:.2f}",
       note="order_test on the later-turn set: layer 0 is order-blind without positions, layer 1 is not",
       scope=EVERY_RUN, models=('calling-game',))
def _order_from_positions(seed):
    flat, pos = _order_tests(seed)
    return {"shuffled": flat.shuffles, "flat_l0": flat.largest["blocks.0.attn_out"],
            "flat_l1": flat.largest["blocks.1.attn_out"], "pos_l0": pos.largest["blocks.0.attn_out"]}


@claim("many-heads.rhythm", "many-heads",
       "On {runs}, positions {lag:.0f} apart are the most alike (mean cosine {cos:.2f}, the next best {next:.2f})",
       words={"positions {lag:.0f} apart are the most alike": (Q("lag").eq(4), Q("cos") > Q("next"))},
       others="the distance with the highest mean cosine is {lag:.0f} ({cos:.2f})", seeded=False,
       note="the learned position embeddings are most alike four apart, the length of a turn without an epithet",
       scope=EVERY_RUN, models=('calling-game',))
def _rhythm(seed):
    lags = lag_similarity(calling_game().model, max_lag=10)
    return {"lag": int(np.argmax(lags)) + 1, "cos": float(lags.max()), "next": float(np.sort(lags)[-2])}


@claim("many-heads.l0h3-distances", "many-heads",
       "From the positions alone, L0H3's two favourite distances back are {best:.0f} and {second:.0f}",
       words={"two favourite distances back are {best:.0f} and {second:.0f}":
              Either(All(Q("best").eq(1), Q("second").eq(5)), All(Q("best").eq(5), Q("second").eq(1)))},
       seeded=False,
       note="offset_preference of L0H3: distances 1 and 5 score highest",
       scope=THIS_RUN, models=('calling-game',))
def _l0h3(seed):
    prefs = offset_preference(calling_game().model, 0, 3, max_offset=10)
    top = np.argsort(-prefs[1:])[:2] + 1
    return {"best": int(top[0]), "second": int(top[1])}


@claim("many-heads.positions-needed", "many-heads",
       "On {runs}, without its position embeddings the model keeps only {kept:.0%} of the answers it holds over "
       "the five labelled sets ({n:.0f} prompts), and most of the five sets ({hurt:.0f}) lose prompts",
       words={"keeps only {kept:.0%}": Q("held_without") < Q("held_with"),
              "most of the five sets ({hurt:.0f})": Q("hurt") >= 3},
       others="it keeps {kept:.0%} of its answers and {hurt:.0f} of the five sets lose prompts",
       note="held answers (P >= 0.5) with and without positions, over the five kinds of labelled prompts",
       scope=EVERY_RUN, models=('calling-game',))
def _positions_needed(seed):
    lm = calling_game()
    flat = without_positions(lm)
    hurt = held_with = held_without = n = 0
    for kind in KINDS:
        group = prompt_set(kind, N, seed, max_tokens=n_ctx())
        w, wo = ablation_survey(lm, group, {}).held(), ablation_survey(flat, group, {}).held()
        hurt += wo < w
        held_with, held_without, n = held_with + w, held_without + wo, n + len(group)
    return {"n": n, "held_with": held_with, "held_without": held_without, "hurt": hurt,
            "kept": held_without / held_with}


@claim("many-heads.opening-without-positions", "many-heads",
       "On the opening call `<BOS> Pietro chiama Paolo`, Tarso falls from {first_with:.4f} to {first_without:.2f} "
       "without positions",
       words={"Tarso falls from {first_with:.4f} to {first_without:.2f} without positions": Q("first_without") < 0.5},
       seeded=False,
       note="P(Tarso) on the opening call with and without positions: below one half without them on the "
            "shipped run only (other runs keep 0.86-0.99)",
       scope=THIS_RUN, models=('calling-game',))
def _opening_without_positions(seed):
    lm = calling_game()
    flat = without_positions(lm)
    return {"first_with": token_prob(lm, OPENING, "Tarso"), "first_without": token_prob(flat, OPENING, "Tarso")}
