"""The code of the chapter `chapters/part3/tools.md`: only what that chapter uses."""
