"""Model config values that would crash a call later are refused at load, naming the file, the entry and the path."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mpcbench_async import ConfigError
from mpcbench_async.llm import ModelConfig, load_model_config
from tests.conftest import REPO


def refusal(data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        ModelConfig.from_dict(data, source="mc.json")
    return str(caught.value)


def model(entry: dict[str, Any]) -> dict[str, Any]:
    return {"agent_models": ["m"], "models": {"m": entry}}


class TestParams:
    def test_max_tokens_as_a_string_is_refused_at_load(self, tmp_path):
        """The issue's case: params.max_tokens "2048" is one ConfigError naming file, model and path."""
        path = tmp_path / "model_config.json"
        path.write_text(json.dumps(model({"params": {"max_tokens": "2048"}})))
        with pytest.raises(ConfigError) as caught:
            load_model_config(path)
        assert f"{path}: models.m: Expected `int | null`, got `str` - at `$.params.max_tokens`" == str(caught.value)

    @pytest.mark.parametrize(("params", "expected"), [
        ({"max_tokens": 0}, "Expected `int` >= 1 - at `$.params.max_tokens`"),
        ({"max_completion_tokens": 1.5}, "Expected `int | null`, got `float` - at `$.params.max_completion_tokens`"),
        ({"temperature": "hot"}, "Expected `float | null`, got `str` - at `$.params.temperature`"),
        ({"temperature": -1}, "Expected `float` >= 0.0 - at `$.params.temperature`"),
        ({"top_p": 2}, "Expected `float` <= 1.0 - at `$.params.top_p`"),
        ({"stop": [1]}, "Expected `str`, got `int` - at `$.params.stop[0]`"),
    ])
    def test_known_params_have_their_api_types(self, params, expected):
        """Params the client or the API read with a fixed type are checked; the message names the path."""
        assert f"mc.json: models.m: {expected}" == refusal(model({"params": params}))

    def test_unknown_params_pass_through(self):
        """Provider-specific params (top_k, repetition_penalty …) are kept as written."""
        config = ModelConfig.from_dict(model({"params": {"top_k": 40, "repetition_penalty": 1.1}}))
        assert {"top_k": 40, "repetition_penalty": 1.1} == config.settings_for("m").params

    @pytest.mark.parametrize(("params", "expected"), [
        ({"messages": []}, "is set by the client (the task supplies them); remove it - at `$.params.messages`"),
        ({"model": "x"}, "is set by the client (name the API model with `model` beside `params`); remove it - at "
                         "`$.params.model`"),
    ])
    def test_params_the_client_owns_are_refused(self, params, expected):
        """A param that would replace the request's messages is refused."""
        assert f"mc.json: models.m: {expected}" == refusal(model({"params": params}))

    def test_deep_params_in_defaults_name_the_defaults(self):
        """params nested 40 levels deep in defaults are refused at the level where they pass the limit."""
        nested: Any = 1
        for _ in range(40):
            nested = {"a": nested}
        assert (f"mc.json: defaults: nests deeper than 32 levels - at `$.params{'.a' * 31}`"
                == refusal({"defaults": {"params": nested}}))

    def test_nesting_too_deep_to_decode_is_a_config_error(self, tmp_path):
        """5,000 levels of nesting are one ConfigError naming the file, not a RecursionError."""
        path = tmp_path / "model_config.json"
        path.write_text('{"defaults": {"params": {"x": ' + "[" * 5000 + "]" * 5000 + "}}}")
        with pytest.raises(ConfigError) as caught:
            load_model_config(path)
        assert f"{path}: nested too deeply to read" == str(caught.value)

    def test_an_integer_beyond_64_bits_is_refused(self):
        """A number the request encoder cannot write (orjson: 64 bits) is refused at load."""
        assert (f"mc.json: models.m: integer {2**64} does not fit in 64 bits - at `$.params.seed`"
                == refusal(model({"params": {"seed": 2**64}})))

    def test_a_structured_output_schema_loads(self):
        """A realistic response_format with a nested JSON schema is within the nesting limit."""
        schema: dict[str, Any] = {"type": "string"}
        for _ in range(8):
            schema = {"type": "object", "properties": {"x": schema}}
        response_format = {"type": "json_schema", "json_schema": {"name": "r", "schema": schema}}
        config = ModelConfig.from_dict(model({"params": {"response_format": response_format}}))
        assert response_format == config.settings_for("m").params["response_format"]


class TestSettings:
    @pytest.mark.parametrize(("entry", "expected"), [
        ({"limits": {"max_concurrency": 0}}, "must be at least 1, got 0 - at `$.limits.max_concurrency`"),
        ({"limits": {"rpm": 0}}, "must be at least 1, got 0 - at `$.limits.rpm`"),
        ({"retry": {"max_attempts": 0}}, "must be at least 1, got 0 - at `$.retry.max_attempts`"),
        ({"retry": {"initial_backoff": -1}}, "must be at least 0, got -1 - at `$.retry.initial_backoff`"),
        ({"prices": {"input_per_1m": -0.5}}, "must be at least 0, got -0.5 - at `$.prices.input_per_1m`"),
        ({"base_url": "localhost:8000/v1"}, "'localhost:8000/v1' is not an http(s) URL with a host - at `$.base_url`"),
        ({"api_key_env": "A=B"}, "'A=B' is not an environment variable name (null: no key) - at `$.api_key_env`"),
        ({"headers": {"X-Team": "a\r\nX-Evil: 1"}},
         "the value contains a line break or control character - at `$.headers.X-Team`"),
        ({"headers": {"Bad Name": "v"}}, "'Bad Name' is not an HTTP header name - at `$.headers`"),
        ({"model": ""}, "API model name must not be empty - at `$.model`"),
    ])
    def test_values_that_would_fail_a_call_are_refused(self, entry, expected):
        """Limits, retries, prices, URL, key variable, headers and API name are checked at load."""
        assert f"mc.json: models.m: {expected}" == refusal(model(entry))

    def test_every_bad_entry_is_reported_at_once(self):
        """Problems in the defaults and in two models are listed together, each naming its entry."""
        assert ("mc.json: defaults: must be at least 1, got 0 - at `$.limits.max_concurrency`\n"
                "mc.json: models.a: Expected `int | null`, got `str` - at `$.params.max_tokens`\n"
                "mc.json: models.b: must be at least 1, got 0 - at `$.retry.max_attempts`") == refusal(
            {"defaults": {"limits": {"max_concurrency": 0}},
             "models": {"a": {"params": {"max_tokens": "8"}}, "b": {"retry": {"max_attempts": 0}}}})


class TestModelNames:
    def test_names_in_the_model_lists_are_checked(self):
        """A model name with a control character or of 1,000 characters is refused naming where it is listed."""
        assert ("mc.json: model name 'a\\nb' contains the control character U+000A - at `$.agent_models[0]`\n"
                f"mc.json: model name {'m' * 80!r} is 1000 characters (1000 bytes) long; at most 200 bytes are "
                "allowed - at `$.judge_models[0]`") == refusal({"agent_models": ["a\nb"], "judge_models": ["m" * 1000]})

    def test_a_name_given_elsewhere_is_checked_when_used(self):
        """A model name from the command line is checked when its settings are looked up."""
        with pytest.raises(ConfigError) as caught:
            ModelConfig().settings_for("")
        assert "model name '' must not be empty" == str(caught.value)


def test_the_shipped_config_loads():
    """The checks refuse nothing in the shipped model_config.json."""
    assert load_model_config(REPO / "model_config.json").agent_models
