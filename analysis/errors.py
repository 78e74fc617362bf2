"""Errors a user sees: each names the file (or config key) and the problem, nothing more."""

from __future__ import annotations

from pathlib import Path

#: Set (to 1) when the user asked for the libraries' own messages (``hepfmt --verbose``).
VERBOSE = "HEPFMT_VERBOSE"


class HepfmtError(Exception):
    """Base class; the CLI prints these as one line and exits with status 2."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))  # libraries' messages span lines


class InputError(HepfmtError):
    """A file that is missing, truncated, corrupt or not what it claims to be."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class ConfigError(HepfmtError):
    """A config value that fails the schema; names the key path."""

    def __init__(self, key: str, problem: str) -> None:
        self.key = key
        super().__init__(f"config key {key!r}: {problem}")


class VerificationError(HepfmtError):
    """A written file or a read result that does not match what was asked or expected."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        super().__init__(f"{path}: {problem}")
