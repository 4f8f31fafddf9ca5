"""Prompt-token estimates from request bytes that learn each model's bytes-per-token ratio.

Why: a call's TPM reservation and a budget's worst case need its prompt tokens
*before* it is sent. A tokenizer would need each provider's vocabulary (a
download at run time: not an option offline, and unknown for most endpoints). The
request's byte count over a bytes-per-token ratio costs nothing; the ratio starts
at 4 (English text in the common BPE vocabularies) and then follows the
``usage.prompt_tokens`` each reply reports for a request of known size, so the
estimate converges on the provider's own count (JSON, tool schemas and non-English
text all have their own ratios). Old observations fade (the sums halve once they
pass ``window_bytes``), so a model whose prompts change character is followed.
"""

from __future__ import annotations

__all__ = ["TokenEstimator"]


class TokenEstimator:
    """One model's running bytes-per-token ratio, bounded to [``low``, ``high``], starting at ``bytes_per_token``.

    The starting ratio weighs as much as ``prior_bytes`` of observed requests, so
    one odd reply moves it only part of the way.
    """

    def __init__(self, bytes_per_token: float = 4.0, *, low: float = 1.0, high: float = 16.0,
                 prior_bytes: int = 256, window_bytes: int = 4 << 20) -> None:
        if not low <= bytes_per_token <= high:
            raise ValueError(f"bytes_per_token {bytes_per_token} is outside [{low}, {high}]")
        self.low, self.high, self.window_bytes = low, high, window_bytes
        self._bytes = float(prior_bytes)
        self._tokens = prior_bytes / bytes_per_token
        self.observations = 0

    @property
    def bytes_per_token(self) -> float:
        return min(self.high, max(self.low, self._bytes / self._tokens))

    def estimate(self, payload_bytes: int) -> int:
        """Estimated prompt tokens of a request of ``payload_bytes`` (at least 1; ``payload_bytes // 4`` at first)."""
        # ``max(1, int(payload_bytes / min(high, max(low, ratio))))`` in conditionals: per call, and the builtins'
        # argument parsing costs ten times a comparison
        ratio = self._bytes / self._tokens
        ratio = ratio if ratio > self.low else self.low
        tokens = int(payload_bytes / (ratio if ratio < self.high else self.high))
        return tokens if tokens > 1 else 1

    def observe(self, payload_bytes: int, prompt_tokens: int) -> None:
        """Learn from one reply: the request had ``payload_bytes``, the provider counted ``prompt_tokens``."""
        if payload_bytes <= 0 or prompt_tokens <= 0:  # usage not reported: nothing to learn
            return
        self._bytes += payload_bytes
        self._tokens += prompt_tokens
        self.observations += 1
        if self._bytes > self.window_bytes:
            self._bytes /= 2
            self._tokens /= 2
