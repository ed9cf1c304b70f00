"""The site's own words, in each language (Material translates its own interface)."""

STRINGS = {
    "en": {
        "untranslated": "This page has not been translated yet; the English text is shown.",
        "stale": "This translation may be out of date: the English page changed after it was translated.",
        "read_english": "Read the English page",
        "referenced_by": "Referenced by",
        "index_title": "A–Z index",
        "index_summary": "Every term in the glossary, alphabetically, with its abbreviation and one-line summary.",
        "index_intro": "Every term in the glossary in alphabetical order. Hover or focus a term to see its summary.",
        "terminology_title": "Terminology",
        "terminology_summary": "How the glossary writes each English GPU term in Chinese, and the variants it avoids.",
        "terminology_intro": "The Chinese pages use one rendering per term everywhere. This table is generated from `glossary/terminology.yml`; translators and the translate script follow it.",
        "terminology_columns": ("English", "Chinese", "Avoid"),
        "keep_english": "Written in English inside Chinese text",
        "not_found_title": "Page not found",
        "not_found_text": "There is no page at this address. Try the search, the A–Z index, or the home page.",
        "home": "Home",
        "full_text": "The whole glossary in one Markdown file",
        "overview": "Overview",
        "report": "Report a problem with this page",
        "output_on": "Output on {device}",
        "driver": "driver {version}",
    },
    "zh": {
        "untranslated": "本页尚未翻译，下面显示的是英文原文。",
        "stale": "本页译文可能已过时：英文原文在翻译之后有过修改。",
        "read_english": "阅读英文原文",
        "referenced_by": "引用本页的页面",
        "index_title": "A–Z 索引",
        "index_summary": "按英文字母顺序列出术语表中的全部术语，附缩写和一句话释义。",
        "index_intro": "术语表中的全部术语，按英文名称的字母顺序排列。将鼠标悬停在术语上或用键盘聚焦，即可看到它的释义。",
        "terminology_title": "术语对照表",
        "terminology_summary": "术语表中每个英文 GPU 术语的中文译法，以及应避免的译法。",
        "terminology_intro": "中文页面中每个术语只用一种译法。本表由 `glossary/terminology.yml` 生成，译者和翻译脚本都遵循它。",
        "terminology_columns": ("英文", "中文", "避免使用"),
        "keep_english": "在中文文本中保留英文的术语",
        "not_found_title": "页面不存在",
        "not_found_text": "这个地址没有页面。可以试试搜索、A–Z 索引或首页。",
        "home": "首页",
        "full_text": "整个术语表合成的一个 Markdown 文件",
        "overview": "概览",
        "report": "报告本页的问题",
        "output_on": "输出来自 {device}",
        "driver": "驱动 {version}",
    },
}


def strings(lang: str) -> dict:
    return STRINGS.get(lang, STRINGS["en"])
