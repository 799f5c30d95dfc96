"""The one exception a learner is meant to read.

Every mistake the library can diagnose (an unknown word, a temperature of zero, a prompt that
does not fit the context) raises `CourseError` with a sentence that says what was wrong and what
is allowed. The command line and the widgets catch exactly this class and show its message;
anything else is a bug in the course, not in the learner's input.
"""


class CourseError(ValueError):
    """A user-facing error: its message is the whole explanation, no traceback needed."""


def require(condition: bool, message: str) -> None:
    """Raise `CourseError(message)` unless `condition` holds."""
    if not condition:
        raise CourseError(message)
