"""The one error type users see: it names the node and the field, never a traceback."""


class BridgeError(Exception):
    """A refusal with a reason. ``node`` and ``field`` say where; ``message`` says why."""

    def __init__(self, message: str, node: str | None = None, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.node = node
        self.field = field

    def __str__(self) -> str:
        where = []
        if self.node:
            where.append(f"node {self.node!r}")
        if self.field:
            where.append(f"field {self.field!r}")
        return (", ".join(where) + ": " if where else "") + self.message

    def at(self, node: str | None = None, field: str | None = None) -> "BridgeError":
        """The same error, with the location filled in where it was still unknown."""
        return BridgeError(self.message, self.node or node, self.field or field)
