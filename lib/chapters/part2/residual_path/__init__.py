"""The code of the chapter `chapters/part2/residual-path.md`: only what that chapter uses."""
