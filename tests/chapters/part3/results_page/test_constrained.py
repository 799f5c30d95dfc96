"""The game's rules as a logits processor (lib/chapters/part3/results_page/constrained.py)."""
import pytest
import torch


def test_generation_with_the_rules_as_a_processor_breaks_no_round(lm):
    """The game's rules as a logits processor (lib/chapters/part3/results_page/constrained.py) through
    lib.model.generate: hot rounds that break the rules without it keep them all with it; a processor that
    bans every token is refused in one line."""
    from lib.chapters.part3.results_page.constrained import rules_processor as processor
    from lib.content.corpora.calling_game import check_round
    from lib.errors import CourseError
    from lib.model.generate import generate

    eos, begin = lm.vocab.id("<EOS>"), lm.encode("<BOS>")
    broken = {}
    for name, proc in (("free", None), ("rules", lambda ids, z: processor(lm.vocab.decode(ids), z, lm.vocab.tokens))):
        broken[name] = sum(not check_round(lm.vocab.decode(generate(
            lm.model, begin, 47, do_sample=True, temperature=3.0, seed=s, stop=[eos], processor=proc).tokens))[0]
            for s in range(12))
    assert broken["free"] >= 3 and broken["rules"] == 0, broken
    with pytest.raises(CourseError, match="banned every token"):
        generate(lm.model, begin, 3, processor=lambda ids, z: torch.full_like(z, float("-inf")))
