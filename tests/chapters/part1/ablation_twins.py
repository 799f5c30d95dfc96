"""The ablation chapter's hooks held to the library in Node (a shared twin of tests/twin_contract.py, run by
tests/explorers/test_twins.py): the page's zero, mean and resample ablation (its unit's page.js,
`ablationHooks`, reached through the site's units.js) against lib.analysis.ablation.ablated_logits, the
reference matched by role or by position. The ablation explorer's view holds them too, on its settings;
these add prompts the reference cannot stand in for (longer than its rounds, roles no round shows).
"""
from __future__ import annotations

import random

import lib
from explorer_cases import random_roll
from twin_contract import outcome, shared_twin

KINDS = [("zero", "role"), ("mean", "role"), ("resample", "role"), ("mean", "position"), ("resample", "position")]
PER_KIND = 12


@shared_twin("ablation hooks", """async (site, c) => {
    const m = await site.loadModel("calling-game"), ids = m.encode(c.prompt);
    const hooks = site.views.UNITS["part1/ablation"].ablationHooks(m, c.heads, c.mlps, c.kind, ids, 0, 0, c.match);
    return Array.from(m.promptLogits(ids, {hooks}));
}""", tol=1e-4)
def ablation_hooks():
    """Random heads and MLPs switched off each way, on the game's rounds cut anywhere, padded with players or
    shuffled, a few longer than the reference's rounds: every logit to 1e-4 (logits reach 40; the library
    computes in float32), a prompt the reference cannot stand in for refused with the library's sentence."""
    from lib.analysis.ablation import ablated_logits, reference_set
    from lib.content.corpora.calling_game import sample_round

    lm = lib.load("calling-game")
    longest = reference_set(lm).longest
    out = []
    for kind, match in KINDS:
        rng = random.Random(f"ablation {kind} {match}")
        for i in range(PER_KIND):
            c = random_roll(rng, lm, i)
            n = rng.randint(1, longest) if i < PER_KIND - 2 else rng.randint(longest + 1, lm.model.cfg.n_ctx)
            words = c["prompt"].split() if i % 2 else sample_round(rng)    # random tokens, or a round of the game
            words = words[:n] + ["Pietro"] * (n - len(words))
            if i % 4 == 3:
                rng.shuffle(words)
            case = {"prompt": " ".join(words), "heads": c["heads"], "mlps": c["mlps"], "kind": kind, "match": match}
            out.append((case, outcome(lambda case=case: ablated_logits(
                lm, [case["prompt"]], [tuple(h) for h in case["heads"]], case["mlps"], kind, match=match)[0].tolist())))
    return out
