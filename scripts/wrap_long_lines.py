"""Shorten the lines that `ruff format` leaves over the line length, without changing behaviour.

Run after `ruff format` (and `ruff format` again after it): full-line comments are rewrapped, long
trailing comments move above their line (pragmas stay), docstring paragraphs are reflowed and long
string literals are split into implicitly concatenated pieces. Every rewritten file must parse to
the same AST as before (docstrings compared with whitespace collapsed) and keep its comment words,
or it is left untouched. What cannot be shortened (a URL, a long name) is listed for a human.

    python scripts/wrap_long_lines.py [--check] [--comments-only] [--line-length N] PATH...
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
import tomllib
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PRAGMAS = ("noqa", "type:", "pragma", "fmt:", "pyright:", "pylint:", "mypy:")
LIST_ITEM = re.compile(r"([-*+•]|\d+[.)]|\([a-z0-9]\)) +")
DECORATION = re.compile(r"([-=#*~_])\1{3,}")
MAX_PASSES = 8


def width(text: str) -> int:
    """Columns `text` takes, as ruff counts them (wide East Asian characters count two)."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def is_pragma(comment: str) -> bool:
    return comment.lstrip("#").strip().lower().startswith(PRAGMAS)


@dataclass(frozen=True)
class Edit:
    """Replace rows `first`..`last` (1-based, inclusive) by `lines`."""

    first: int
    last: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class LongLine:
    path: str
    row: int
    width: int
    text: str


# --- the AST check -------------------------------------------------------------------------------


def _docstring_nodes(tree: ast.AST) -> Iterator[ast.Constant]:
    """Docstrings, and every other string standing alone as a statement (an attribute's docstring):
    the compiler drops those, so their whitespace is not behaviour."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield node.value


def normalised_dump(source: str) -> str:
    """`ast.dump` of `source` with every docstring's whitespace collapsed to single spaces."""
    tree = ast.parse(source)
    for doc in _docstring_nodes(tree):
        doc.value = " ".join(str(doc.value).split())
    return ast.dump(tree)


def comment_words(source: str) -> list[str]:
    """The words of every comment, sorted (a moved comment changes their order), without decoration
    runs (`-----`) and bare punctuation (`#`, `-`)."""
    words: list[str] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            for word in tok.string.split():
                stripped = DECORATION.sub("", word).strip("#-")
                if stripped:
                    words.append(stripped)
    return sorted(words)


def same_program(before: str, after: str) -> bool:
    try:
        return normalised_dump(before) == normalised_dump(after) and comment_words(
            before
        ) == comment_words(after)
    except (SyntaxError, tokenize.TokenError, ValueError):
        return False


# --- filling words into lines --------------------------------------------------------------------


def fill(words: list[str], first_room: int, room: int) -> list[str]:
    """Greedy fill: the first line holds `first_room` columns, the others `room`; a word too long
    stays whole on its own line."""
    lines: list[str] = []
    current = ""
    for word in words:
        limit = first_room if not lines else room
        candidate = f"{current} {word}" if current else word
        if current and width(candidate) > limit:
            lines.append(current)
            current = word
        else:
            current = candidate
    lines.append(current)
    return lines


def shorten_decoration(words: list[str], room: int) -> list[str]:
    """A trailing `-----` rule is trimmed to fit rather than wrapped onto a line of its own."""
    if words and DECORATION.fullmatch(words[-1]):
        used = width(" ".join(words[:-1])) + 1
        keep = max(4, room - used)
        return [*words[:-1], words[-1][:keep]]
    return words


# --- comments ------------------------------------------------------------------------------------


def comment_prefix(comment: str) -> str:
    match = re.match(r"#+ *", comment)
    assert match is not None
    return match.group(0) if match.group(0) != "#" else "# "


def wrap_full_comment(lines: list[str], row: int, col: int, limit: int) -> Edit | None:
    """Rewrap the comment on `row` (1-based) at column `col`, carrying what overflows into the
    following comment lines of the same paragraph, or into new lines."""
    text = lines[row - 1][col:]
    prefix = comment_prefix(text)
    indent = lines[row - 1][:col]
    room = limit - width(indent) - width(prefix)
    words = shorten_decoration(text[len(prefix) :].split(), room)
    out: list[str] = []
    last = row
    while True:
        filled = fill(words, room, room)
        nxt = last + 1
        if (
            len(filled) > 1
            and nxt <= len(lines)
            and _continues_comment(lines[nxt - 1], indent, prefix)
        ):
            # the overflow joins the next line of the same paragraph
            out.extend(indent + prefix + line for line in filled[:-1])
            words = [*filled[-1].split(), *lines[nxt - 1][len(indent) + len(prefix) :].split()]
            last = nxt
            continue
        out.extend(indent + prefix + line for line in filled)
        break
    if out == lines[row - 1 : last]:
        return None
    return Edit(row, last, tuple(out))


def _continues_comment(line: str, indent: str, prefix: str) -> bool:
    if not line.startswith(indent + prefix):
        return False
    rest = line[len(indent) + len(prefix) :]
    return (
        bool(rest) and not rest[0].isspace() and not LIST_ITEM.match(rest) and not is_pragma(rest)
    )


def comment_lines(comment: str, indent: str, limit: int) -> list[str]:
    prefix = comment_prefix(comment)
    room = limit - width(indent) - width(prefix)
    words = shorten_decoration(comment[len(prefix) :].split(), room)
    return [indent + prefix + line for line in fill(words, room, room)]


# --- docstrings ----------------------------------------------------------------------------------


@dataclass
class DocLine:
    indent: int  # columns of leading whitespace (for the first line: the column of the text)
    text: str
    keep: bool  # preformatted: a doctest, a table, a literal block, a fenced block


def classify_doc(body_lines: list[str], first: int, base: int) -> list[DocLine]:
    """The docstring's lines (the first starts at column `first`, the others' margin is `base`),
    each marked whether it is preformatted: a fenced or doctest block, a table, a line with aligned
    columns, a literal block after `::`, or an indented code block (4 more than the margin, after a
    blank line)."""
    out: list[DocLine] = []
    fence = doctest = False
    block_at: int | None = None  # indent of the literal or code block we are in
    literal_from: int | None = None  # indent of the line ending in `::` before it
    after_blank = False
    for index, raw in enumerate(body_lines):
        text = raw.strip()
        indent = first if index == 0 else len(raw) - len(raw.lstrip())
        if not text:
            doctest = False
            out.append(DocLine(indent, "", True))
            after_blank = True
            continue
        if block_at is not None and indent < block_at:
            block_at = None
        if block_at is None and literal_from is not None and indent > literal_from:
            block_at = indent
        if block_at is None and after_blank and index and indent >= base + 4:
            block_at = indent
        literal_from = None
        keep = fence or doctest or block_at is not None
        if text.startswith("```"):
            fence = not fence
            keep = True
        if text.startswith((">>>", "...")):
            doctest = keep = True
        if text.startswith(("|", "+-", "+=", "==", "--")) or "  " in text:
            keep = True
        if text.endswith("::"):
            literal_from = indent
        out.append(DocLine(indent, text, keep))
        after_blank = False
    return out


def wrap_docstring(token: tokenize.TokenInfo, lines: list[str], limit: int) -> Edit | None:
    """Reflow the long lines of a triple-quoted docstring, carrying overflow into the rest of the
    paragraph; preformatted lines, list items' hanging indents and blank lines stay."""
    match = re.match(r"([a-zA-Z]*)(\"\"\"|''')", token.string)
    if match is None or not token.string.endswith(match.group(2)):
        return None
    opening, quote = match.group(0), match.group(2)
    body = token.string[len(opening) : -3]
    if re.search(r"(?<!\\)(\\\\)*\\\n", body):
        return None  # a backslash that continues the line: reflowing would move it
    (row0, col0), (row_end, col_end) = token.start, token.end
    head = lines[row0 - 1][:col0]
    tail = lines[row_end - 1][col_end:]
    body_lines = body.split("\n")
    base = width(head)
    doc = classify_doc(body_lines, base + width(opening), base)
    last_index = len(doc) - 1
    new: list[str] = []
    index = 0
    changed = False

    def line_width(i: int, text: str, indent: int) -> int:
        return indent + width(text) + (3 + width(tail) if i == last_index else 0)

    while index < len(doc):
        line = doc[index]
        if line.keep or line_width(index, line.text, line.indent) <= limit:
            new.append(body_lines[index] if index else body_lines[0])
            index += 1
            continue
        marker = LIST_ITEM.match(line.text)
        cont = base if index == 0 else line.indent + (len(marker.group(0)) if marker else 0)
        produced: list[tuple[int, str]] = []  # (indent, text) of each new line
        end = index
        words = line.text.split()
        while True:
            start = line.indent if not produced else cont
            filled = fill(words, limit - start, limit - cont)
            rows = [(start, filled[0]), *((cont, text) for text in filled[1:])]
            nxt = end + 1
            follows = (
                nxt < len(doc)
                and not doc[nxt].keep
                and doc[nxt].indent == cont
                and not LIST_ITEM.match(doc[nxt].text)
            )
            if len(filled) > 1 and follows:
                # the overflow joins the next line of the same paragraph
                produced.extend(rows[:-1])
                words = [*rows[-1][1].split(), *doc[nxt].text.split()]
                end = nxt
                continue
            produced.extend(rows)
            break
        if end == last_index:
            indent, text = produced[-1]
            if indent + width(text) + 3 + width(tail) > limit and " " in text:
                # the closing quotes push the last line over: its last word goes down
                rest, last_word = text.rsplit(" ", 1)
                produced[-1:] = [(indent, rest), (cont, last_word)]
        for k, (indent, text) in enumerate(produced):
            new.append(text if index == 0 and k == 0 else " " * indent + text)
        changed = True
        index = end + 1
    if not changed:
        return None
    new_token = opening + "\n".join(new) + quote
    replaced = (head + new_token + tail).split("\n")
    if replaced == lines[row0 - 1 : row_end]:
        return None
    return Edit(row0, row_end, tuple(replaced))


# --- string literals -----------------------------------------------------------------------------


def split_points(body: str, prefix: str) -> list[int]:
    """Offsets in `body` just after a space where a string may be cut: never inside an escape, nor
    inside an f-string's `{}`."""
    raw = "r" in prefix.lower()
    fstring = "f" in prefix.lower()
    named = not raw and "b" not in prefix.lower()
    points: list[int] = []
    i = 0
    depth = 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            if named and body.startswith("\\N{", i):
                i = body.index("}", i) + 1
            else:
                i += 2
            continue
        if fstring:
            if depth == 0 and body.startswith(("{{", "}}"), i):
                i += 2
                continue
            if char == "{":
                depth += 1
            elif char == "}" and depth:
                depth -= 1
            elif depth and char in "'\"":
                i = body.index(char, i + 1) + 1
                continue
        if depth == 0 and char == " " and i + 1 < len(body) and body[i + 1] != " ":
            points.append(i + 1)
        i += 1
    return points


def split_string(token: str, first_room: int, room: int) -> list[str] | None:
    """`token` cut at spaces into pieces of at most `first_room`, then `room` columns, each with the
    token's prefix and quotes; None when there is nothing to cut."""
    parts = _parts(token)
    if parts is None:
        return None
    prefix, quote, body = parts
    points = split_points(body, prefix)
    overhead = len(prefix) + 2
    pieces: list[str] = []
    start = 0
    while True:
        limit = (first_room if not pieces else room) - overhead
        rest = [p for p in points if p > start and body[p:].strip()]
        if width(body[start:]) <= limit or not rest:
            pieces.append(body[start:])
            break
        fitting = [p for p in rest if width(body[start:p]) <= limit]
        cut = fitting[-1] if fitting else rest[0]
        pieces.append(body[start:cut])
        start = cut
    if len(pieces) < 2:
        return None
    return [f"{prefix}{quote}{piece}{quote}" for piece in pieces]


STRING_START = re.compile(r"([a-zA-Z]*)(['\"])")


def _parts(token: str) -> tuple[str, str, str] | None:
    """(prefix, quote, body) of a one-quote string literal; None for a triple-quoted one."""
    match = STRING_START.match(token)
    if match is None or token.startswith(match.group(0) + match.group(2) * 2):
        return None
    return match.group(1), match.group(2), token[len(match.group(0)) : -1]


def _next_piece(
    tokens: list[tokenize.TokenInfo], index: int, lines: list[str]
) -> tuple[int, tokenize.TokenInfo] | None:
    """The next piece of an implicit concatenation when it starts the next line, alone there with
    the same prefix and quote, and nothing follows this one on its line."""
    token = tokens[index]
    if lines[token.end[0] - 1][token.end[1] :].strip() or index + 2 >= len(tokens):
        return None
    gap, nxt = tokens[index + 1], tokens[index + 2]
    if gap.type != tokenize.NL or nxt.type != tokenize.STRING or nxt.start[0] != nxt.end[0]:
        return None
    if lines[nxt.start[0] - 1][: nxt.start[1]].strip() or nxt.start[0] != token.end[0] + 1:
        return None
    mine, theirs = _parts(token.string), _parts(nxt.string)
    if mine is None or theirs is None or mine[:2] != theirs[:2]:
        return None
    return index + 2, nxt


def wrap_string(
    tokens: list[tokenize.TokenInfo], index: int, depth: int, lines: list[str], limit: int
) -> Edit | None:
    """Split a long one-line string literal into pieces, each on its own line; outside brackets the
    pieces are wrapped in parentheses. When the next piece of an existing concatenation follows,
    what overflows is carried into it instead of onto a line of its own."""
    token = tokens[index]
    parts = _parts(token.string)
    if parts is None:
        return None
    prefix, quote, body = parts
    row, col = token.start
    line = lines[row - 1]
    before, after = line[:col], line[token.end[1] :]
    indent = len(line) - len(line.lstrip())
    if depth == 0:
        neighbours = (tokens[index - 1].type, tokens[index + 1].type)
        if tokenize.STRING in neighbours:
            return None
        cont = indent + 4
        pieces = split_string(token.string, limit - cont, limit - cont)
        if pieces is None:
            return None
        out = [before + "(", *(" " * cont + piece for piece in pieces), " " * indent + ")" + after]
        return Edit(row, row, tuple(out))
    produced: list[str] = []
    while True:
        text = f"{prefix}{quote}{body}{quote}"
        if width(before) + width(text) + width(after) <= limit:
            produced.append(before + text + after)
            break
        following = _next_piece(tokens, index, lines)
        if following is None:
            # the last piece shares its line with what follows the string (`,` or `)`)
            pieces = split_string(
                text, limit - width(before) - width(after), limit - indent - width(after)
            )
            if pieces is None:
                produced.append(before + text + after)
                break
            produced.extend([before + pieces[0], *(" " * indent + p for p in pieces[1:])])
            produced[-1] += after
            break
        pieces = split_string(text, limit - width(before), limit - width(before))
        if pieces is None:
            produced.append(before + text + after)
            break
        produced.append(before + pieces[0])
        index, token = following
        body = body[len(pieces[0]) - len(prefix) - 2 :] + token.string[len(prefix) + 1 : -1]
        line = lines[token.start[0] - 1]
        before, after = line[: token.start[1]], line[token.end[1] :]
        indent = len(line) - len(line.lstrip())
    edit = Edit(row, token.start[0], tuple(produced))
    return None if list(edit.lines) == lines[row - 1 : token.start[0]] else edit


# --- one pass over a file ------------------------------------------------------------------------


def _docstring_starts(tree: ast.AST, lines: list[str]) -> set[tuple[int, int]]:
    """(row, column in characters) of every docstring: ast counts columns in UTF-8 bytes."""
    starts = set()
    for doc in _docstring_nodes(tree):
        line = lines[doc.lineno - 1].encode()
        starts.add((doc.lineno, len(line[: doc.col_offset].decode())))
    return starts


def plan(source: str, limit: int, comments_only: bool = False) -> list[Edit]:
    """The edits of one pass: at most one per long line, none overlapping; `comments_only`: comments
    alone (before `ruff format`, which would split code to fit a long trailing comment)."""
    lines = source.split("\n")
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    docstrings = _docstring_starts(ast.parse(source), lines)
    long_rows = {i + 1 for i, line in enumerate(lines) if width(line) > limit}
    if not long_rows:
        return []
    # rows where a token starts a line (a comment may go above them) and rows continued by `\`
    first_token_row: set[int] = set()
    depth_at: dict[int, int] = {}
    depth = 0
    previous: tokenize.TokenInfo | None = None
    for index, tok in enumerate(tokens):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        depth_at[index] = depth
        line_break = previous is None or previous.type in (tokenize.NEWLINE, tokenize.NL)
        if tok.type in (tokenize.INDENT, tokenize.DEDENT):
            continue
        if line_break or (previous and previous.type in (tokenize.INDENT, tokenize.DEDENT)):
            first_token_row.add(tok.start[0])
        previous = tok
    edits: list[Edit] = []
    taken: set[int] = set()

    def add(edit: Edit | None) -> bool:
        if edit is None or any(r in taken for r in range(edit.first, edit.last + 1)):
            return False
        edits.append(edit)
        taken.update(range(edit.first, edit.last + 1))
        return True

    for index, tok in enumerate(tokens):
        rows = range(tok.start[0], tok.end[0] + 1)
        if not any(r in long_rows for r in rows):
            continue
        row, col = tok.start
        if tok.type == tokenize.STRING and comments_only:
            continue
        if tok.type == tokenize.STRING and (row, col) in docstrings:
            add(wrap_docstring(tok, lines, limit))
        elif tok.type == tokenize.COMMENT:
            code = lines[row - 1][:col]
            if not code.strip():
                if not is_pragma(tok.string) and not tok.string.startswith("#!"):
                    add(wrap_full_comment(lines, row, col, limit))
                continue
            add(_trailing_comment(tok, code, lines, limit, row in first_token_row))
        elif tok.type == tokenize.STRING and tok.start[0] == tok.end[0]:
            line = lines[row - 1]
            if width(_code_part(line, tokens, row)) <= limit:
                continue
            if not _longest_string_on_row(tokens, index, row):
                continue
            add(wrap_string(tokens, index, depth_at[index], lines, limit))
    return edits


def _code_part(line: str, tokens: list[tokenize.TokenInfo], row: int) -> str:
    for tok in tokens:
        if tok.type == tokenize.COMMENT and tok.start[0] == row:
            return line[: tok.start[1]].rstrip()
    return line


def _longest_string_on_row(tokens: list[tokenize.TokenInfo], index: int, row: int) -> bool:
    mine = len(tokens[index].string)
    return all(
        len(t.string) <= mine
        for j, t in enumerate(tokens)
        if j < index and t.type == tokenize.STRING and t.start[0] == t.end[0] == row
    ) and all(
        len(t.string) < mine
        for j, t in enumerate(tokens)
        if j > index and t.type == tokenize.STRING and t.start[0] == t.end[0] == row
    )


NOQA = re.compile(r"#\s*noqa(?::\s*[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)?", re.IGNORECASE)


def split_pragma(comment: str) -> tuple[str, str]:
    """`# noqa: E402 - why` or `# type: ignore[x]  # why` -> the pragma and the words after it."""
    match = NOQA.match(comment)
    if match:
        pragma, rest = match.group(0), comment[match.end() :]
    else:
        pragma, _, rest = comment.partition("  #")
        rest = "#" + rest if rest else ""
        if not rest:
            pragma, _, rest = comment.partition(" # ")
    return pragma.rstrip(), rest.strip().lstrip("#-:").strip()


def _trailing_comment(
    tok: tokenize.TokenInfo, code: str, lines: list[str], limit: int, movable: bool
) -> Edit | None:
    """A long trailing comment goes above its line at the line's indent; a pragma stays, and only
    the words after it (`# type: ignore[x]  # why`) move."""
    row = tok.start[0]
    indent = code[: len(code) - len(code.lstrip())]
    comment = tok.string
    if not is_pragma(comment) and any(is_pragma(part) for part in comment.split("#")[2:]):
        return None  # a reason, then a pragma: the pragma is read where it is
    if is_pragma(comment):
        keep, move = split_pragma(comment)
        if not move or not movable:
            return None
        return Edit(
            row, row, (*comment_lines("# " + move, indent, limit), code.rstrip() + "  " + keep)
        )
    if not movable:
        return None
    return Edit(row, row, (*comment_lines(comment, indent, limit), code.rstrip()))


# --- files ---------------------------------------------------------------------------------------


def apply(source: str, edits: list[Edit]) -> str:
    lines = source.split("\n")
    for edit in sorted(edits, key=lambda e: e.first, reverse=True):
        lines[edit.first - 1 : edit.last] = edit.lines
    return "\n".join(lines)


def rewrite(source: str, limit: int, comments_only: bool = False) -> str:
    """`source` with its long lines shortened, to a fixed point; each pass keeps only the edits
    under which the program stays the same."""
    current = source
    for _ in range(MAX_PASSES):
        edits = plan(current, limit, comments_only)
        if not edits:
            break
        candidate = apply(current, edits)
        if not same_program(current, candidate):
            kept: list[Edit] = []
            for edit in edits:
                trial = apply(current, [*kept, edit])
                if same_program(current, trial):
                    kept.append(edit)
            if not kept:
                break
            candidate = apply(current, kept)
        if candidate == current:
            break
        current = candidate
    return current


def long_lines(path: str, source: str, limit: int) -> list[LongLine]:
    return [
        LongLine(path, i + 1, width(line), line)
        for i, line in enumerate(source.split("\n"))
        if width(line) > limit
    ]


def python_files(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        found.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return found


def configured_line_length(default: int = 100) -> int:
    pyproject = Path("pyproject.toml")
    if pyproject.is_file():
        with pyproject.open("rb") as handle:
            return int(
                tomllib.load(handle).get("tool", {}).get("ruff", {}).get("line-length", default)
            )
    return default


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--check", action="store_true", help="change nothing; fail if a file would")
    parser.add_argument(
        "--comments-only",
        action="store_true",
        help="comments alone: run before ruff format, which splits code to fit a long comment",
    )
    parser.add_argument("--line-length", type=int, default=None, help="default: pyproject's ruff")
    args = parser.parse_args(argv)
    limit = args.line_length or configured_line_length()
    changed = failed = 0
    left: list[LongLine] = []
    for path in python_files(args.paths):
        source = path.read_text(encoding="utf-8")
        result = rewrite(source, limit, args.comments_only)
        if result != source and not same_program(source, result):
            print(f"{path}: the rewrite changes the program; file left as it was", file=sys.stderr)
            failed += 1
            result = source
        if result != source:
            changed += 1
            if args.check:
                print(f"{path}: would be rewrapped", file=sys.stderr)
            else:
                path.write_text(result, encoding="utf-8")
        left.extend(long_lines(str(path), result, limit))
    for line in left:
        print(f"{line.path}:{line.row}: {line.width} > {limit}: {line.text.strip()}")
    verb = "would change" if args.check else "changed"
    print(
        f"{verb} {changed} file(s); {len(left)} line(s) still over {limit}; {failed} refused",
        file=sys.stderr,
    )
    return 1 if failed or (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
