"""The code of the chapter `chapters/part3/lever.md`: only what that chapter uses."""
