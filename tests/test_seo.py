"""Titles and descriptions for search engines and chat apps (site/seo.py)."""

from pathlib import Path

from gpu_glossary.page import parse_page
from gpu_glossary.site.seo import first_sentence, page_meta, question_title


def page(rel: str, text: str, lang: str = "en"):
    return parse_page(text, Path(rel), rel, rel, lang)


WARP = page(
    "device-software/warp.md",
    "---\ntitle: Warp\nsummary: Thirty-two threads.\n---\n\nA [warp](x.md) is 32 threads.\n\nA warp runs.\n",
)
OCCUPANCY = page(
    "perf/occupancy.md", "---\ntitle: Occupancy\nsummary: S.\n---\n\nOccupancy is a ratio. Low occupancy hurts.\n"
)
LAW = page("perf/littles-law.md", "---\ntitle: Little's Law\nsummary: S.\n---\n\nLittle's Law is a rule of queues.\n")
ROOFLINE = page(
    "perf/roofline-model.md", "---\ntitle: Roofline model\nsummary: S.\n---\n\nThe roofline model uses two numbers.\n"
)
ZH_WARP = page(
    "device-software/warp.md", "---\ntitle: 线程束\nsummary: 32 个线程。\n---\n\n线程束（warp）是 32 个线程。\n", "zh"
)
ZH_L1 = page(
    "device-hardware/l1.md",
    "---\ntitle: L1 数据缓存\nsummary: S。\n---\n\nL1 数据缓存（L1 data cache）是缓存。\n",
    "zh",
)


def test_first_sentence_is_plain_text_and_keeps_dotted_names():
    assert first_sentence("`libcuda.so` is the [driver](x.md)'s half. More.") == "libcuda.so is the driver's half."
    assert first_sentence("线程束是一组线程。第二句。") == "线程束是一组线程。"


def test_a_question_title_only_where_the_first_sentence_answers_it():
    assert question_title(WARP, WARP, "en") == "What is a warp?"
    assert question_title(OCCUPANCY, OCCUPANCY, "en") == "What is occupancy?"
    assert question_title(LAW, LAW, "en") == "What is Little's Law?"  # a name keeps its capitals
    assert question_title(ROOFLINE, ROOFLINE, "en") is None  # "The roofline model uses …"
    assert question_title(ZH_WARP, WARP, "zh") == "什么是线程束？"
    assert question_title(ZH_L1, None, "zh") == "什么是 L1 数据缓存？"


def test_page_meta_has_the_summary_the_question_and_both_locales():
    alternates = [{"lang": "en"}, {"lang": "zh"}]
    meta = page_meta(WARP, WARP, "en", "GPU Glossary", "site", "https://x/device-software/warp/", alternates)
    assert meta["title"] == "What is a warp? - GPU Glossary" and meta["og_title"] == "What is a warp?"
    assert meta["description"] == "Thirty-two threads." and meta["type"] == "article"
    assert meta["locale"] == "en_US" and meta["alternate_locales"] == ["zh_CN"]
    home = page("index.md", "---\ntitle: GPU Glossary\nsummary: Home.\n---\n\nText.\n")
    assert page_meta(home, home, "en", "GPU Glossary", "site", "https://x/", alternates)["title"] == "GPU Glossary"
