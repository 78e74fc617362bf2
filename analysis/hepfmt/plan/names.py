"""What a name, a label and every other string of a config may be: printable text on one line,
and one name however Unicode spells it.

A config's strings end up in tables, figures, logs, file names and command lines: a newline
or an ANSI escape in a label garbles every table it is in, a right-to-left override shows one
label as another, and two samples ``DY`` and ``ＤＹ`` read as one name but make two files.
"""

from __future__ import annotations

import unicodedata

#: Unicode categories no string of a config may hold: controls (a newline, a tab, the escape
#: that starts an ANSI sequence), format characters (the bidirectional overrides and
#: isolates, zero-width ones) and line and paragraph separators. Each garbles the tables,
#: figures, logs and file names a string ends up in, or hides what it says.
UNPRINTABLE = frozenset({"Cc", "Cf", "Zl", "Zp"})
_SHOWN = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab",
          "\x1b": "an escape (an ANSI sequence)"}


def unprintable(text: str) -> str | None:
    """What makes ``text`` no printable one-line text, or None."""
    for i, ch in enumerate(text):
        if unicodedata.category(ch) in UNPRINTABLE:
            what = _SHOWN.get(ch) or f"U+{ord(ch):04X} {unicodedata.name(ch, 'a control')}"
            return (f"{text[:40]!r} holds {what} (character {i + 1}): names, labels and paths "
                    "are printable text on one line")
    return None


def normal(text: str) -> str:
    """``text`` as two names or labels are compared: NFKC-normalised (a full-width ``Ｚ`` or a
    ligature is its plain letter), its spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).split())
