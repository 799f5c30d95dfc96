"""The code of the chapter `chapters/part1/one-head.md`: only what that chapter uses."""
