"""The code of the chapter `chapters/part3/real-model.md`: only what that chapter uses."""
