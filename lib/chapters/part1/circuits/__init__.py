"""The code of the chapter `chapters/part1/circuits.md`: only what that chapter uses."""
