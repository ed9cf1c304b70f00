#!/usr/bin/env python3
"""The translate script: `python scripts/translate.py [PATHS…]` is `gpu-glossary translate`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu_glossary.cli import main  # noqa: E402

if __name__ == "__main__":
    main(["translate", *sys.argv[1:]], prog_name="translate.py")
