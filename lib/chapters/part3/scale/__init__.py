"""The code of the chapter `chapters/part3/scale.md`: only what that chapter uses."""
