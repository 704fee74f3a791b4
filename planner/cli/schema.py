"""`plan schema`: JSON Schema of scenario, catalog, patch, model (a model card), cards (card
specs) and plan files."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated, Any

import typer

from planner.cli.common import JsonOption, to_json, write_json
from planner.domain.catalog import CardSpecs, Catalog
from planner.domain.model_card import ModelCard
from planner.domain.plan import Plan
from planner.domain.scenario import ScenarioFile


class Kind(StrEnum):
    all = "all"
    scenario = "scenario"
    catalog = "catalog"
    patch = "patch"
    model = "model"
    cards = "cards"
    plan = "plan"


def _optional_everywhere(schema: Any) -> Any:
    """A patch names only what it changes: the scenario's schema with nothing required."""
    if isinstance(schema, dict):
        return {k: _optional_everywhere(v) for k, v in schema.items() if k != "required"}
    if isinstance(schema, list):
        return [_optional_everywhere(v) for v in schema]
    return schema


def _other_spellings(schema: dict[str, Any]) -> dict[str, Any]:
    """The scenario's schema with what its file may also write (`ScenarioFile`'s other
    spellings): `catalogs` for `catalog`, `rates` for `exchange_rates`."""
    properties = schema["properties"]
    properties["catalogs"] = properties["catalog"]
    properties["rates"] = {
        "type": "object",
        "description": "{USD: {CNY: 7.10, as_of: 2026-09-24}}: the scenario's currency per unit "
        "of another, as of a date (the same as exchange_rates)",
        "additionalProperties": {
            "type": "object",
            "properties": {
                "as_of": {"type": "string", "format": "date"},
                "source": {"type": "string"},
            },
            "required": ["as_of"],
            "additionalProperties": {"type": "number", "exclusiveMinimum": 0},
        },
    }
    schema["required"] = [r for r in schema["required"] if r != "catalog"]
    schema["anyOf"] = [{"required": ["catalog"]}, {"required": ["catalogs"]}]
    return schema


def schemas() -> dict[str, Any]:
    scenario = _other_spellings(ScenarioFile.model_json_schema())
    return {
        "scenario": scenario,
        "catalog": Catalog.model_json_schema(),
        "patch": _optional_everywhere(scenario),
        "model": ModelCard.model_json_schema(),
        "cards": CardSpecs.model_json_schema(),
        "plan": Plan.model_json_schema(),
    }


def schema_command(
    kind: Annotated[Kind, typer.Argument(help="Which file's schema.")] = Kind.all,
    json_path: JsonOption = None,
) -> None:
    """Print the JSON Schema of scenario, catalog, patch, model (card), cards (specs) or
    plan files."""
    everything = schemas()
    result = everything if kind is Kind.all else everything[kind.value]
    if json_path is None:
        sys.stdout.write(to_json(result) + "\n")
    else:
        write_json(result, json_path)
