"""The code of the chapter `chapters/part2/what-an-embedding-is.md`: only what that chapter uses."""
