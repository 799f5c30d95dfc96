"""The code of the chapter `chapters/part1/the-game.md`: only what that chapter uses."""
