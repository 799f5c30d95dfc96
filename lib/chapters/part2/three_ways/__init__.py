"""The code of the chapter `chapters/part2/three-ways.md`: only what that chapter uses."""
