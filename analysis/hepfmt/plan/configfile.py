"""Reading a config file: bounded and strict, before any of it is believed.

PyYAML's safe loader accepts what no study config holds: a key given twice (YAML keeps the last
entry and silently drops the first), aliases that expand a 1 kB file into a billion values (the
"billion laughs": every later walk over the config, schema validation included, never ends), an
alias inside its own anchor (a value that contains itself: every walk recurses until Python
gives up) and files of any size (PyYAML takes minutes over a 50 MB label). So the file's size is
bounded before it is parsed, and :class:`StrictLoader` checks the composed YAML graph, where an
alias is still one node, before any Python value is built from it: one memoised pass counts
the values it expands to, finds loops and repeated keys, and names the key of each.

A config is plain YAML, read only from a regular file (a FIFO would hang the read), in UTF-8
(a UTF-16 one is named as such): YTE's templating keys, which make Snakemake run a config's
Python while it loads it, are refused (:data:`YTE_KEYS`; :mod:`hepfmt.plan.plainconfig`
makes Snakemake itself read config files through :func:`read`).
"""

from __future__ import annotations

from pathlib import Path

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from hepfmt import records
from hepfmt.errors import ConfigError, InputError
from hepfmt.plan import schema

#: A config file's size at most: the shipped configs are 2-7 kB.
MAX_BYTES = 1_000_000
#: Values (mapping entries, sequence items, scalars) a config expands to at most, its aliases
#: expanded: the shipped configs have a few hundred.
MAX_VALUES = 100_000
#: Nesting at most: a config is 5 levels deep (measure.selections.<name>[i][j]).
MAX_DEPTH = 32

_MERGE = "tag:yaml.org,2002:merge"  # ``<<: *defaults``: a merge, not a key given twice
#: YTE's keys (Snakemake's YAML templating): with ``__use_yte__: true`` Snakemake evaluates a
#: config's ``__definitions__``, ``__variables__`` and every ``?``-value as Python while it
#: loads it. A study config is plain YAML: a key of these is refused, whoever reads the file
#: (hepfmt, the Snakefile, Snakemake in hepfmt's venv: :mod:`hepfmt.plan.plainconfig`).
YTE_KEYS = ("__use_yte__", "__definitions__", "__variables__")
#: Byte-order marks of the encodings a config is not in (UTF-8's own is taken).
_BOMS = {b"\xff\xfe\x00\x00": "UTF-32", b"\x00\x00\xfe\xff": "UTF-32",
         b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}


class StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader that refuses, naming the key, a key given twice, an alias loop, a
    document nested too deep and one whose aliases expand past :data:`MAX_VALUES`."""

    def compose_document(self) -> Node:
        node = super().compose_document()
        _count(node, (), 0, set(), {})
        return node


def _count(node: Node, path: tuple, depth: int, open_: set[int], done: dict[int, int]) -> int:
    """Values under ``node`` with aliases expanded; an alias met again costs its count, not a
    second walk (``done``), so a billion laughs is counted in as many steps as it has lines."""
    me = id(node)
    if me in open_:
        raise ConfigError(_name(path), "a YAML alias inside its own anchor (the value would "
                                       "contain itself)")
    if me in done:
        return done[me]
    if depth > MAX_DEPTH:
        raise ConfigError(_name(path), f"nested deeper than {MAX_DEPTH} levels")
    n = 1
    if isinstance(node, MappingNode | SequenceNode):
        open_.add(me)
        if isinstance(node, SequenceNode):
            for i, item in enumerate(node.value):
                n += _count(item, (*path, i), depth + 1, open_, done)
        else:
            lines: dict[str, int] = {}
            for k, v in node.value:
                name = k.value if isinstance(k, ScalarNode) else "?"
                if isinstance(k, ScalarNode) and k.tag != _MERGE:
                    if name in lines:
                        where = k.start_mark
                        raise ConfigError(_name((*path, name)), (
                            f"given twice (lines {lines[name]} and {where.line + 1} of "
                            f"{where.name}); YAML would keep only the last"))
                    lines[name] = k.start_mark.line + 1
                n += 1 + _count(v, (*path, name), depth + 1, open_, done)
        open_.discard(me)
    done[me] = n
    if n > MAX_VALUES:
        raise ConfigError(_name(path), f"holds more than {MAX_VALUES:,} values (YAML aliases "
                                       "expanded): not a study config")
    return n


def _name(path: tuple) -> str:
    return schema.key(path) or "(top level)"


def _decode(path: str | Path, data: bytes) -> str:
    for bom, name in _BOMS.items():
        if data.startswith(bom):
            raise InputError(path, f"{name} text (it starts with a {name} byte-order mark): "
                                   "save the config as UTF-8")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        wide = b"\x00" in data[:200] and " (UTF-16 or UTF-32 without a byte-order mark?)"
        raise InputError(path, f"not UTF-8 text (byte {exc.start}){wide or ''}: save the "
                               "config as UTF-8") from None


def read(path: str | Path) -> dict:
    """The config file ``path`` as a mapping; a file that is no regular file (a FIFO, a
    device, a directory), too large, not UTF-8, not YAML or not a mapping is refused naming the
    file, a key given twice (or an alias loop, a YTE key, ...) naming the key."""
    # bounded, and checked on the open file: a FIFO or /dev/zero is no config either
    data = records.read_bounded(path, MAX_BYTES, "study config")
    text = _decode(path, data)
    loader = StrictLoader(text)
    loader.name = str(path)  # YAML's error marks name the file
    try:
        config = loader.get_single_data()
    except yaml.YAMLError as exc:
        raise InputError(path, f"not valid YAML ({exc})") from None
    except RecursionError:  # PyYAML composes flow collections recursively
        raise InputError(path, "nested too deeply: not a study config") from None
    finally:
        loader.dispose()
    if not isinstance(config, dict):
        raise InputError(path, "config must be a mapping")
    for key in YTE_KEYS:
        if key in config:
            raise ConfigError(key, "YTE templating (Snakemake would run the Python in this "
                                   "config while loading it): a study config is plain YAML")
    return config
