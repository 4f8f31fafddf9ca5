"""MPCBench: scenarios, data generation and validation (evaluation follows)."""

from ._consistency import cross_source_problems, source_problems
from ._data import ScenarioData, load_scenario_data, parse_timestamp
from ._generation import DataGenerator, GenerationError, GenerationOutcome, data_path, encode_document
from ._parse import ReplyParseError, extract_json_object
from ._prompts import PromptConfig, PromptTemplate, load_prompts
from ._scenario import (
    GlobalSettings,
    Person,
    Project,
    Scenario,
    SubScenario,
    content_hash,
    list_scenarios,
    load_scenario,
)
from ._schemas import SOURCES, SchemaSet, format_path, load_schemas

__all__ = [
    "SOURCES",
    "DataGenerator",
    "GenerationError",
    "GenerationOutcome",
    "GlobalSettings",
    "Person",
    "Project",
    "PromptConfig",
    "PromptTemplate",
    "ReplyParseError",
    "Scenario",
    "ScenarioData",
    "SchemaSet",
    "SubScenario",
    "content_hash",
    "cross_source_problems",
    "data_path",
    "encode_document",
    "extract_json_object",
    "format_path",
    "list_scenarios",
    "load_prompts",
    "load_schemas",
    "load_scenario",
    "load_scenario_data",
    "parse_timestamp",
    "source_problems",
]
