"""The one error a bad saved program raises: it names the file and what was wrong in it."""


class SavedModelError(ValueError):
    """A saved program that is malformed, truncated, hostile or of another format version.

    ``path`` is the file (or directory) at fault; the message says what was wrong.
    """

    def __init__(self, path, problem):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


__all__ = ["SavedModelError"]
