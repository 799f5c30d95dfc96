"""The code of the chapter `chapters/part3/results-page.md`: only what that chapter uses."""
