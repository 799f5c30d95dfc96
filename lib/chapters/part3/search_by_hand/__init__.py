"""The code of the chapter `chapters/part3/search-by-hand.md`: only what that chapter uses."""
