"""Reading a config file: bounded and strict, before any of it is believed.

PyYAML's safe loader accepts what no study config holds: a key given twice (YAML keeps the last
entry and silently drops the first), aliases that expand a 1 kB file into a billion values (the
"billion laughs": every later walk over the config, schema validation included, never ends), an
alias inside its own anchor (a value that contains itself: every walk recurses until Python
gives up) and files of any size (PyYAML takes minutes over a 50 MB label). So the file's size is
bounded before it is parsed, and :class:`StrictLoader` checks the composed YAML graph, where an
alias is still one node, before any Python value is built from it: one memoised pass counts
the values it expands to, finds loops and repeated keys, and names the key of each.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from analysis.errors import ConfigError, InputError
from analysis.plan import schema

#: A config file's size at most: the shipped configs are 2-7 kB.
MAX_BYTES = 1_000_000
#: Values (mapping entries, sequence items, scalars) a config expands to at most, its aliases
#: expanded: the shipped configs have a few hundred.
MAX_VALUES = 100_000
#: Nesting at most: a config is 5 levels deep (measure.selections.<name>[i][j]).
MAX_DEPTH = 32

_MERGE = "tag:yaml.org,2002:merge"  # ``<<: *defaults``: a merge, not a key given twice


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


def read(path: str | Path) -> dict:
    """The config file ``path`` as a mapping; a file that is too large, not UTF-8, not YAML or
    not a mapping is refused naming the file, a key given twice (or an alias loop, ...) naming
    the key."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)  # bounded: a FIFO or /dev/zero is no config either
    except OSError as exc:
        raise InputError(path, f"cannot read config ({exc.strerror})") from exc
    if len(data) > MAX_BYTES:
        raise InputError(path, f"larger than {MAX_BYTES:,} bytes: not a study config (the "
                               "shipped ones are a few kB)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text") from None
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
    return config
