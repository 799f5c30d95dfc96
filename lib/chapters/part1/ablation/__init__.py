"""The code of the chapter `chapters/part1/ablation.md`: only what that chapter uses."""
