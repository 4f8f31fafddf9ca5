"""Secret redaction at the boundary where foreign text enters: the registry, error construction, both transports."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mpcbench_async import _redact
from mpcbench_async._exceptions import InputError, LLMError, PermanentLLMError, ServerError
from mpcbench_async._redact import is_secret_name, redact, redact_text, register_secret, register_secret_headers
from mpcbench_async.llm import ModelConfig
from mpcbench_async.records import LLMCallRecord, Message

KEY = "sk-test-SECRET1234567890abcdef"
PLAIN_KEY = "PLAIN0SECRET0123456789abcdef"
HEADER_KEY = "HDR0SECRET0987654321fedcba"


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no registered secrets."""
    monkeypatch.setattr(_redact, "_registry", _redact._Registry())
    yield


class TestRegistry:
    def test_credential_headers_are_registered(self):
        """Values of credential headers are masked from then on (a Bearer value without its scheme); others not."""
        register_secret_headers({"api-key": "hdr-secret-1", "Authorization": "Bearer tok-abcdefg",
                                 "Accept": "application/json"})
        assert "got hdr *** tok *** type application/json" == redact_text(
            "got hdr hdr-secret-1 tok tok-abcdefg type application/json")

    def test_longest_secret_is_masked_whole(self):
        """A registered secret containing another is masked as one piece."""
        register_secret("abcdef")
        register_secret("abcdef-ghijkl")
        assert "k=*** and ***" == redact_text("k=abcdef-ghijkl and abcdef")

    def test_secret_names(self):
        """Credential names are recognised whatever their spelling; ordinary header names are not."""
        names = ["api-key", "X-Api-Key", "Authorization", "x-auth-token", "client_secret", "Accept", "tokens"]
        assert [True, True, True, True, True, False, False] == [is_secret_name(n) for n in names]


class TestRedactText:
    @pytest.mark.parametrize(("text", "expected"), [
        pytest.param("sent Bearer abc.def ok", "sent Bearer *** ok", id="bearer-keeps-scheme"),
        pytest.param("key sk-abcdefghijkl used", "key sk-*** used", id="sk-keeps-prefix"),
        pytest.param("api_key=hunter22 and x-api-key: hunter33", "api_key=*** and x-api-key: ***",
                     id="header-assignments"),
        pytest.param("Authorization: Bearer qqqqq", "Authorization: Bearer ***", id="authorization-header"),
        pytest.param('{"Authorization": "Bearer xyz123"}', '{"Authorization": "Bearer ***"}',
                     id="authorization-in-json"),
        pytest.param("x-auth-token: 0123456789 sent", "x-auth-token: *** sent", id="auth-token-header"),
        pytest.param("GET https://x.test/v1?key=AIzaSy123&alt=json", "GET https://x.test/v1?key=***&alt=json",
                     id="key-in-url-query"),
        pytest.param("skipped 3 tokens for task-7", "skipped 3 tokens for task-7", id="plain-text-unchanged"),
    ])
    def test_secret_shapes(self, text, expected):
        """Secret-looking substrings lose their values and keep what names them; other text is unchanged."""
        assert expected == redact_text(text)

    def test_registered_secret(self):
        """A registered value is masked wherever it appears."""
        register_secret("my-secret-value-123")
        assert "token=*** end" == redact_text("token=my-secret-value-123 end")

    def test_registered_secret_cut_short(self):
        """What is left of a registered key where a quoted reply was cut (its first 8 characters or more) is masked."""
        register_secret(PLAIN_KEY)
        assert "body: b'{\"key\": \"***'" == redact_text(f"body: b'{{\"key\": \"{PLAIN_KEY[:12]}'")
        assert "PLAIN0S and ***" == redact_text(f"PLAIN0S and {PLAIN_KEY[:8]}")

    def test_short_values_are_not_registered(self):
        """Values shorter than six characters are ignored so common words are not masked."""
        register_secret("abc")
        register_secret(None)
        assert "abc" == redact_text("abc")

    def test_masking_is_idempotent(self):
        """Masking masked text changes nothing (errors are masked again when they are wrapped)."""
        once = redact_text('{"Authorization":"Bearer abcdefgh"} api-key=xyz sk-abcdefghij')
        assert '{"Authorization":"Bearer ***"} api-key=*** sk-***' == once
        assert once == redact_text(once)


class TestRedact:
    def test_secret_keys_and_nested_values(self):
        """Values under secret-looking keys become *** and nested free text is masked, other values kept."""
        cases = {  # field: (value, masked value)
            "api_key": ("sk-abcdefghijkl", "***"),
            "headers": ({"Authorization": "Bearer abc.def", "Accept": "json"},
                        {"Authorization": "***", "Accept": "json"}),
            "items": (["Bearer abc.def", 3], ["Bearer ***", 3]),
            "tup": (("sk-abcdefghijkl",), ("sk-***",)),
            "password": ("", ""),
            "tokens": (42, 42),
        }
        event = {field: value for field, (value, _) in cases.items()}
        assert {field: masked for field, (_, masked) in cases.items()} == redact(event)

    def test_exception_values_are_masked(self):
        """An exception value becomes its masked repr."""
        register_secret("my-secret-value-123")
        assert "RuntimeError('bad key ***')" == redact(RuntimeError("bad key my-secret-value-123"))


class TestErrorConstruction:
    def test_bench_error_text_is_masked(self):
        """Every BenchError masks its own message."""
        register_secret(PLAIN_KEY)
        assert "bad key *** and sk-***" == str(InputError(f"bad key {PLAIN_KEY} and {KEY}"))

    def test_llm_error_masks_message_detail_and_endpoint(self):
        """An LLMError's text, detail and endpoint carry no registered key."""
        register_secret(PLAIN_KEY)
        exc = PermanentLLMError(f"echo: key {PLAIN_KEY}", model="m", endpoint=f"http://h/v1?key={PLAIN_KEY}",
                                status=400)
        assert "model 'm' at http://h/v1?key=***: HTTP 400: echo: key ***" == str(exc)
        assert "echo: key ***" == exc.detail
        assert "http://h/v1?key=***" == exc.endpoint


ECHO = '(request headers: {"Authorization":"Bearer ***","x-api-key":"***"}; key ***)'


def echoing_config(base_url: str, fault: str) -> ModelConfig:
    """Model ``leaky``: every call answered ``fault`` with the request's credentials quoted in the body."""
    return ModelConfig.from_dict({"models": {"leaky": {
        "model": f"sim/echo?fault={fault}&fail_first=1000&echo_auth=true", "base_url": base_url,
        "api_key_env": "MPCB_TEST_KEY", "headers": {"x-api-key": HEADER_KEY},
        "retry": {"max_attempts": 2}, "breaker": {"failures": 2}}}})


@pytest.mark.parametrize("transport", ["native", "openai"])
class TestEchoingServer:
    @pytest.mark.parametrize(("fault", "error_class"), [("400", PermanentLLMError), ("500", ServerError)])
    async def test_errors_and_call_records_carry_no_key(self, transport, fault, error_class, sim, make_client,
                                                         monkeypatch):
        """A server echoing the credentials in a 400 or 500 body yields masked errors and call records."""
        monkeypatch.setenv("MPCB_TEST_KEY", PLAIN_KEY)
        records: list[LLMCallRecord] = []
        client = make_client(transport, echoing_config(sim.base_url, fault), records)
        with pytest.raises(LLMError) as caught:
            await client.chat("leaky", [Message(role="user", content="hi")])
        text = {"400": "simulated bad request", "500": "simulated: internal server error"}[fault]
        expected = f"model 'leaky' at {sim.base_url}/chat/completions: HTTP {fault}: {text} {ECHO}"
        assert error_class is type(caught.value)
        assert expected == str(caught.value)
        assert [expected] == [r.error_message for r in records]

    async def test_circuit_breaker_message_carries_no_key(self, transport, sim, make_client, monkeypatch, caplog):
        """The open breaker's error and its warning quote the last echoing 404 masked."""
        monkeypatch.setenv("MPCB_TEST_KEY", PLAIN_KEY)
        client = make_client(transport, echoing_config(sim.base_url, "404"))
        for _ in range(3):
            with pytest.raises(LLMError) as caught:
                await client.chat("leaky", [Message(role="user", content="hi")])
        assert f"(last: HTTP 404: simulated: model not found {ECHO})" in str(caught.value)
        assert f"(last: HTTP 404: simulated: model not found {ECHO})" in caplog.text
        assert [] == [key for key in (KEY, PLAIN_KEY, HEADER_KEY) if key in str(caught.value) + caplog.text]
