"""The code of the chapter `chapters/part2/hand-wired.md`: only what that chapter uses."""
