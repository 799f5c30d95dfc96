"""The self-checks of chapters/part2/residual-path (lib/chapters/part2/residual_path/checks.py): each accepts
the right answer and names the typical mistakes, without giving the answer away."""


def test_part2_residual_path_checks(lm):
    from lib.chapters.part2.residual_path import checks as residual_path
    from lib.analysis.ablation import all_heads
    from lib.analysis.trajectory import path_view
    from lib.model.readout import prompt_logits
    later = residual_path.later_turn(lm)
    assert later.endswith("Pietro chiama Paolo") and later != residual_path.PROMPT
    # Predict: the top token without block 0's heads. Tarso (the intact answer) has its own diagnosis.
    heads0 = [h for h in all_heads(lm.model) if h[0] == 0]
    blind = lm.vocab.tokens[int(prompt_logits(lm, later, ablate=heads0).argmax())]
    assert blind != "Tarso"
    assert residual_path.blind_top_token(lm, blind)
    assert "intact model" in residual_path.blind_top_token(lm, "Tarso").message
    assert blind not in residual_path.blind_top_token(lm, "capo").message
    # Investigate: the most necessary single component on the later turn, not the first turn's.
    effects = residual_path.single_effects(lm, later)
    best = min(effects, key=effects.get)
    first = residual_path.single_effects(lm, residual_path.PROMPT)
    first_best = min(first, key=first.get)
    assert best != first_best and best != "MLP 1"
    assert residual_path.most_necessary(lm, best)
    assert "first turn" in residual_path.most_necessary(lm, first_best).message
    assert "largest push" in residual_path.most_necessary(lm, "MLP 1").message
    # Investigate: P(Tarso) on the later turn with the whole of block 1 off; each half alone is diagnosed.
    heads1 = [h for h in all_heads(lm.model) if h[0] == 1]
    view = path_view(lm, later, heads_off=heads1, mlps_off=[1])
    # The mean over the set, its first prompt being the drawn later turn (its P(Tarso) as the path reads it).
    turns = residual_path.later_turns(lm)
    assert len(turns) == 40 and turns[0] == later
    assert abs(residual_path.mean_target(lm, turns[:1], heads1, [1]) - view.prob) < 1e-9
    v = residual_path.BLOCK1_OFF.computed(lm)     # means over the 40, computed once (each is 40 runs)
    assert residual_path.block1_off(lm, v.expected) and v.hints["one"] == view.prob
    for key, said in (("intact", "intact"), ("heads", "MLP off too"), ("mlp", "heads off too"), ("one", "alone")):
        assert said in residual_path.block1_off(lm, v.hints[key]).message
