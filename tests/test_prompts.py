"""Prompt templates that cannot be filled are refused when prompt_config.json loads, naming the file and template."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpcbench_async import InputError, load_prompts
from tests.conftest import REPO


def write(tmp_path: Path, **templates: dict[str, str]) -> Path:
    doc = json.loads((REPO / "prompt_config.json").read_text()) | templates
    path = tmp_path / "prompts.json"
    path.write_text(json.dumps({k: v for k, v in doc.items() if v is not None}))
    return path


def refusal(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        load_prompts(path)
    return str(caught.value)


@pytest.mark.parametrize(("user", "problem"), [
    ("Task: {user_promt}", "uses unknown placeholder {user_promt} (known: {now}, {timezone}, {user_prompt}, "
                           "{workday_start}, {workday_end})"),
    ("Task: {user_prompt", "is not a valid template (expected '}' before end of string; write a literal brace as "
                           "{{ or }})"),
    ("Reply as {\"answer\": 1}", "uses the placeholder {\"answer\"}; placeholders are plain names"),
    ("Task: {0}", "uses the placeholder {0}; placeholders are plain names"),
    ("Task: {user_prompt.__class__}", "uses the placeholder {user_prompt.__class__}; placeholders are plain names"),
    ("Task: {user_prompt:d}", "is not a valid template (Unknown format code 'd' for object of type 'str')"),
])
def test_a_template_that_cannot_be_filled_is_refused_at_load(tmp_path, user, problem):
    """Unknown placeholders, stray braces, positional or attribute fields and bad format specs fail at load."""
    path = write(tmp_path, agent={"system": "Now is {now}.", "user": user})
    assert f"{path}: $.agent.user {problem}" == refusal(path)


def test_every_bad_template_is_listed(tmp_path):
    """Two bad templates are reported together."""
    path = write(tmp_path, judge={"system": "{x}", "user": "{judge_input_json}"}, repair={"user": "{problem}"})
    assert (f"{path}: $.repair.user uses unknown placeholder {{problem}} (known: {{problems}})\n"
            f"{path}: $.judge.system uses unknown placeholder {{x}} (known: {{judge_input_json}})") == refusal(path)


def test_literal_braces_and_format_specs_are_fine(tmp_path):
    """Doubled braces and a format spec that fits the value load and render."""
    path = write(tmp_path, world_state={"system": 'Answer {{"ok": true}}.', "user": "noise {noise_level:.1f}"})
    prompts = load_prompts(path)
    assert ('Answer {"ok": true}.', "noise 0.5") == (prompts.render("world_state", "system"),
                                                     prompts.render("world_state", "user", noise_level=0.5))


def test_a_template_a_run_needs_is_required_naming_the_file(tmp_path):
    """require() refuses a run needing templates the file lacks, naming the file and each template."""
    path = write(tmp_path, agent=None, judge=None)
    with pytest.raises(InputError) as caught:
        load_prompts(path).require("agent", "judge", "repair")
    assert (f"{path}: $.agent is missing; $.judge is missing (this run needs them; copy them from the shipped "
            "prompt_config.json)") == str(caught.value)


@pytest.mark.parametrize(("name", "template", "field"), [
    ("agent", {"system": "", "user": "{user_prompt}"}, "$.agent.system"),
    ("judge", {"system": "Score it.", "user": " \n\t "}, "$.judge.user"),
    ("repair", {"system": "Fix it."}, "$.repair.user"),
    ("levels_agent", {"user": "{task_text}"}, "$.levels_agent.system"),
])
def test_an_empty_part_the_project_sends_is_refused(tmp_path, name, template, field):
    """An empty, blank or absent part a model would be sent is one message naming the file and the field."""
    path = write(tmp_path, **{name: template})
    assert (f"{path}: {field} is empty or missing; it is sent to the model, so give it a text (copy it from the "
            "shipped prompt_config.json)") == refusal(path)


def test_a_part_the_project_never_sends_may_be_empty(tmp_path):
    """repair and tariff_critique send only their user part: an empty system part loads."""
    path = write(tmp_path, repair={"system": "", "user": "Fix:\n{problems}"},
                 tariff_critique={"user": "Rejected:\n{reasons}"})
    assert "" == load_prompts(path).tariff_critique.system


def test_the_shipped_prompts_load():
    """The shipped prompt_config.json passes every check and has every template."""
    load_prompts(REPO / "prompt_config.json").require("agent", "judge", "tariff_proposer", "tariff_critique")
