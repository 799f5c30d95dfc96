"""Entropy and margin beside the rules (lib.analysis.signs): the page set beside the rules' verdict, and the
verdict held to the top word."""
import math

from lib.analysis.signs import random_prompts, read_signs, rules_say


def test_signs_set_the_page_beside_the_rules(lm):
    s = read_signs(lm, "<BOS> Pietro chiama")
    assert s.on_distribution and s.top_allowed and math.isclose(s.entropy_bits, 3.17, abs_tol=0.05)
    bad = read_signs(lm, "<BOS> Pietro chiama Pietro")
    assert not bad.on_distribution and "opening call cannot be wrong" in bad.why_impossible
    assert rules_say("<BOS> Pietro chiama Paolo") == ({"Tarso": 1.0}, "")
    prompts = random_prompts(lm, 20, seed=3)
    assert prompts == random_prompts(lm, 20, seed=3) and all(p.startswith("<BOS> ") for p in prompts)

def test_the_verdict_holds_the_top_word_to_the_rules(lm):
    from lib.analysis.signs import Signs, epithet_rule

    assert epithet_rule("<BOS> Pietro chiama Pietro") == "capo"      # the epithet still follows a wrong call
    assert epithet_rule("Pietro chiama Paolo") == "Tarso" and epithet_rule("<BOS> banana chiama Paolo") is None
    assert epithet_rule("<BOS> Pietro chiama 4") is None
    s = read_signs(lm, "<BOS> Pietro chiama Pietro")
    assert not s.on_distribution and s.top == "capo" and s.verdict == "epithet rule"
    assert read_signs(lm, "<BOS> Tarso Tarso Tarso").verdict == "no rule"
    assert read_signs(lm, "<BOS> Pietro chiama Paolo").verdict == "allowed"
    wrong = Signs("<BOS> Pietro chiama Paolo", "vice", 0.9, 0.5, 0.8, {"Tarso": 1.0})
    assert wrong.verdict == "mistake" and wrong.rules_want == "Tarso"
    stray = Signs("Pietro chiama Paolo", "perde", 0.9, 0.5, 0.8, None, "no <BOS>", "Tarso")
    assert stray.verdict == "mistake" and stray.rules_want == "Tarso"
    open_page = Signs("<BOS> Pietro chiama", "3", 0.12, 3.2, 0.01, {"3": 0.5, "4": 0.5})
    assert open_page.verdict == "allowed" and open_page.rules_want is None
