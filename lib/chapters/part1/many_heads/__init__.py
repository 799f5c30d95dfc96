"""The code of the chapter `chapters/part1/many-heads.md`: only what that chapter uses."""
