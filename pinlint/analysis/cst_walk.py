"""Walking libcst trees fast: a node's children from its fields, and the names an expression mentions.

Type tests in the analysis's hot paths compare ``type(node)`` rather than call ``isinstance``:
libcst's node classes are ABCs, so every ``isinstance`` that fails runs ``ABCMeta.__instancecheck__``
(a Python call), millions of times on a large project. No concrete libcst class has a subclass, so
for parsed (and pinlint-built) nodes the two tests agree.
"""

from __future__ import annotations

import libcst as cst

from pinlint.analysis.scopes import dotted


def _subclasses(base: type) -> list[type]:
    out = [base]
    for sub in type.__subclasses__(base):
        out += _subclasses(sub)
    return out


#: Every libcst expression class: ``type(node) in EXPRESSION_TYPES`` is ``isinstance(node,
#: cst.BaseExpression)`` without the ABC machinery. Found by walking the subclass tree, not by
#: testing every name libcst exports (an ABC ``issubclass`` each: milliseconds of every start-up);
#: the name test keeps the public classes (``add_slots`` leaves each pre-slots class behind).
EXPRESSION_TYPES = frozenset(c for c in _subclasses(cst.BaseExpression) if getattr(cst, c.__name__, None) is c)


def mentioned(node: cst.CSTNode) -> set[str]:
    """Every name and attribute chain (``a``, ``a.b``, ``a.b.c``) written inside ``node``."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current) in (cst.Name, cst.Attribute):
            chain = dotted(current)
            if chain is not None:
                parts = chain.split(".")
                found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
                if type(current) is cst.Name:
                    continue
        stack.extend(children(current))
    return found


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """A node's child nodes, read from its fields: libcst's ``children`` runs a whole visitor
    per node, which costs more than the walk it serves. What a field's type is (node, sequence,
    other) is looked up per type: ``isinstance`` against libcst's abstract classes is slow.

    Trivia are left out: whitespace, comments, brackets, commas and operator tokens (no walk
    of the analysis or the fixer looks for them, and they are about half of a tree's nodes)."""
    out: list[cst.CSTNode] = []
    fields = _FIELDS.get(type(node))
    if fields is None:
        fields = _FIELDS[type(node)] = tuple(node.__dataclass_fields__)
    for name in fields:
        value = getattr(node, name)
        kind = _KINDS.get(type(value))
        if kind is None:
            kind = _kind(type(value))
        if kind is _NODE:
            out.append(value)
        elif kind is _SEQUENCE:
            out.extend(v for v in value if (_KINDS.get(type(v)) or _kind(type(v))) is _NODE)
    return out


_NODE, _SEQUENCE, _OTHER = "node", "sequence", "other"
_FIELDS: dict[type, tuple[str, ...]] = {}
_KINDS: dict[type, str] = {}

#: Nodes that hold only layout: whitespace, comments, brackets, separators, operator tokens.
_TRIVIA: tuple[type, ...] = (
    cst.BaseParenthesizableWhitespace,
    cst.TrailingWhitespace,
    cst.EmptyLine,
    cst.Newline,
    cst.Comment,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.Comma,
    cst.Dot,
    cst.Colon,
    cst.Semicolon,
    cst.AssignEqual,
    cst.ImportStar,
    cst.BaseBinaryOp,
    cst.BaseUnaryOp,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseAugOp,
)


def _kind(kind: type) -> str:
    if issubclass(kind, cst.CSTNode):
        found = _OTHER if issubclass(kind, _TRIVIA) else _NODE
    else:
        found = _SEQUENCE if issubclass(kind, (tuple, list)) else _OTHER
    _KINDS[kind] = found
    return found
