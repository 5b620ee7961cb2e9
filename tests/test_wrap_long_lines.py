"""``scripts/wrap_long_lines.py`` shortens what ``ruff format`` leaves long without changing the
program: each snippet comes out within 100 columns, parses to the same AST and evaluates to the same
values."""

from __future__ import annotations

import importlib.util
import io
import sys
import tokenize
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 100


def wrapper() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "wrap_long_lines", ROOT / "scripts" / "wrap_long_lines.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


WRAP = wrapper()


def wrapped(source: str, kept: tuple[str, ...] = ()) -> str:
    """The rewrite of ``source``, checked: within the limit but for the ``kept`` lines, the same
    program, and stable."""
    result: str = WRAP.rewrite(source, LIMIT)
    assert result != source
    assert [line for line in result.splitlines() if len(line) > LIMIT] == list(kept)
    assert WRAP.same_program(source, result)
    assert WRAP.rewrite(result, LIMIT) == result
    return result


def values(source: str, **names: object) -> dict[str, object]:
    namespace: dict[str, object] = dict(names)
    exec(compile(source, "<snippet>", "exec"), namespace)
    return {k: v for k, v in namespace.items() if k not in names and k != "__builtins__"}


def string_tokens(source: str) -> list[str]:
    return [
        t.string
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type == tokenize.STRING
    ]


def test_an_f_string_is_cut_outside_its_braces_with_the_prefix_on_each_piece() -> None:
    # the limit falls inside ``{n + 1:>{width}}``, whose spaces are no place to cut
    words = " ".join(["word"] * 16)
    source = (
        'message = f"'
        + words
        + ' {n + 1:>{width}} and {{literal braces}} {n * 2} then {n - 3} end"\n'
    )
    result = wrapped(source)
    pieces = string_tokens(result)
    assert len(pieces) > 1 and all(p.startswith('f"') for p in pieces)
    for piece in pieces:  # every piece is a valid f-string on its own: its braces balance
        compile(piece, "<piece>", "eval")
    assert values(result, n=5, width=6) == values(source, n=5, width=6)


def test_bytes_keep_their_prefix_and_no_escape_is_cut() -> None:
    body = "chunk " * 14 + "tab\\t x\\x00 y\\\\ z " + "chunk " * 4
    source = f'PAYLOAD = b"{body.strip()}"\n'
    result = wrapped(source)
    pieces = string_tokens(result)
    assert len(pieces) > 1 and all(p.startswith('b"') for p in pieces)
    assert all(not p[:-1].endswith("\\") for p in pieces)
    assert values(result) == values(source)


def test_a_named_escape_is_never_cut_at_its_inner_space() -> None:
    for filler in range(62, 86):  # the limit falls at each place around the escape in turn
        source = (
            'TEXT = ["' + "x" * filler + ' a \\N{EM DASH} b c d e f g h i j k l m n o p q r s t"]\n'
        )
        result = wrapped(source)
        assert all("\\N{EM DASH}" in p or "EM" not in p for p in string_tokens(result))
        assert values(result) == values(source)


def test_a_trailing_comment_inside_brackets_moves_above_its_line() -> None:
    comment = (
        "# the reason this argument is here is long enough that it cannot stay at the end of the "
        "line"
    )
    source = f"result = call(\n    first,\n    second,  {comment}\n)\n"
    result = wrapped(source)
    lines = result.splitlines()
    second = lines.index("    second,")
    assert lines[second - 1] == "    " + comment
    assert lines[second - 2] == "    first,"


def test_before_ruff_format_only_comments_move() -> None:
    source = (
        "LIMIT = 2  # attempts that died with their process (killed for memory) before the review"
        " gives up on it\n"
        'TEXT = "'
        + "a string that is long enough to be split once the comments are done " * 2
        + '"\n'
    )
    result = WRAP.rewrite(source, LIMIT, comments_only=True)
    assert result.splitlines()[:2] == [
        "# attempts that died with their process (killed for memory) before the review gives up on"
        " it",
        "LIMIT = 2",
    ]
    assert result.splitlines()[2] == source.splitlines()[1]  # the string is left to the full pass
    assert len(wrapped(result).splitlines()) > 3


def test_a_pragma_stays_at_the_end_of_its_line_and_only_its_reason_moves() -> None:
    source = (
        "def f() -> None:\n"
        "    value = compute(argument)  # type: ignore[attr-defined]  # compute is untyped "
        "upstream and we know it\n"
    )
    result = wrapped(source)
    assert "    value = compute(argument)  # type: ignore[attr-defined]" in result.splitlines()
    assert "    # compute is untyped upstream and we know it" in result.splitlines()
    # a line whose only comment is a pragma is left alone and listed for a human
    alone = (
        "x = function_with_a_long_name(argument_one, argument_two, argument_3)  # type: "
        "ignore[arg-type, misc]\n"
    )
    assert WRAP.rewrite(alone, LIMIT) == alone
    after = (
        "x = call(first_argument, second_argument)  # the reason, and then its pragma  # noqa: "
        "E501\n"
    )
    assert WRAP.rewrite(after.replace("x = ", "x_value = value_"), LIMIT) == after.replace(
        "x = ", "x_value = value_"
    )
    assert [line.row for line in WRAP.long_lines("f.py", alone, LIMIT)] == [1]


def test_a_docstring_is_reflowed_and_its_lists_doctests_and_blank_lines_stay() -> None:
    long_item = (
        "- an item of a list that goes on and on, past the end of the line, and wraps under its "
        "own text, and more!"
    )
    code = (
        "        python benchmarks/bench.py --events 100000 1000000 --files 8 --work /tmp/x"
        " --cluster --skip-naive"
    )
    source = (
        "def f() -> None:\n"
        '    """A summary line that is long enough to go over the limit once it is indented and '
        "quoted here, long.\n"
        "\n"
        f"    {long_item}\n"
        "    - a short item\n"
        "\n"
        "    >>> f(1, 2) + f(3, 4) + f(5, 6) + f(7, 8) + f(9, 10) + f(11, 12) + f(13, 14) + f(15, "
        "16) + f(17, 18)\n"
        "\n"
        f"{code}\n"
        '    """\n'
    )
    doctest = (
        "    >>> f(1, 2) + f(3, 4) + f(5, 6) + f(7, 8) + f(9, 10) + f(11, 12) + f(13, 14) + f(15, "
        "16) + f(17, 18)"
    )
    result = wrapped(source, kept=(doctest, code))
    lines = result.splitlines()
    assert (
        lines[1]
        == '    """A summary line that is long enough to go over the limit once it is indented and '
        "quoted here,"
    )
    assert lines[2] == "    long."
    item = next(i for i, line in enumerate(lines) if line.startswith("    - an item"))
    assert lines[item + 1].startswith("      ") and lines[item + 1][6] != " "  # the hanging indent
    assert f"{lines[item]} {lines[item + 1].strip()}" == f"    {long_item}"
    assert lines[item + 2] == "    - a short item" and lines[item + 3] == ""
    assert lines[item - 1] == ""
    assert doctest in lines


def test_a_comment_paragraph_is_rewrapped_at_its_indent() -> None:
    source = (
        "if True:\n"
        "    # " + "words " * 18 + "over the end\n"
        "    # and the next line of the paragraph\n"
        "    pass\n"
    )
    lines = wrapped(source).splitlines()
    assert all(line.startswith("    # ") for line in lines[1:-1])
    assert (
        " ".join(line[6:] for line in lines[1:-1]).split()
        == ("words " * 18 + "over the end and the next line of the paragraph").split()
    )


def test_a_change_to_the_program_is_refused_and_the_file_left_as_it_was(tmp_path: Path) -> None:
    assert not WRAP.same_program('x = "a b"\n', 'x = "a  b"\n')
    assert WRAP.same_program('def f():\n    """a b"""\n', 'def f():\n    """a\n    b"""\n')
    assert not WRAP.same_program("x = 1  # keep these words\n", "x = 1  # keep words\n")
    path = tmp_path / "m.py"
    path.write_text("x = 1  # " + "word " * 30 + "\n", encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    assert WRAP.main(["--check", "--line-length", "100", str(path)]) == 1  # it would change
    assert path.read_text(encoding="utf-8") == before
    assert WRAP.main(["--line-length", "100", str(path)]) == 0
    assert WRAP.main(["--check", "--line-length", "100", str(path)]) == 0


@pytest.mark.parametrize("prefix", ["", "r", "rb", "u"])
def test_string_prefixes_survive_a_split(prefix: str) -> None:
    source = f'VALUE = [{prefix}"' + "piece of text " * 9 + 'end"]\n'
    result = wrapped(source)
    assert all(p.startswith(f'{prefix}"') for p in string_tokens(result))
    assert values(result) == values(source)


def test_a_docstring_with_an_escaped_backslash_at_a_line_end_is_still_reflowed() -> None:
    # a backslash escaped before a newline is a backslash, not a line continuation
    first = '    """Run it as: cmd \\\\'
    long = "    and then you read the rest of this line, which goes on past the end of the line."
    long += " Yes, it really does."
    source = f'def f() -> None:\n{first}\n{long}\n    """\n'
    lines = wrapped(source).splitlines()
    assert lines[1] == first and lines[2] != long and len(lines) == 5
