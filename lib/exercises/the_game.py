"""Self-checks for the chapter "The calling game"."""
from __future__ import annotations

from lib.content.corpora import calling_game as cg
from lib.exercises import Feedback, check_choice, check_number, per_model

# ------------------------------------------------------------------ predict: the end of a round
CALL_BACK = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama 3 <SEP> 3 chiama Paolo"


def round_ending(prefix: str = CALL_BACK) -> list[str]:
    """The only way the rules let `prefix` go on to its end (each step has one allowed token)."""
    tokens = prefix.split()
    while True:
        v = cg.read_round(tokens)
        if v.status == "valid":
            return tokens[len(prefix.split()):]
        if v.status != "unfinished" or len(v.allowed) != 1:
            raise ValueError(f"{prefix!r} does not go on one way only")
        tokens.append(v.allowed[0])


def rest_of_round(answer) -> Feedback:
    """Predict: the tokens that must follow CALL_BACK, to the end of the round."""
    from lib.exercises import NOT_ANSWERED, shown, unanswered

    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    if not isinstance(answer, str) or not answer.split():
        return Feedback(False, f"the answer should be the tokens as one string, separated by spaces; got {shown(answer)}.")
    got, expected = answer.split(), round_ending()
    if got == expected:
        return Feedback(True, f"{answer}: 3 calls back the player who just called him, a wrong call that still "
                              "carries its epithet, and the caller who erred loses.")
    if got[:1] == ["<SEP>"]:
        return Feedback(False, "the callee is Pietro or Paolo here: something is spoken before the turn ends.")
    if got[:1] != expected[:1]:
        return Feedback(False, f"{got[0]} is not the word spoken when this caller calls this callee: read the "
                               "epithets' table again.")
    if "perde" in got[1:] and got[got.index("perde") - 1] != "3":
        return Feedback(False, "the loser is not the one who erred: who made the wrong call?")
    if got[1:3] == ["<SEP>", "Paolo"]:
        return Feedback(False, "the round does not go on as if nothing happened: who called 3 just before?")
    return Feedback(False, f"not the ending the rules give; the checker reads your round as: "
                           f"{cg.read_round(CALL_BACK.split() + got).message}.")


# ------------------------------------------------------------------ investigate: the model's own mistakes
GENERATED_ROUNDS, GENERATION_SEED = 200, 11
RULE_ANSWERS = tuple(cg.RULES) + ("none",)


@per_model
def _model_rounds(lm) -> list[list[str]]:
    from lib.model.generate import sample_many

    bos, eos = lm.vocab.id("<BOS>"), lm.vocab.id("<EOS>")
    samples = sample_many(lm.model, [bos], GENERATED_ROUNDS, lm.model.cfg.n_ctx - 1, seed=GENERATION_SEED, stop=eos)
    return [lm.vocab.decode(s) for s in samples]


def rule_counts(lm) -> dict[str, int]:
    """How many of the model's rounds break each rule (and "none": valid ones); an unfinished round
    (the context ran out) counts under the rule it stops at."""
    counts = dict.fromkeys(RULE_ANSWERS, 0)
    for r in _model_rounds(lm):
        v = cg.read_round(r)
        counts[v.rule or "none"] += 1
    return counts


def most_broken_rule(lm, answer) -> Feedback:
    """Investigate: the rule the model's own rounds break most often."""
    counts = rule_counts(lm)
    broken = {k: n for k, n in counts.items() if k != "none"}
    top = max(broken, key=lambda k: (broken[k], -RULE_ANSWERS.index(k)))
    return check_choice(answer, RULE_ANSWERS, top,
                        right=f"{answer}: {broken[top]} of the model's {GENERATED_ROUNDS} rounds break it, "
                              f"{sum(broken.values())} break a rule in all.",
                        wrong=f"{answer} is not the rule the model breaks most often: read every round with "
                              "read_round and count the verdicts' rules.",
                        hints={"none": "most rounds are valid, but the question is which rule the broken ones break; "
                                       "leave the valid ones out of the count."})
