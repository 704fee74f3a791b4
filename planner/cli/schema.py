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


def schemas() -> dict[str, Any]:
    scenario = ScenarioFile.model_json_schema()
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
