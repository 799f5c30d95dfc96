"""The code of the chapter `chapters/part2/gram-schmidt-by-hand.md`: only what that chapter uses."""
