"""Long one-line statements laid out as black lays them out (the templates' `fit` filter).

black formats every generated script (fmt.py). On a cold cache most of its time goes to lines it
has to split, so the templates print black's layout themselves: static code is written that way,
and a statement whose length depends on the config (a list of transforms, a dataset call) goes
through :func:`fit`.

:func:`fit` knows one shape, the one those statements have: an optional ``target = ``,
``return ``, ``name=`` or ``"key": ``, then a call of a dotted name or a list/dict display that
closes at the end of the line (before an optional comment). A line that ends in a comma is an item
of a bracket black keeps exploded (the keyword arguments of a call whose last one has a trailing
comma), which black lays out on its own just the same. A line longer than black's limit is split at
that last bracket as black does (black's linegen.py: right_hand_split, delimiter_split,
should_split_line):

- the bracket's contents on one line, four spaces deeper, when they fit there and the bracket is a
  call (a list or dict display with two or more items is always exploded);
- otherwise one item per line, each followed by a comma (black's trailing comma), each item laid
  out by the same rule.

Anything else (another shape, non-ASCII text whose width black measures differently, a
comprehension or lambda, a comma black might not add) is left as it is: black still formats it.
The one thing :func:`fit` must never do is add a comma black would not add, since black keeps a
"magic" trailing comma exploded; tests/test_layout.py checks fit against black itself.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

from .fmt import LINE_LENGTH

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")", "]", "}"}
_PLAIN = {tokenize.NAME, tokenize.NUMBER, tokenize.STRING, tokenize.OP, tokenize.COMMENT}
_LAYOUT_FREE = {tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT}
# What may stand before the bracket: `target = `, `return `, `name=` (a keyword argument) or
# `"key": ` (a dict entry), then the dotted name being called; with no name the bracket is a list or
# dict display.
_HEAD = re.compile(
    r'(?:return |[A-Za-z_][\w.]* = |[A-Za-z_]\w*=|"(?:[^"\\]|\\.)*": )?(?P<callee>[A-Za-z_][\w.]*)?'
)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: int
    text: str
    start: int
    end: int


def fit(text: str) -> str:
    """`text` (whole statements) with each long one-line statement of the known shape laid out as
    black would lay it out. Lines inside a statement that spans several lines are left alone."""
    lines = io.StringIO(text).readlines()  # split at "\n" only, as tokenize does
    if all(len(line.rstrip("\n")) <= LINE_LENGTH for line in lines):
        return text
    statements = _one_line_statements(text)
    out = []
    for number, line in enumerate(lines):
        body = line.rstrip("\n")
        laid = _fit_line(body) if number in statements else None
        out.append(line if laid is None else "\n".join(laid) + line[len(body) :])
    return "".join(out)


def _one_line_statements(text: str) -> frozenset[int]:
    """Indexes of the lines of `text` that hold a whole statement by themselves (none if `text` does
    not tokenize: then nothing is changed)."""
    lines = io.StringIO(text).readlines()
    indent = min((len(x) - len(x.lstrip(" ")) for x in lines if x.strip()), default=0)
    dedented = "".join(x[indent:] if x.strip() else x.lstrip(" ") for x in lines)
    found: set[int] = set()
    first: int | None = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(dedented).readline):
            if tok.type in {tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}:
                continue
            if tok.type == tokenize.NEWLINE:
                if first == tok.start[0]:
                    found.add(first - 1)
                first = None
            elif first is None:
                first = tok.start[0]
    except (tokenize.TokenError, SyntaxError):
        return frozenset()
    return frozenset(found)


def _fit_line(line: str) -> list[str] | None:
    if len(line) <= LINE_LENGTH or not line.isascii():
        return None
    code = line.lstrip(" ")
    indent = len(line) - len(code)
    tokens = _tokens(code)
    if tokens is None:
        return None
    comment = ""
    if tokens and tokens[-1].kind == tokenize.COMMENT:
        comment = "  " + tokens[-1].text.rstrip()
        if not comment.startswith("  # "):
            return None  # black would add a space after the `#`
        tokens = tokens[:-1]
        code = code[: tokens[-1].end] if tokens else ""
    if not tokens or code != code.rstrip() or not _plain(tokens):
        return None
    return _lay(indent, code, tokens, comment)


def _tokens(code: str) -> list[_Token] | None:
    """The tokens of one line, or None if it is not one complete line of plain tokens."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code + "\n").readline):
            if tok.type in _LAYOUT_FREE:
                continue
            if tok.type not in _PLAIN or (tok.type == tokenize.STRING and tok.string[0] not in "'\""):
                return None  # prefixed strings (f-strings: tokens of their own in 3.12+), errors
            if tok.start[0] != 1 or tok.end[0] != 1:
                return None
            out.append(_Token(tok.type, tok.string, tok.start[1], tok.end[1]))
    except (tokenize.TokenError, SyntaxError):
        return None
    return out


def _plain(tokens: list[_Token]) -> bool:
    """Balanced brackets, and nothing that changes how black splits: a comprehension or lambda
    (other delimiter priorities), a comma before a closing bracket (a magic trailing comma), a
    star (unpacking: black's trailing comma depends on the target versions), a semicolon."""
    depth = 0
    for prev, tok in zip([None, *tokens], tokens, strict=False):
        if tok.kind == tokenize.NAME and tok.text in {"for", "lambda", "async", "await", "yield"}:
            return False
        if tok.kind == tokenize.COMMENT or tok.text in {"*", "**", ";", ":="}:
            return False
        if tok.text in _OPEN:
            depth += 1
        elif tok.text in _CLOSE:
            depth -= 1
            if depth < 0 or (prev is not None and prev.text == ","):
                return False
    return depth == 0


def _lay(indent: int, code: str, tokens: list[_Token], comment: str) -> list[str] | None:
    """`code` (with `comment` after it) at `indent`, split as black would; None if not sure."""
    pad = " " * indent
    if indent + len(code) + len(comment) <= LINE_LENGTH:
        return [pad + code + comment]
    trailing = ""
    if tokens[-1].text == ",":  # an item of an exploded bracket
        trailing, tokens = ",", tokens[:-1]
    close = tokens[-1]
    if close.text not in _CLOSE:
        return None
    depth, open_at = 0, None
    for i in range(len(tokens) - 1, -1, -1):
        if tokens[i].text in _CLOSE:
            depth += 1
        elif tokens[i].text in _OPEN:
            depth -= 1
            if depth == 0:
                open_at = i
                break
    assert open_at is not None  # _plain: balanced
    opening = tokens[open_at]
    head = code[: opening.end]
    match = _HEAD.fullmatch(code[: opening.start])
    if match is None or open_at == len(tokens) - 2 or indent + len(head) > LINE_LENGTH:
        return None  # other shapes; empty brackets; a head that does not fit
    callee = match.group("callee")
    if callee is not None and opening.text != "(":
        return None  # a subscript
    if callee is None and opening.text == "(":
        return None  # a parenthesized expression or tuple: black may drop or keep the parens
    inner = tokens[open_at + 1 : -1]
    items = _items(code, inner)
    tail = close.text + trailing + comment
    body = code[inner[0].start : inner[-1].end]
    deeper = indent + 4
    if len(items) == 1 or callee is not None:
        if deeper + len(body) <= LINE_LENGTH and not (callee is None and len(items) > 1):
            return [pad + head, " " * deeper + body, pad + tail]
        if len(items) == 1:
            text, item_tokens = items[0]
            laid = _lay(deeper, text, item_tokens, "")
            return [pad + head, *(laid or [" " * deeper + body]), pad + tail]
    lines = [pad + head]
    for text, item_tokens in items:
        comma = _Token(tokenize.OP, ",", item_tokens[-1].end, item_tokens[-1].end + 1)
        laid = _lay(deeper, text + ",", [*item_tokens, comma], "")
        lines.extend(laid or [" " * deeper + text + ","])
    return [*lines, pad + tail]


def _items(code: str, tokens: list[_Token]) -> list[tuple[str, list[_Token]]]:
    """The top-level comma-separated items of a bracket's contents, with their tokens shifted so
    that each item's text starts at offset 0."""
    items: list[list[_Token]] = [[]]
    depth = 0
    for tok in tokens:
        if tok.text == "," and depth == 0:
            items.append([])
            continue
        if tok.text in _OPEN:
            depth += 1
        elif tok.text in _CLOSE:
            depth -= 1
        items[-1].append(tok)
    out = []
    for item in items:
        start = item[0].start
        shifted = [_Token(t.kind, t.text, t.start - start, t.end - start) for t in item]
        out.append((code[start : item[-1].end], shifted))
    return out
