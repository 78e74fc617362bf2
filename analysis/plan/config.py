"""Study configuration: load, validate against the workflow's JSON schema, fill defaults.

The schema file is the one Snakemake's ``validate`` uses, so the CLI and the workflow accept
exactly the same configs and fill in exactly the same defaults.
"""

from __future__ import annotations

from pathlib import Path

import jsonschema
import yaml

from analysis.errors import ConfigError, InputError
from analysis.plan import schema as config_schema


def _with_defaults(cls):
    """A validator that fills ``default`` values while it validates (jsonschema FAQ recipe)."""
    validate_props = cls.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub and name not in instance:
                    instance[name] = _copy(sub["default"])
        yield from validate_props(validator, properties, instance, schema)

    return jsonschema.validators.extend(cls, {"properties": set_defaults})


def _copy(value):
    return yaml.safe_load(yaml.safe_dump(value))


def validate(config: dict) -> dict:
    """Validate in place (filling defaults) and return the config; errors name the key.

    Everything a job would trip over is checked here, before any job: the schema (types,
    ranges), then :func:`analysis.plan.checks.check` (names, codec levels, writer options,
    input files, sub-grids)."""
    schema = config_schema.load()
    cls = _with_defaults(jsonschema.validators.validator_for(schema))
    errors = sorted(cls(schema).iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        # a oneOf: what is wrong in the alternative of the value's own type, if there is one
        # ("5000 is greater than the maximum of 1024", not "is not valid under any of ...")
        err = next((e for e in err.context if e.validator not in ("type", "const")), err)
        key = config_schema.key(err.absolute_path) or "(top level)"
        raise ConfigError(key, err.message)
    from analysis.plan.checks import check  # they need the format registry

    check(config)
    return config


def load(path: str | Path) -> dict:
    try:
        config = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise InputError(path, f"cannot read config ({exc.strerror})") from exc
    except yaml.YAMLError as exc:
        raise InputError(path, f"not valid YAML ({exc})") from exc
    if not isinstance(config, dict):
        raise InputError(path, "config must be a mapping")
    return validate(config)
