"""The code of the chapter `chapters/part3/practice.md`: only what that chapter uses."""
