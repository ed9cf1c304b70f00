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
        "terminology_intro": "The Chinese pages use one rendering per term everywhere. "
        "This table is generated from `glossary/terminology.yml`; translators and the translate script follow it.",
        "terminology_columns": ("English", "Chinese", "Avoid"),
        "keep_english": "Written in English inside Chinese text",
        "not_found_title": "Page not found",
        "not_found_text": "There is no page at this address. Try the search, the A–Z index, or the home page.",
        "not_found_search": "Search the glossary for “{word}”",
        "home": "Home",
        "full_text": "The whole glossary in one Markdown file",
        "overview": "Overview",
        "report": "Report a problem with this page",
        "output_on": "Output on {device}",
        "driver": "driver {version}",
        "made_with": "Made with",
        "path_title": "Reading path",
        "path_summary": "Where to start: the pages to read in order, "
        "from the kernel you write to what limits its speed.",
        "colon": ": ",  # between a name and what follows it in a list
        "path_intro": "New to GPUs? Read these pages in this order. Each builds on the ones before it, "
        "and each ends with a link to the next stop; the sidebar groups the same terms by section instead.",
        "path_stop": "Reading path, stop {position} of {total}",
        "path_next": "Next on the path",
        "path_previous": "Previous on the path",
        "js": {
            "zoom_title": "Diagram",
            "zoom_open": "Opens the diagram full screen",
            "zoom_in": "Zoom in",
            "zoom_out": "Zoom out",
            "zoom_fit": "Fit to screen",
            "zoom_close": "Close",
            "wrap": "Wrap long lines",
        },
    },
    "zh": {
        "untranslated": "本页尚未翻译，下面显示的是英文原文。",
        "stale": "本页译文可能已过时：英文原文在翻译之后有过修改。",
        "read_english": "阅读英文原文",
        "referenced_by": "引用本页的页面",
        "index_title": "A–Z 索引",
        "index_summary": "按英文字母顺序列出术语表中的全部术语，附缩写和一句话释义。",
        "index_intro": "术语表中的全部术语，按英文名称的字母顺序排列。"
        "将鼠标悬停在术语上或用键盘聚焦，即可看到它的释义。",
        "terminology_title": "术语对照表",
        "terminology_summary": "术语表中每个英文 GPU 术语的中文译法，以及应避免的译法。",
        "terminology_intro": "中文页面中每个术语只用一种译法。"
        "本表由 `glossary/terminology.yml` 生成，译者和翻译脚本都遵循它。",
        "terminology_columns": ("英文", "中文", "避免使用"),
        "keep_english": "在中文文本中保留英文的术语",
        "not_found_title": "页面不存在",
        "not_found_text": "这个地址没有页面。可以试试搜索、A–Z 索引或首页。",
        "not_found_search": "在术语表中搜索“{word}”",
        "home": "首页",
        "full_text": "整个术语表合成的一个 Markdown 文件",
        "overview": "概览",
        "report": "报告本页的问题",
        "output_on": "输出来自 {device}",
        "driver": "驱动 {version}",
        "made_with": "本站使用",
        "path_title": "阅读路线",
        "path_summary": "从哪里开始：按顺序阅读的页面，从你编写的核函数一直讲到限制它速度的因素。",
        "colon": "：",
        "path_intro": "刚接触 GPU？请按下面的顺序阅读。每一页都建立在前面几页的基础上，页末都有通往下一站的链接；"
        "侧边栏则按部分对同样的术语分组。",
        "path_stop": "阅读路线：第 {position} 站，共 {total} 站",
        "path_next": "路线上的下一页",
        "path_previous": "路线上的上一页",
        "js": {
            "zoom_title": "示意图",
            "zoom_open": "全屏打开示意图",
            "zoom_in": "放大",
            "zoom_out": "缩小",
            "zoom_fit": "适应屏幕",
            "zoom_close": "关闭",
            "wrap": "长行自动换行",
        },
    },
}


def strings(lang: str) -> dict:
    return STRINGS.get(lang, STRINGS["en"])
