"""The code of the chapter `chapters/part3/mechanism.md`: only what that chapter uses."""
