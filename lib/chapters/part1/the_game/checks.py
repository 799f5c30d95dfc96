"""Self-checks for the chapter "The calling game"."""
from __future__ import annotations

from lib.content.corpora import calling_game as cg
from lib.exercises import Feedback, NOT_ANSWERED, check_choice, check_number, per_model, shown, unanswered
from lib.exercises.site import Values, site_check
from lib.model.generate import sample_many

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


ERRED, CALLED_BACK = "3", "Paolo"     # CALL_BACK's last caller, who calls back the one who called him


def _ending_examples() -> Values:
    """Answers the tests type (an open check ships no values): the right one, and one per text."""
    ending = round_ending()
    return Values(" ".join(ending), hints={"sep_first": "<SEP> Paolo chiama 4",
                                           "first_word": " ".join(["Tarso"] + ending[1:]),
                                           "loser": " ".join(ending[:1] + ["<SEP>", CALLED_BACK, "perde", "<EOS>"]),
                                           "goes_on": " ".join(ending[:1] + ["<SEP>", CALLED_BACK, "chiama", "4"]),
                                           "other": " ".join(ending[:-1])})


REST_OF_ROUND = site_check(__name__, "rest_of_round", rule="open", reads="text", compute="restOfRound",
                           values=_ending_examples, words=tuple(cg.TOKENS), args={"prefix": CALL_BACK, "erred": ERRED, "called_back": CALLED_BACK},
                           texts={
    "not_tokens": "the answer should be the tokens as one string, separated by spaces; got {shown}.",
    "right": "{answer}: " + ERRED + " calls back the player who just called him, a wrong call that still carries its "
             "epithet, and the caller who erred loses.",
    "sep_first": "the callee is Pietro or Paolo here: something is spoken before the turn ends.",
    "first_word": "{first} is not the word spoken when this caller calls this callee: read the epithets' table again.",
    "loser": "the loser is not the one who erred: who made the wrong call?",
    "goes_on": "the round does not go on as if nothing happened: who called " + ERRED + " just before?",
    "other": "not the ending the rules give; the checker reads your round as: {reading}."})


def rest_of_round(answer) -> Feedback:
    """Predict: the tokens that must follow CALL_BACK, to the end of the round."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    answer = REST_OF_ROUND.read(answer)          # case, spaces and quotes as a learner writes them
    if not isinstance(answer, str) or not answer.split():
        return REST_OF_ROUND.say("not_tokens", shown=shown(answer))
    got, expected = answer.split(), round_ending()
    if got == expected:
        return REST_OF_ROUND.say("right", True, answer=answer)
    if got[:1] == ["<SEP>"]:
        return REST_OF_ROUND.say("sep_first")
    if got[:1] != expected[:1]:
        return REST_OF_ROUND.say("first_word", first=got[0])
    if "perde" in got[1:] and got[got.index("perde") - 1] != ERRED:
        return REST_OF_ROUND.say("loser")
    if got[1:3] == ["<SEP>", CALLED_BACK]:
        return REST_OF_ROUND.say("goes_on")
    return REST_OF_ROUND.say("other", reading=cg.read_round(CALL_BACK.split() + got).message)


# ------------------------------------------------------------------ investigate: the model's own mistakes
GENERATED_ROUNDS, GENERATION_SEED = 200, 11
RULE_ANSWERS = tuple(cg.RULES) + ("none",)


@per_model
def _model_rounds(lm) -> list[list[str]]:
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


@per_model
def most_broken(lm) -> tuple[str, int, int]:
    """The rule the model's rounds break most often, how many break it, and how many break a rule."""
    counts = rule_counts(lm)
    broken = {k: n for k, n in counts.items() if k != "none"}
    top = max(broken, key=lambda k: (broken[k], -RULE_ANSWERS.index(k)))
    return top, broken[top], sum(broken.values())


# A notebook exercise: the rounds are drawn by torch's sampler, which the page does not repeat, so the
# website gives it no answer box (lib/explorers/js/checks.js says to run it live).
def most_broken_rule(lm, answer) -> Feedback:
    """Investigate: the rule the model's own rounds break most often."""
    top, count, broken = most_broken(lm)
    return check_choice(
        answer, RULE_ANSWERS, top,
        right=f"{top}: {count} of the model's {GENERATED_ROUNDS} rounds break it, {broken} break a rule in all.",
        wrong="that is not the rule the model breaks most often: read every round with the rules checker and count "
              "the verdicts' rules.",
        hints={"none": "most rounds are valid, but the question is which rule the broken ones break; leave the valid "
                       "ones out of the count."})
