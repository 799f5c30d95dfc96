"""What the course says to a reader whose input is wrong, written once for the library and the page.

The explorers on the website check a reader's input in JavaScript and must answer with the same
sentence as the library (a test holds them equal on random input). So the sentences they share live
here, as templates with named fields, and the page's copy is generated from this table when the
site is built (`lib.explorers.web.constants_module`), never typed a second time.

A caller formats the fields itself (a repr, `:g`, a count with commas), because Python and the
page each have their own formatting functions; the sentence around them is the shared part.
"""
from __future__ import annotations

MESSAGES: dict[str, str] = {
    # the read-out (lib.model.readout; the page's readout.js)
    "temperature_number": "temperature must be a positive number, got {got}",
    "temperature_range": "temperature must be a finite number of at least {minimum}, got {got}",
    "temperature_greedy": "temperature {got} is below {minimum}, the least the read-out divides by. Temperature 0 "
                          "would mean taking the most probable token every time: that is greedy decoding, {switch}",
    "greedy_off": "the greedy switch beside top-p: switch it on, and give a temperature of at least {minimum} "
                  "for the page shown",
    "greedy_on": "which is on: it takes the most probable token whatever the temperature, which only reshapes the "
                 "page shown and must be at least {minimum}",
    "seed": "a seed must be a whole number from 0 to {maximum}, got {got}",
    "top_k": "top-k must be a whole number of at least 1, got {got}",
    "top_k_text": "top-k must be a whole number of at least 1 (or blank for no limit), got {got}",
    "top_p_number": "top-p must be a number in (0, 1], got {got}",
    "top_p_range": "top-p must lie in (0, 1], got {got}",
    "top_p_floor": "top-p {got} is below {floor}, the smallest p the running sum can tell from 0 (a smaller p "
                   "would keep only the best token): give a p from {floor} to 1, or top-k 1",
    "logits_not_finite": "the logits divided by temperature {t} are not all finite numbers: use a larger temperature",
    # prompts (lib.model.vocab; the page's vocab.js)
    "empty_prompt": "the prompt is empty: give at least one token, for example '<BOS> Pietro chiama'",
    "unknown_token": "unknown token {token}{hint} Known tokens: {known}",
    "did_you_mean": "; did you mean {close}?",
    "empty_ids": "the prompt is empty: give at least one token",
    "reads_at_most": "the prompt has {n} tokens but {model} reads at most {n_ctx}",
    "context_holds": "the prompt has {n} tokens but the model's context holds at most {n_ctx}",
    # what is switched off or patched (lib.model.hooks, lib.analysis.ablation and patching; the page's
    # model.js and views.js)
    "no_head": "head ({layer}, {head}) does not exist: layers run 0 to {last_layer}, heads 0 to {last_head}",
    "no_layer": "layer {layer} does not exist: layers run 0 to {last_layer}",
    "ablation_kind": "unknown kind of ablation {kind}: choose one of {kinds}",
    "reference_too_short": "{kind} ablation needs the reference set's writes at every position, but its longest "
                           "round has {longest} tokens and the prompt {n}: use a shorter prompt",
    "no_call": "the prompt has no call (caller chiama callee) to find the roles in",
    "not_a_player": "the last call's caller, {caller}, is not a player, so there is no player to swap him with: "
                    "name the two players",
    "patch_lengths": "the clean prompt has {clean} tokens and the corrupted one {corrupted}: patching puts a clean "
                     "activation at the same position in the corrupted run, so the two must have the same length",
    "patch_same_token": "{said} {token}: a logit difference needs two different tokens (name them with target and "
                        "against)",
    "patch_no_change": "the logit difference {target} - {against} is {diff} after both prompts, so there is nothing "
                       "for a patch to recover: choose prompts, or a target and a rival, whose difference changes "
                       "between the runs",
    "direction_in_span": "direction {i} lies (almost) in the span of the earlier ones; choose another",
    "not_a_stop": "{name} {value} is not one of this set's stops: {stops}",
    # the calling game's rules checker (lib.content.corpora.calling_game.read_round; the page's game.js)
    "game_start": "position 0: a round starts with <BOS>, got {got}",
    "game_caller": "position {position}: {got} speaks, but it is {caller}'s turn",
    "game_chiama": "position {position}: expected 'CALLER chiama CALLEE': after the caller comes chiama, got {got}",
    "game_callee": "position {position}: {got} is not a callee: a caller calls a player (or, in a wrong call, "
                   "himself, the one who called him, or an absurd word)",
    "game_opening": "position {position}: the opening call cannot be wrong: Pietro calls one of the other nine "
                    "players, not {got}",
    "game_epithet": "position {position}: {caller} calling {callee} must say {epithet}, got {got}",
    "game_loser": "position {position}: after a wrong call the round ends '<SEP> {caller} perde <EOS>', got {got}",
    "game_separator": "position {position}: turns are separated by <SEP>, got {got}",
    "game_full": "position {position}: after {calls} legal calls the round ends with <EOS>, got {got}",
    "game_over": "position {position}: the round is over at the <EOS> before it; nothing comes after it, got {got}",
    "game_unfinished": "the round keeps the rules so far but stops before it ends: position {position} would be "
                       "one of {allowed}",
    "game_valid": "valid",
    # a prefix of a round (lib.content.corpora.calling_game.next_token_distribution; the page's game.js)
    "prefix_start": "a prefix of a round starts with <BOS>",
    "prefix_token": "not a prefix of a valid round: position {position} should be {token}",
    "prefix_opening": "not a prefix of a valid round: position {position}, {got}, the opening call cannot be wrong",
    "prefix_callee": "not a prefix of a valid round: position {position}, {got}, is not a callee",
    "prefix_ending": "not a prefix of a valid round: after a wrong call it ends {ending}",
    "game_valid_wrong": "valid (ends with a wrong call)",
    # the explorers' boxes (lib.explorers.boxes, lib.chapters.part2.three_ways.views, inventory; their twins in the page)
    "position": "position must be a whole number from 0 to {last} (the prompt has {n} tokens), or blank for the "
                "last; got {got}",
    "not_a_label": "{piece} is not a token here; the tokens are: {labels}",
    "empty_axis": "an axis needs at least one token, for example: Paolo - Pietro",
    "zero_axis": "the axis {axis} is the zero vector (a token minus itself has no direction); choose two different "
                 "tokens",
    "parallel_axes": "the second axis ({second}) points along the first ({first}): nothing is left of it after "
                     "Gram-Schmidt; choose a different second axis",
    "whole_count": "{name} must be a whole number from 1 to {maximum}, got {got}",
    "box_whole": "{label} must be a whole number, got {got}",
    "box_number": "bytes per number must be a number, got {got}",
    "bytes_per_element": "bytes per element must be a positive number, at most {maximum} (4 for float32, 2 for "
                         "float16), got {got}",
    "vector_numbers": "{name} must be {n} numbers from -{limit} to {limit}, separated by spaces; got {got}",
    # the real model's attention explorer (lib.chapters.part1.ablation.explorers; the page's real.js)
    "query": "the query must be a position from 0 to {last} or one of the sentence's tokens ({tokens}); got {got}",
    "not_precomputed": "the website holds the real model's attention for the {n} sentences of this menu only; in a "
                       "kernel (this page's notebook, from the download icon at the top) the explorer runs the model on any sentence",
    # the real next-token model's explorers on the website (lib.chapters.part3.real_model; its page.js)
    "not_stored": "the website holds SmolLM2's runs on the {n} prompts of this menu only; load the real model "
                  "(the button above) or open the page in a kernel to run it on any text",
    "min_p": "min-p must be a number above 0 and at most 1 (the share of the best token's probability a token must "
             "reach), got {got}",
    "decoding_method": "the decoding method must be one of {methods}; got {got}",
    # SmolLM2's text, in the library (lib.model.smollm2, lib.model.bytebpe) and in the page (smollm2/ops.js)
    "text_empty": "the prompt is empty: give SmolLM2 some text, for example 'The capital of France is'",
    "text_surrogate": "the text holds {code}, half of a surrogate pair, which is not a character UTF-8 can write: "
                      "give the text as ordinary Unicode",
    "text_unwritable": "SmolLM2's vocabulary cannot write {char} ({code}): its byte {byte} is no token of its "
                       "vocabulary; leave that character out",
    "rows_not_one": "SmolLM2 does not write {word} as one token after a space (it cuts it into {pieces}): choose "
                    "another word",
    "rows_none": "type one word or more, separated by commas (for example: king, queen, Paris)",
    "rows_many": "at most {most} words at a time, separated by commas; got {n}",
    "smol_induction_twice": "induction heads are found on a text read twice: switch 'read it twice' on",
    "page_text_long": "{what} is {n} tokens long; the course's explorers run SmolLM2 on at most {most} (every position's "
                      "pass and pattern grows with the length, and an answer must come in a few seconds): shorten it",
    "smol_text_long": "the text is {n} tokens long; this explorer reads at most {most} (twice, {twice}): shorten it",
    "smol_text_short": "the text needs at least two tokens (read twice, a one-token text has no pattern to copy)",
    "not_live": "the website holds this explorer's picture for the texts it opens with only; load the real model "
                "(the button above) or open the page in a kernel to run it on any text",
    # activation patching's warnings (lib.analysis.patching.patching_warnings; the page's twins)
    "patch_same_top": "the model puts {token} first after both prompts: the corruption does not change its answer",
    "patch_small_move": "the logit difference moves by only {moved} between the runs (less than {least}), so the "
                        "fractions are shares of almost nothing and mean little",
    "cache_overflow": "the cache would need more bytes than a number can count (over 1.8e308); choose smaller sizes",
    # the exercises' self-checks (lib.exercises; the website's answer boxes, checks.js)
    "answer_number": "{what} should be a single finite number; got {got}.",
    "answer_whole": "{what} should be a whole number; got {got}.",
    "answer_is": "{what} is {value}.",
    "answer_off": "{what} of {value} is {direction}.",
    "answer_one_of": "the answer should be one of {listed}; got {got}.",
    # a number written with one comma before three digits (lib.exercises.reading; the page's rules.js)
    "answer_comma": "{got} could be read two ways: as {thousands} (a comma between thousands) or as {decimal} (a "
                    "decimal comma); write {thousands} or {decimal}.",
    # the website's answer boxes only (a notebook's unanswered cell holds `...` instead)
    "answer_empty": "type your answer in the box, then press Check.",
    # the line under an answer box: how the box reads what is typed (lib.exercises.reading)
    "hint_number": "A number as you would write it: 0.482, 0,482, 48.2% and about 0.482 all read as 0.482, and 1/4 "
                   "as 0.25{units}. Only a comma before three digits is unclear (1,234: 1234 or 1.234?), so write "
                   "1234 or 1.234.",
    "hint_whole": "A whole number: 27126, 27,126 and 27 126 all read as 27126{units}.",
    "hint_choice": "One of the options; case, spaces and quotes do not matter.",
    "hint_text": "The tokens, separated by spaces; case, extra spaces and quotes do not matter.",
    "hint_tuple": "The items separated by commas (or spaces), in the order asked, for example: L0H3, 2.",
    "hint_units": "; the unit ({units}) may follow the number",
}


def say(message: str, /, **fields) -> str:
    """The sentence `message` with its fields filled in (each already formatted by the caller)."""
    return MESSAGES[message].format(**fields)
