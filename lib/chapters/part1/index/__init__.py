"""The code of the chapter `chapters/part1/index.md`: only what that chapter uses."""
