"""Comments in code blocks: found by the lexer, and removed for "same code" comparisons."""

from gpu_glossary.cache import clear_caches
from gpu_glossary.code_comments import comments, first_code_difference, without_comments

CUDA = """#include <cstdio>
// launch one block
__global__ void k(int *x) { x[0] = 1; }  // trailing
/* a comment
   over two lines */
int main() { printf("// not a comment\\n"); return 0; }"""

CUDA_ZH = """#include <cstdio>
// 启动一个线程块
__global__ void k(int *x) { x[0] = 1; }  // 行尾注释
/* 一行写完的注释 */
int main() { printf("// not a comment\\n"); return 0; }"""


def test_comments_are_found_by_the_lexer_not_by_pattern():
    found = comments(CUDA, "cuda")
    assert [(c.line, c.text) for c in found] == [
        (2, "// launch one block"),
        (3, "// trailing"),
        (4, "/* a comment\n   over two lines */"),
    ]  # the #include and the "//" inside a string are code


def test_translated_comments_leave_the_same_code():
    assert without_comments(CUDA, "cuda") == without_comments(CUDA_ZH, "cuda")
    assert first_code_difference(CUDA, CUDA_ZH, "cuda") is None


def test_a_changed_token_is_a_difference_even_beside_a_comment():
    changed = CUDA_ZH.replace("x[0] = 1;", "x[1] = 1;")
    assert first_code_difference(CUDA, changed, "cuda") == (
        "code line 2 (comments removed) is '__global__ void k(int *x) { x[1] = 1; }', "
        "expected '__global__ void k(int *x) { x[0] = 1; }'"
    )
    string_changed = CUDA_ZH.replace('"// not a comment', '"// 不是注释')
    assert first_code_difference(CUDA, string_changed, "cuda") is not None  # strings are code


def test_python_and_console_comments():
    python = 'import torch  # the GPU\n# sizes\nn = "# not a comment"\n'
    assert [c.text for c in comments(python, "python")] == ["# the GPU", "# sizes"]
    assert without_comments(python, "python") == 'import torch\nn = "# not a comment"\n'
    console = "$ nvcc -o x x.cu  # build it\n$ ./x"
    assert first_code_difference(console, "$ nvcc -o x x.cu  # 编译\n$ ./x", "console") is None
    assert first_code_difference(console, "$ nvcc -o y x.cu  # 编译\n$ ./x", "console") is not None


def test_blocks_without_comments_are_compared_whole():
    assert comments("mov.u32 %r1, 1; // x", "ptx") == []
    assert first_code_difference("a\nb", "a\nc", "text") == "code line 2 (comments removed) is 'c', expected 'b'"
    assert first_code_difference("a\nb", "a\nb\nc", "text") == "3 line(s) of code once comments are removed, expected 2"


def test_a_comment_on_the_last_line_is_a_comment():
    assert [c.text for c in comments("int x;  // the end", "cuda")] == ["// the end"]
    assert without_comments("int x;  // the end", "cuda") == "int x;"
    assert first_code_difference("int x;  // the end", "int x;  // 结束", "cuda") is None


def test_a_comment_on_the_last_line_is_a_comment_without_a_line_break_after_it():
    assert [c.text for c in comments("int x;\n// the end", "cpp")] == ["// the end"]
    assert first_code_difference("int x;\n// the end", "int x;\n// 结束", "cpp") is None


def test_a_block_is_lexed_once_and_then_read_from_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_GLOSSARY_CACHE", str(tmp_path))
    clear_caches()
    expected = [(c.line, c.text) for c in comments(CUDA, "cuda")]
    (kept,) = (tmp_path / "code-comments").glob("*.json")
    clear_caches()  # a new process: memory empty, disk kept
    assert [(c.line, c.text) for c in comments(CUDA, "cuda")] == expected
    # the entry is what is used: a changed entry shows (the key holds the block, so no real entry is ever stale)
    kept.write_text(kept.read_text(encoding="utf-8").replace("launch one block", "LAUNCH"), encoding="utf-8")
    clear_caches()
    assert (2, "// LAUNCH") in [(c.line, c.text) for c in comments(CUDA, "cuda")]
    monkeypatch.setenv("GPU_GLOSSARY_CACHE", "")
    clear_caches()
    assert [(c.line, c.text) for c in comments(CUDA, "cuda")] == expected, "without a cache folder: lexed as before"
