"""`mscodegen schema`: print the config's JSON Schema (for editor completion)."""

from __future__ import annotations

import argparse
import json

from mscodegen.cli._common import EXIT_OK, SubParsers, command


def add(sub: SubParsers) -> None:
    command(
        sub,
        "schema",
        "print the config's JSON Schema (for editor completion)",
        "mscodegen schema > mscodegen.schema.json",
    )


def run(_args: argparse.Namespace) -> int:
    from pydantic import TypeAdapter

    from mscodegen.schema import Config
    from mscodegen.schema.gan import GanConfig

    # One network or two (gan:): either form, as the loader tells them apart.
    schema = TypeAdapter(Config | GanConfig).json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "mscodegen config"
    for form in ("Config", "GanConfig"):
        schema["$defs"][form]["properties"]["extends"] = {  # read by compose.py before the schema sees it
            "description": "base config file(s), relative to this file, merged in order under this one",
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
        }
    print(json.dumps(schema, indent=2, sort_keys=True))
    return EXIT_OK
