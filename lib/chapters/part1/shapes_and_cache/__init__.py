"""The code of the chapter `chapters/part1/shapes-and-cache.md`: only what that chapter uses."""
