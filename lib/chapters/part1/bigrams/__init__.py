"""The code of the chapter `chapters/part1/bigrams.md`: only what that chapter uses."""
