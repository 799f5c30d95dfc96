"""The code of the chapter `chapters/part1/induction.md`: only what that chapter uses."""
