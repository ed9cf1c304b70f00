"""The translate command's defaults, apart from the client so `gpu-glossary --help` and every
other command start without importing `openai` (over a second on a 2-core machine)."""

DEFAULT_BASE_URL = "https://api.deepseek.com"
DEFAULT_MODEL = "deepseek-flash"
DEFAULT_CONCURRENCY = 256
# USD per million tokens, for estimates only (DeepSeek's published list prices; override
# with --price-input/--price-cached/--price-output for another provider).
DEFAULT_PRICES = {"input": 0.28, "cached": 0.028, "output": 0.42}
