"""``python -m hepfmt.cli``: the ``hepfmt`` command."""

from hepfmt.cli import entry

entry()
