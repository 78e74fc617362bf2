"""Writer options checked before any job: names, types and ranges.

An option is only used when its file is written, after the samples were generated and other
files written; a typo there failed a job an hour in, and a nonsensical value was worse: ROOT
silently raises ``basket_size: -1`` to its own ~100-byte minimum and writes a file 14 times the
data. So each adapter's option names are checked against the adapter (``Format.options``), or,
for Parquet, against pyarrow's own ``ParquetWriter`` keywords (its signature plus the keywords
it documents for ``**options``); values against pyarrow's documented types and against the
ranges of the schema's ``$defs.options`` (one place a reader of the schema finds them).
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Mapping
from functools import cache

from hepfmt.codec import Variant
from hepfmt.errors import ConfigError
from hepfmt.formats import Format
from hepfmt.plan import schema

#: ParquetWriter keywords hepfmt passes itself, and what sets them.
PARQUET_SET_BY_HEPFMT = {"where": "hepfmt (the file written)",
                         "schema": "hepfmt (the sample's schema)",
                         "filesystem": "hepfmt (a local file)",
                         **{k: "each variant (formats.<name>.variants)"
                            for k in Variant("zstd", 3, True).pyarrow_parquet()}}
#: Python types of the type names pyarrow's docstring uses; any other name is a pyarrow object
#: (``FileEncryptionProperties``, ``Sequence of SortingColumn``) that a YAML file cannot hold.
_DOC_TYPES: dict[str, type | tuple[type, ...]] = {
    "bool": bool, "int": int, "str": str, "string": str, "list": list, "dict": dict}


def check(adapter: str, fmt: Format, options: Mapping, key: str) -> None:
    """Refuse, naming ``key``, an option ``adapter`` does not have or a value it cannot take."""
    if fmt.options is None:  # passed through to pyarrow, which is the authority on them
        check_parquet(options, key)
    else:
        unknown = sorted(set(options) - fmt.options)
        if unknown:
            raise ConfigError(f"{key}.{unknown[0]}" if key else unknown[0],
                              f"{adapter} has no option {unknown[0]!r}; known: "
                              f"{sorted(fmt.options)}")
    rules = schema.load()["$defs"]["options"].get(adapter)
    if rules:
        _validate({"type": "object", **rules}, options, key)


def _validate(rules: dict, value: object, key: str) -> None:
    errors = sorted(schema.validator_class(rules)(rules).iter_errors(value),
                    key=lambda e: list(e.absolute_path))
    if errors:
        raise ConfigError(schema.key(errors[0].absolute_path, key), errors[0].message)


@cache
def parquet_keywords() -> dict[str, tuple[str, str]]:
    """pyarrow ``ParquetWriter`` keyword -> (documented type, documented default); ("", "")
    for a signature parameter the docstring does not describe."""
    import pyarrow.parquet as pq

    params = inspect.signature(pq.ParquetWriter.__init__).parameters.values()
    out = {p.name: ("", "") for p in params if p.name != "self"
           and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    docs = getattr(getattr(pq, "core", None), "_parquet_writer_arg_docs", "")
    for name, kind, default in re.findall(r"^(\w+) : (.+?)(?:, default (.*))?$", docs, re.M):
        out[name] = (kind.strip(), default.strip())
    return out


def check_parquet(options: Mapping, key: str,
                  set_elsewhere: Mapping[str, str] | None = None) -> None:
    """pyarrow ``ParquetWriter`` keywords plus hepfmt's shorthands (``statistics``,
    ``byte_stream_split``): each one pyarrow has, not set by hepfmt or another key, of the
    type pyarrow documents. ``set_elsewhere``: option (or shorthand, with the keywords it
    implies) -> the config key that sets it instead."""
    from hepfmt.formats import parquet

    shorthands = {"statistics": set(next(iter(parquet.STATISTICS.values()))),
                  "byte_stream_split": {"use_byte_stream_split"}}
    keywords = parquet_keywords()
    taken = dict(PARQUET_SET_BY_HEPFMT)
    for name, by in (set_elsewhere or {}).items():
        taken.update(dict.fromkeys({name, *shorthands.get(name, ())}, by))
    for name, value in options.items():
        k = f"{key}.{name}"
        if name in taken:
            raise ConfigError(k, f"set by {taken[name]}, not an option")
        if name in shorthands:
            continue
        if name not in keywords:
            known = sorted(set(keywords) - set(taken) | set(shorthands))
            close = difflib.get_close_matches(name, known, n=1)
            raise ConfigError(k, "not a pyarrow ParquetWriter keyword" + (
                f" (did you mean {close[0]!r}?)" if close else f"; known: {known}"))
        for short, implied in shorthands.items():
            if name in implied and short in options:
                raise ConfigError(k, f"given twice: '{short}' sets it too")
        problem = _type_problem(value, *keywords[name])
        if problem:
            raise ConfigError(k, problem)


def _type_problem(value: object, kind: str, default: str) -> str | None:
    """Why pyarrow would refuse ``value`` for a keyword documented as ``kind`` (None: it would
    not, or pyarrow does not document it)."""
    if not kind or (value is None and default == "None"):
        return None
    if kind.startswith("{"):  # an enumeration, e.g. {"1.0", "2.0"}: pyarrow wants the string
        allowed = re.findall(r"[\"']([^\"']+)[\"']", kind)
        return None if value in allowed else \
            f"{value!r} is not one of {allowed} (quote it in YAML: \"2.0\", not 2.0)"
    types = [_DOC_TYPES.get(t.strip()) for t in kind.split(" or ")]
    if None in types:
        return f"needs a pyarrow object ({kind}), which a config cannot hold"
    if any(isinstance(value, t) and not (t is int and isinstance(value, bool)) for t in types):
        return None
    return f"{value!r} is not of type {kind!r} (pyarrow's documented type)"
