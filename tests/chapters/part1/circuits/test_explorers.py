"""The circuits chapter's explorer (lib/chapters/part1/circuits/explorers.py): any head's pattern on any prompt,
the model's own, and a prompt too long for the model named in one line."""
import torch

from lib.chapters.part1.circuits.explorers import pattern_viewer

CEFA = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama Pietro"


def test_the_pattern_is_the_models_and_a_long_prompt_is_refused(lm):
    viewer = pattern_viewer(lm, [CEFA]).widget()
    viewer.controls["layer"].value, viewer.controls["head"].value = 1, 2
    shown = viewer.figure.data
    _, cache = lm.model.run_with_cache(lm.encode(CEFA))
    assert shown["tokens"] == CEFA.split() and (shown["layer"], shown["head"]) == (1, 2)
    assert torch.allclose(torch.tensor(shown["pattern"], dtype=torch.float64),
                          cache["blocks.1.attn.pattern"][2].double(), atol=1e-6)
    viewer.controls["prompt"].value = "<BOS> " * 60
    assert "at most 48" in viewer.message.value
