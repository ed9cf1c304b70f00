"""Numbers the site states in several places agree with glossary/gpus.yml."""

from __future__ import annotations

import re

import yaml
from helpers import ROOT

from gpu_glossary.glossary import load_glossary

GPUS = yaml.safe_load((ROOT / "glossary" / "gpus.yml").read_text(encoding="utf-8"))["gpus"]
NAMES = {"V100": r"\bV100", "A100": r"\bA100", "H100": r"\bH100(?! PCIe)", "H200": r"\bH200", "B200": r"\bB200"}
DIE_NAMES = re.compile(r"\bG[VAHB]1\d\d\b")  # a full die (GH100) has more units than the product
FACTS = {
    "sms": [r"\b(\d{2,3})\s*SMs\b", r"(\d{2,3})\s*个\s*(?:SM|流式多处理器)"],
    "l2_mb": [r"(\d{1,3})\s*MB\s*(?:of\s*)?L2", r"(\d{1,3})\s*MB\s*(?:的\s*)?L2"],
}
SENTENCE = re.compile(r"[^.。;；!?！？\n]+")


def statements():
    """(page, line, gpu, fact, values) for per-GPU numbers stated in one sentence with one GPU."""
    glossary = load_glossary(ROOT)
    for pages in glossary.pages.values():
        for page in pages.values():
            for number, line in page.prose_lines():
                for sentence in SENTENCE.findall(line):
                    named = [gpu for gpu, pattern in NAMES.items() if re.search(pattern, sentence)]
                    if len(named) != 1 or "PCIe" in sentence or DIE_NAMES.search(sentence):
                        continue  # a sentence comparing GPUs is checked by reading, not here
                    for fact, patterns in FACTS.items():
                        values = {int(v) for pattern in patterns for v in re.findall(pattern, sentence)}
                        if values:
                            yield page.display_path, number, named[0], fact, values


def test_per_gpu_numbers_match_the_facts_table():
    found = list(statements())
    assert any(fact == "sms" for *_, fact, _ in found), "no SM count found: the scan is broken"
    # A sentence may state other numbers too ("a MIG instance has 98 SMs, not the 108 of the A100"),
    # but it must not give the GPU a value other than the table's without also stating the table's.
    wrong = [
        f"{path}:{line}: {gpu} {fact} = {sorted(values)}, gpus.yml says {GPUS[gpu][fact]}"
        for path, line, gpu, fact, values in found
        if fact in GPUS[gpu] and GPUS[gpu][fact] not in values
    ]
    assert wrong == []


def test_the_facts_table_names_a_source_for_every_gpu():
    for gpu, facts in GPUS.items():
        assert facts["sources"] and all(url.startswith("https://") for url in facts["sources"]), gpu
