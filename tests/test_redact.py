"""Secret redaction at the boundary where foreign text enters: the registry, error construction, both transports."""

from __future__ import annotations

import base64
import codecs
import json
import random
import string
from collections.abc import Iterator
from urllib.parse import quote

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpcbench_async import _redact
from mpcbench_async._exceptions import InputError, LLMError, PermanentLLMError, ServerError
from mpcbench_async._redact import (
    is_secret_name,
    mask_secrets,
    mask_value,
    redact,
    redact_text,
    register_secret,
    register_secret_headers,
)
from mpcbench_async.llm import ModelConfig
from mpcbench_async.llm._stream import StreamAssembler
from mpcbench_async.llm._wire import completion_from_builtins, decode_completion
from mpcbench_async.mpcbench._agent import _masked
from mpcbench_async.mpcbench.tools._execution import ToolOutcome
from mpcbench_async.records import LLMCallRecord, Message
from mpcbench_async.sim._leaks import key_shapes
from mpcbench_async.testing import Scanner
from tests.conftest import REPO
from tests.secret_shapes import SECRETS, masked_shape

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
        register_secret("abcdefgh")
        register_secret("abcdefgh-ijklmn")
        assert "k=*** and ***" == redact_text("k=abcdefgh-ijklmn and abcdefgh")

    def test_url_credentials_are_registered(self):
        """A base URL's password and key-like query values are registered; other query values are not."""
        _redact.register_secret_url("https://me:pa55-Word-long-enough@x.test/v1?key=AIzaSyD-long-key-value-123"
                                    "&api-version=2024-02-01")
        assert "*** *** 2024-02-01 me" == mask_secrets("pa55-Word-long-enough AIzaSyD-long-key-value-123 2024-02-01 me")

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

    def test_short_values_are_not_registered(self, caplog):
        """Values shorter than eight characters are refused, with one warning, so common words are not masked."""
        for value in ("EMPTY", "dummy12", "dummy12", None, ""):
            register_secret(value)
        assert "EMPTY dummy12" == redact_text("EMPTY dummy12")
        assert 2 == caplog.text.count("shorter than 8")
        assert "EMPTY" not in caplog.text and "dummy12" not in caplog.text

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


# -- every shape of a registered secret (issue 25) ------------------------------------------------------------

FILLER = (REPO / "README.md").read_text(encoding="utf-8")[:40_000]  # past _VECTOR_FROM: the numpy path
KEY_CHARS = string.ascii_letters + string.digits


def random_key(seed: int, alphabet: str = KEY_CHARS + "-_", length: int | None = None, prefixed: bool = True) -> str:
    """A key as providers issue them: random characters, sometimes behind a public prefix such as ``sk-proj-``."""
    rng = random.Random(seed)
    body = "".join(rng.choice(alphabet) for _ in range(length or rng.randint(20, 64)))
    return (rng.choice(["", "sk-", "sk-proj-", "sk-ant-api03-", "gsk_"]) if prefixed else "") + body


def fresh(*keys: str) -> None:
    """Only ``keys`` registered (hypothesis runs many examples in one test)."""
    _redact._registry = _redact._Registry()
    for key in keys:
        register_secret(key)


class TestShapes:
    @pytest.mark.parametrize("long", [False, True], ids=["short-text", "long-text"])
    @pytest.mark.parametrize("name", list(key_shapes(SECRETS[0])))
    @pytest.mark.parametrize("key", SECRETS, ids=["sk", "plain", "hex"])
    def test_each_shape_is_masked_and_nothing_else(self, key, name, long):
        """Each of the sim's 11 shapes of each test key loses exactly its key characters (the key-only characters
        of base64; a split key with its separators), in a short text and past 32 KB (numpy); the rest is kept."""
        register_secret(key)
        head = (FILLER + "\n") if long else ""
        text = f"{head}before {key_shapes(key)[name]} after"
        assert f"{head}{masked_shape(name, key, 'before ')} after" == mask_secrets(text)

    def test_runs_inside_longer_runs_are_masked_whole(self):
        """A piece of a key that also occurs inside a longer occurrence (prefix-less beside split) is found in the
        unchanged text, so neither cuts the other apart."""
        key = SECRETS[2]
        register_secret(key)
        assert "tail=*** | spaced=*** | part=*** end" == mask_secrets(
            f"tail={key[4:]} | spaced={key_shapes(key)['spaced']} | part={key[10:20]} end")

    def test_neighbours_and_public_prefixes_are_kept(self):
        """Characters right before and after a key are kept (none of them continues the key), and so is a
        provider's public prefix where the rest of the key is masked; mentioned alone, a prefix is never masked."""
        anthropic = "sk-ant-api03-" + random_key(3, KEY_CHARS, 40)
        register_secret(SECRETS[0])
        register_secret(anthropic)
        assert SECRETS[0][8:] == _redact.secret_part(SECRETS[0])
        assert "abc***def abcproj-***def s k - a n t - a p i 0 3 - ***" == mask_secrets(
            f"abc{SECRETS[0]}def abc{SECRETS[0][3:]}def {' '.join(anthropic)}")
        prose = "OpenAI keys start with sk-proj-, Anthropic's with sk-ant-api03-; sk-ant-api03-xxxx is a placeholder"
        assert prose == mask_secrets(prose)

    def test_escaped_and_percent_forms(self):
        """JSON/repr escapes of newlines, tabs and non-ASCII characters count as separators; percent escapes of any
        case, of every byte or only of the separators (``quote``), are decoded."""
        key = SECRETS[1]
        register_secret(key)
        for shape in (repr("\n".join(key)), orjson.dumps("\t".join(key)).decode(), repr("\u00b7".join(key).encode()),
                      json.dumps("\u2014".join(key)),
                      "".join(f"%{b:02x}" for b in key.encode()), quote(key, safe=""),
                      quote("/".join(key), safe=""), f"%{ord(key[0]):02X}" + key[1:]):
            assert "<***>" == mask_secrets(f"<{shape.removeprefix('b').strip(chr(34) + chr(39))}>"), shape

    @given(seed=st.integers(0, 2**32), before=st.binary(max_size=7), after=st.binary(max_size=7),
           urlsafe=st.booleans(), wrap=st.booleans())
    def test_base64_at_any_offset(self, seed, before, after, urlsafe, wrap):
        """Base64 or base64url of any bytes holding a random key, wrapped at 76 columns or not: no 12-character run
        of key material survives (the edge characters that mix in other bytes may)."""
        key = random_key(seed)
        fresh(key)
        data = before + key.encode() + after
        blob = (base64.urlsafe_b64encode(data) if urlsafe else base64.b64encode(data)).decode()
        if wrap:
            blob = "\n".join(blob[i:i + 76] for i in range(0, len(blob), 76))
        masked = mask_secrets(f"Authorization: Basic {blob}!")
        assert "***" in masked
        assert [] == Scanner((key,)).find(masked)

    @given(seed=st.integers(0, 2**32), start=st.integers(0, 12), before=st.binary(max_size=5),
           urlsafe=st.booleans())
    def test_any_eight_characters_in_base64(self, seed, start, before, urlsafe):
        """Any 8 characters of a random key, base64- or base64url-encoded at any offset, are masked."""
        key = random_key(seed, length=24, prefixed=False)
        fresh(key)
        data = before + key[start:start + 8].encode() + b"~"
        blob = (base64.urlsafe_b64encode(data) if urlsafe else base64.b64encode(data)).decode()
        assert "***" in mask_secrets(f"x {blob} y")

    @given(seed=st.integers(0, 2**32), data=st.data())
    def test_pieces_splits_and_encodings(self, seed, data):
        """A random key's substring of 12 or more characters, split at random places by whitespace, punctuation,
        non-ASCII characters or escapes, some characters percent-encoded: masked, with the text around kept."""
        key = random_key(seed)
        fresh(key)
        secret = _redact.secret_part(key)  # a public prefix like sk-proj- is kept: no leak
        start = data.draw(st.integers(0, len(secret) - 12))
        piece = secret[start:data.draw(st.integers(start + 12, len(secret)))]
        separators = st.sampled_from([" ", "\n", "\t", ".", ":", "/", "-", "_", "\u00b7", "\u2014", "\\n", "%20", ", "])
        shaped = ""
        for char in piece:
            if data.draw(st.integers(0, 9)) == 0:
                shaped += data.draw(separators)
            shaped += f"%{ord(char):02X}" if data.draw(st.integers(0, 9)) == 0 else char
        masked = mask_secrets(f"[ {shaped} ]")
        assert masked.startswith("[ ") and masked.endswith(" ]") and "***" in masked
        assert [] == Scanner((key,)).find(masked)


class TestNoFalsePositives:
    @pytest.mark.parametrize("pattern", ["README.md", "data/*.json", "tasks/**/*.json", "scenarios/*.json",
                                         "prompt_config.json", "storage/packs/tariff/**/*.json"])
    def test_ordinary_text_is_unchanged(self, pattern):
        """With keys registered, the repository's own prose, data, tasks and packs pass through unchanged, file by
        file and all at once (past 32 KB: the numpy path)."""
        for key in SECRETS:
            register_secret(key)
        texts = [path.read_text(encoding="utf-8") for path in sorted(REPO.glob(pattern))]
        assert texts
        for text in [*texts, "".join(texts)]:
            assert mask_secrets(text) is text

    @given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=300) | st.text(
        alphabet=KEY_CHARS + "%\\ -_.\n", max_size=300))
    def test_random_text_is_unchanged(self, text):
        """Text not drawn from a key is never touched (a chance 8-character match is one in ~1e14 per window)."""
        fresh(*SECRETS)
        assert text == mask_secrets(text)

    def test_short_secrets_are_masked_whole_only(self):
        """A secret of 8–15 letters and digits is masked as its full value only: its pieces could be words."""
        register_secret("tok-abc123xy")
        assert "*** tok abc123xy abc123xy" == mask_secrets("tok-abc123xy tok abc123xy abc123xy")

    def test_windows_that_could_be_words_or_numbers_are_skipped(self):
        """A human-chosen long secret: its one-class windows (a word, a number) are not masked alone; pieces that
        mix classes are, whole or split."""
        register_secret("password1234567890")
        assert "the password is long; call 12345678; *** split: p***" == mask_secrets(
            "the password is long; call 12345678; word1234 split: pass word 12 34 56")


SPELLED = dict(zip("abcdefghijklmnopqrstuvwxyz0123456789-", (
    "alfa bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec "
    "romeo sierra tango uniform victor whiskey xray yankee zulu zero one two three four five six seven eight nine "
    "dash").split(), strict=True))


class TestDocumentedLimits:
    """What the README says cannot be caught is indeed not caught (so it does not promise more than it does)."""

    def limits(self, key: str) -> dict[str, str]:
        rot13 = codecs.encode(key, "rot13")
        return {
            "hex": key.encode().hex(),
            "rot13": rot13,
            "reversed": key[::-1],
            "upper case": key.upper(),
            "spelled out": " ".join(SPELLED.get(c.lower(), c) + ("(capital)" if c.isupper() else "") for c in key),
            "html entities": "".join(f"&#{ord(c)};" for c in key),
            "json unicode escapes": "".join(f"\\u{ord(c):04x}" for c in key),
            "base64 of a percent-encoding of every byte": base64.b64encode(
                "".join(f"%{b:02X}" for b in key.encode()).encode()).decode(),
            "double base64": base64.b64encode(base64.b64encode(key.encode())).decode(),
            "pieces of 7 between letters": "q".join(key[i:i + 7] for i in range(0, len(key), 7)),
        }

    @pytest.mark.parametrize("name", ["hex", "rot13", "reversed", "upper case", "spelled out", "html entities",
                                      "json unicode escapes",
                                      "base64 of a percent-encoding of every byte", "double base64",
                                      "pieces of 7 between letters"])
    def test_not_caught(self, name):
        key = SECRETS[0]
        register_secret(key)
        text = f"model says: {self.limits(key)[name]}"
        assert text == mask_secrets(text)


class TestWhereTextEnters:
    def test_decoded_converted_and_streamed_replies_are_masked(self):
        """A reply's content and tool-call arguments are masked however the reply arrives: decoded from a body,
        converted from the SDK's object, assembled from a stream that splits the key across chunks."""
        key = SECRETS[1]
        register_secret(key)
        spaced = key_shapes(key)["spaced"]
        reply = {"choices": [{"message": {"content": f"k: {spaced}", "tool_calls": [
            {"id": "c1", "function": {"name": "f", "arguments": orjson.dumps({"q": key[2:]}).decode()}}]}}]}
        for completion in (decode_completion(orjson.dumps(reply), model="m", endpoint="e"),
                           completion_from_builtins(reply, model="m", endpoint="e")):
            message = completion.choices[0].message
            assert ("k: ***", '{"q":"***"}') == (message.content, message.tool_calls[0].function.arguments)
        assembler = StreamAssembler(0.0, model="m", endpoint="e")
        for piece in ("k: ", spaced[:5], spaced[5:11], spaced[11:]):
            chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
            assembler.feed(b"data: " + orjson.dumps(chunk) + b"\n\n", 0.0)
        assembler.feed(b"data: [DONE]\n\n", 0.0)
        assert "k: ***" == assembler.finish(0.0).choices[0].message.content

    def test_tool_results_are_masked(self):
        """A tool result quoting a key (split by newlines, JSON-escaped in the content) is masked in what the model
        receives and in the result the run log keeps; a clean one is passed through as is."""
        key = SECRETS[1]
        register_secret(key)
        result = {"items": [{"text": "\n".join(key), "n": 3}]}
        outcome = _masked(ToolOutcome(result=result, content=orjson.dumps(result).decode()))
        assert ({"items": [{"text": "***", "n": 3}]}, '{"items":[{"text":"***","n":3}]}') == (outcome.result,
                                                                                             outcome.content)
        clean = ToolOutcome(result={"a": "b"}, content='{"a":"b"}')
        assert clean is _masked(clean)

    def test_mask_value_without_secrets_returns_the_value(self):
        """``mask_value`` masks strings at any depth, keys included; with nothing registered it is a no-op."""
        value = {"a": [SECRETS[2], ("x", 1)]}
        assert value is mask_value(value)
        register_secret(SECRETS[2])
        assert {"a": ["***", ("x", 1)]} == mask_value(value)
        assert {"***": 1} == mask_value({SECRETS[2]: 1})

    def test_vectorised_skeleton_matches_the_plain_one(self):
        """The numpy skeleton of long texts is byte for byte the sequential one (escapes, percent, non-ASCII)."""
        rng = random.Random(5)
        alphabet = KEY_CHARS + "%%%\\\\\\xunrt -_.\n\u00e9\u20ac"
        for _ in range(2000):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80)))
            assert _redact._skeleton(text) == _redact._skeleton_vectorised(text.encode("utf-8"))
