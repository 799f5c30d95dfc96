"""The game's chapter's explorer (lib/chapters/part1/the_game/explorers.py): the rules checker in a kernel reads a
round and says what is wrong."""
from lib.chapters.part1.the_game.explorers import rules_explorer


def test_the_rules_checker_in_a_kernel_reads_a_round_and_says_what_is_wrong(lm):
    box = rules_explorer(lm, ["<BOS> Pietro chiama Paolo Tarso"]).widget()
    assert box.figure.data["status"] == "unfinished" and box.figure.data["allowed"] == ["<SEP>"]
    box.controls["prompt"].value = "<BOS> Pietro chiama Paolo vice"
    assert box.figure.data["status"] == "broken" and box.figure.data["position"] == 4
    assert "must say 'Tarso'" in box.figure.data["message"] and box.message.value == ""
    box.controls["prompt"].value = "<BOS> Pietro chiamma"
    assert "unknown token" in box.message.value and box.figure.data["position"] == 4
