"""The messages sent to the model.

The system message is the same for every page and every run (rules, then the whole
terminology file), so providers that cache prompt prefixes, DeepSeek among them, bill
it once; only the user message varies.
"""

from __future__ import annotations

from gpu_glossary.terminology import Terminology

NEW_MARKER = "=== New English text ==="
OLD_MARKER = "=== Existing Chinese translation ==="

RULES = """You translate pages of GPU Glossary, a glossary of GPU programming terms, from English into Simplified Chinese for engineers and students.

Output rules:
- Reply with the translated text only: for a page, its front matter block (--- title/summary/aliases ---) and then the body; for a part of a page, that part, starting where it starts. No explanations, no wrapping code fence.
- Placeholders such as ⟦P12⟧ stand for code, links, URLs, HTML and heading ids. Copy every placeholder exactly once, unchanged, in the position where it belongs in the Chinese sentence. Never add, drop, repeat or alter a placeholder.
- Keep the Markdown structure: the same headings (same levels, same order), lists, tables (same rows and columns), emphasis and paragraphs.
- Translate the front matter values of title, summary and aliases; keep the keys in English.
- Write natural Chinese technical prose, not word-for-word English. Full-width punctuation in Chinese sentences (，。：；（）“”). Put a space between Chinese characters and Latin letters or digits (每个 SM 有 4 个线程束调度器). Never nest full-width parentheses: separate an inner remark with '，'. A bold run that ends in punctuation is followed by a space (**常见误区。** 正文). In a list of sources keep English titles as they are, ASCII colon included, and put paper titles in “…”.
- Use the terminology below for every term. On a term's first mention in the body write 中文术语（English term）; after a link the gloss follows it: [线程束](…)（warp）, never [线程束（warp）](…). Terms listed as kept in English stay in English. Keep code identifiers, API names, command names and units in English.
- A CUDA kernel (a __global__ function) is 核函数; 内核 only means an operating-system kernel.
- Text between placeholders on the lines of a code block is a code comment: translate it where it is, on its own line; never join, split, add or remove lines of code.
- Do not add or remove content, facts or numbers. Write each number as the English writes it (digits stay digits)."""  # noqa: E501 -- one line per rule, exactly as the model receives it


def system_message(terminology: Terminology) -> str:
    lines = [RULES, "", "Terminology (English → Chinese):"]
    lines += [
        f"- {term.en} → {term.zh}"
        + (f" (never: {', '.join(term.avoid_labels())})" if term.avoid else "")
        + (f" — {term.note}" if term.note else "")
        for term in terminology.terms
    ]
    lines += ["", "Kept in English: " + ", ".join(terminology.keep_english)]
    return "\n".join(lines)


def translate_request(document: str, whole: bool = True) -> str:
    if whole:
        return f"Translate this page into Simplified Chinese.\n\n{document}"
    return f"Translate this part of a page into Simplified Chinese; reply with the translated part only.\n\n{document}"


def update_request(document: str, previous: str, whole: bool = True) -> str:
    what = "page" if whole else "part of a page"
    return (
        f"This English {what} changed after it was translated. Below are the new English text and the existing "
        "Chinese translation of its previous version. Produce the updated Chinese text: change only what the "
        "English change requires and keep every other Chinese sentence exactly as it is"
        + ("." if whole else "; reply with this part only.")
        + "\n\n"
        f"{NEW_MARKER}\n{document}\n\n{OLD_MARKER}\n{previous}"
    )


def retry_note(problems: list[str]) -> str:
    return (
        "Your previous reply was rejected: "
        + "; ".join(problems)
        + ". Reply again with the complete translated page, following every output rule."
    )
