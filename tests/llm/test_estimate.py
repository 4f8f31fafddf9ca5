"""Token estimates that learn: bytes over a per-model bytes-per-token ratio that follows reported usage."""

from __future__ import annotations

import pytest

from mpcbench_async import LLMCallRecord, Message, ModelConfig
from mpcbench_async.llm import TokenEstimator

PROSE = "Please summarise the launch checklist and list every open blocker with its owner and due date. "
TOOL_RESULT = '{"key": "ALPHA-12", "status": "In Progress", "assignee": "kim", "updated": "2025-11-17T10:12"}, '


def user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


class TestEstimator:
    def test_starts_as_the_byte_estimate(self):
        """Before any reply: 4 bytes a token, as the client always estimated."""
        estimator = TokenEstimator()
        assert (4.0, 250, 1) == (estimator.bytes_per_token, estimator.estimate(1000), estimator.estimate(2))

    def test_follows_the_reported_ratio_with_the_prior_weighing_in(self):
        """The ratio is (prior + observed bytes) / (prior + observed tokens): 256 prior bytes at 4, then 3."""
        estimator = TokenEstimator()
        estimator.observe(6144, 2048)  # 3 bytes a token
        assert pytest.approx((256 + 6144) / (64 + 2048)) == estimator.bytes_per_token
        for _ in range(50):
            estimator.observe(6144, 2048)
        assert 3.0 < estimator.bytes_per_token < 3.01
        assert 51 == estimator.observations

    def test_ignores_replies_without_usage_and_stays_in_bounds(self):
        """No usage teaches nothing; an absurd count moves the ratio only to its bound."""
        estimator = TokenEstimator()
        estimator.observe(1000, 0)
        estimator.observe(0, 10)
        assert (4.0, 0) == (estimator.bytes_per_token, estimator.observations)
        estimator.observe(10_000_000, 1)
        assert 16.0 == estimator.bytes_per_token
        estimator.observe(1, 10_000_000)
        assert 1.0 == estimator.bytes_per_token

    def test_old_observations_fade(self):
        """Past the window the sums halve, so a changed ratio is followed within a few windows."""
        estimator = TokenEstimator(window_bytes=10_000)
        for _ in range(20):
            estimator.observe(5000, 2500)  # 2 bytes a token
        for _ in range(20):
            estimator.observe(5000, 1000)  # then 5
        assert 4.9 < estimator.bytes_per_token <= 5.0

    def test_a_starting_ratio_outside_the_bounds_is_refused(self):
        with pytest.raises(ValueError, match=r"bytes_per_token 0.5 is outside \[1.0, 16.0\]"):
            TokenEstimator(0.5)


class TestAtTheSim:
    async def test_estimates_converge_on_the_sims_counts(self, make_client):
        """JSON-heavy prompts at a sim counting word-like tokens (~1.8 bytes a token, not 4): the first estimate
        is short by over half, the fourth on within 4 %, the last within 1.5 %."""
        records: list[LLMCallRecord] = []
        model = "sim/echo?tokenizer=words"
        client = make_client("native", records=records)
        for repeat in (10, 12, 9, 11, 10, 12, 9, 11, 10, 12, 9, 11):
            await client.chat(model, user(TOOL_RESULT * repeat))
        errors = [abs(r.estimated_prompt_tokens - r.usage.prompt_tokens) / r.usage.prompt_tokens for r in records]
        assert errors[0] > 0.5
        assert max(errors[3:]) < 0.04
        assert errors[-1] < 0.015
        assert 12 == client.estimator(model).observations

    async def test_reservations_use_the_calibrated_estimate(self, make_client):
        """The TPM reservation of a call is its calibrated prompt estimate plus max_tokens."""
        config = ModelConfig.from_dict({"models": {"sim/echo?tokenizer=words": {
            "params": {"max_tokens": 50}, "limits": {"tpm": 1_000_000, "pacing": False}}}})
        records: list[LLMCallRecord] = []
        client = make_client("native", config, records)
        model = "sim/echo?tokenizer=words"
        for _ in range(3):
            await client.chat(model, user(PROSE * 4))
        window = client.limiter(model).tokens
        assert window is not None
        assert sum(r.estimated_prompt_tokens + 50 for r in records) == window._used
        assert records[0].estimated_prompt_tokens != records[2].estimated_prompt_tokens
