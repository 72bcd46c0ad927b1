"""The one error type users see: it names the node and the field, never a traceback.

Names, attribute strings and relayed messages come from the user's model or from other libraries, so what is
shown is escaped (control characters, ANSI escapes, BEL, backspace, bidirectional overrides never reach a
terminal raw) and capped (a 1 MB attribute is not echoed into a 1 MB line): ``line()`` is the one-line form the
CLI prints, ``to_dict()`` the full escaped text for ``--json``.
"""

from __future__ import annotations

import re

from .messages import without_source

# C0/C1 controls (newline and tab included: a refusal is one line), zero-width and bidirectional marks, BOM.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")
NAME_CAP = 200  # a relayed name, attribute value or message, per piece
LINE_CAP = 270  # the whole one-line refusal, after "resample-bridge: error: "


def escape(text) -> str:
    """``text`` with every unsafe character shown as its Python escape (``\\x1b``, ``\\u202e``)."""
    def sub(m):
        c = ord(m.group(0))
        return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
    return _UNSAFE.sub(sub, str(text))


def clip(text, n: int = NAME_CAP) -> str:
    """Escaped and cut to at most about ``n`` characters, saying how much was left out."""
    s = str(text)
    if len(s) > 4 * n:  # never escape a megabyte to show its first 200 characters
        s, extra = s[:4 * n], len(s) - 4 * n
    else:
        extra = 0
    s = escape(s)
    if len(s) > n or extra:
        extra += max(len(s) - n, 0)
        s = s[:n] + f"... ({extra} more characters)"
    return s


# The least of a cut message's beginning kept before its last clauses (``keep_advice``)
_LEAST_HEAD = 48


def keep_advice(text: str, n: int) -> str:
    """``clip``, except that a message too long for ``n`` keeps its last clause (after the last "; ": what the user
    can do, as "give --input" or "make them initializers") and cuts the middle instead (issue 43); the clause before
    it too where both fit beside the message's first words (a refusal's "first differing node: NAME (Op)" was cut
    away, leaving the advice about it)."""
    s = escape(text)
    cut = s.rfind("; ")
    advice = s[cut + 2:] if cut > 0 else ""
    if len(s) <= n or not advice or len(advice) > n // 2:
        return clip(text, n)
    before = s.rfind("; ", 0, cut)
    if before > 0 and len(s) - before - 2 <= n - _LEAST_HEAD - 5:
        advice = s[before + 2:]
    keep = n - len(advice) - 5
    return s[:keep].rstrip() + " ... " + advice


def first_line(what, empty: str | None = None) -> str:
    """The first line of an exception's message (or of a text): what a one-line message quotes of another
    tool's error, whose later lines are stack frames and source excerpts. Where there is no text: ``empty``,
    else the exception's type name ("" for a text)."""
    text = str(what).strip()
    if text:
        return text.splitlines()[0]
    if empty is not None:
        return empty
    return type(what).__name__ if isinstance(what, BaseException) else ""


class BridgeError(Exception):
    """A refusal with a reason. ``node`` and ``field`` say where; ``message`` says why."""

    def __init__(self, message: str, node: str | None = None, field: str | None = None, brief: str | None = None):
        super().__init__(message)
        self.message = message
        self.node = node
        self.field = field
        self.brief = brief  # the default line's shorter wording of a long message; -v and --json keep ``message``

    def _text(self, node_cap: int, field_cap: int, message_cap: int) -> str:
        text = self.message
        if self.brief and len(text) > message_cap:
            text = self.brief
        where = []
        if self.node:
            where.append(f"node '{clip(self.node, node_cap)}'")
        if self.field:
            where.append(f"field '{clip(self.field, field_cap)}'")
        head = ", ".join(where) + ": " if where else ""
        msg = text if len(text) > 100000 else without_source(text)
        return head + keep_advice(msg, max(message_cap - len(head), 60))

    def __str__(self) -> str:
        return self._text(NAME_CAP, NAME_CAP, 4000)

    def line(self, limit: int = LINE_CAP) -> str:
        """The one line the CLI prints: escaped, and at most about ``limit`` characters in all."""
        return self._text(80, 40, limit)

    def to_dict(self) -> dict:
        """Everything, escaped but not capped (``--json``)."""
        return {"message": escape(self.message), "node": None if self.node is None else escape(self.node),
                "field": None if self.field is None else escape(self.field)}

    def at(self, node: str | None = None, field: str | None = None) -> "BridgeError":
        """The same error, with the location filled in where it was still unknown."""
        return BridgeError(self.message, self.node or node, self.field or field, self.brief)
