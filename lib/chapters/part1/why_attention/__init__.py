"""The code of the chapter `chapters/part1/why-attention.md`: only what that chapter uses."""
