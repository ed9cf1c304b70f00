"""A translation run's settings, each default declared once (the command's options show these).

Apart from the client, so `gpu-glossary --help` and every other command start without
importing `openai` (over a second on a 2-core machine).
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_BASE_URL = "https://api.deepseek.com"
DEFAULT_MODEL = "deepseek-flash"
DEFAULT_CONCURRENCY = 256
# Seconds one request may take in all, from sending it to the reply's last byte: a server
# that trickles bytes or blank lines (DeepSeek's keep-alive while a request waits) is cut off
# there. A chunk is about 3,000 characters in a run of the whole glossary.
DEFAULT_TIMEOUT = 90.0
DEFAULT_RUN_TIMEOUT = 1800.0  # seconds the whole run may take; nothing is started after it
DEFAULT_RETRIES = 3
DEFAULT_TEMPERATURE = 1.3
DEFAULT_MAX_CHARS = 12000
# USD per million tokens, for estimates only (DeepSeek's published list prices; override
# with --price-input/--price-cached/--price-output for another provider).
DEFAULT_PRICES = {"input": 0.28, "cached": 0.028, "output": 0.42}


@dataclass
class Settings:
    """How to reach the model and how hard to try; the command's flags that choose pages are apart."""

    api_key: str = ""
    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    run_timeout: float = DEFAULT_RUN_TIMEOUT
    retries: int = DEFAULT_RETRIES
    temperature: float = DEFAULT_TEMPERATURE
    max_chars: int = DEFAULT_MAX_CHARS
    prices: dict = field(default_factory=lambda: dict(DEFAULT_PRICES))

    @property
    def is_deepseek(self) -> bool:
        """DeepSeek's API: its requests turn its 'thinking' mode off.

        Thinking costs extra time and tokens that a translation does not need.
        """
        return "deepseek" in self.model.lower() or "deepseek" in self.base_url.lower()

    def scrub(self, text: str) -> str:
        """Remove the key from any text that might be shown or saved."""
        return text.replace(self.api_key, "***") if self.api_key else text
