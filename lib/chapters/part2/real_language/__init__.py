"""The code of the chapter `chapters/part2/real-language.md`: only what that chapter uses."""
