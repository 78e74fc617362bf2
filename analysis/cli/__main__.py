"""``python -m analysis.cli``: the ``hepfmt`` command."""

from analysis.cli import entry

entry()
