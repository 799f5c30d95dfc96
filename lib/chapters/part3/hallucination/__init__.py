"""The code of the chapter `chapters/part3/hallucination.md`: only what that chapter uses."""
