"""Commands for recompile insight (issue 4): guard diffs, dropping guards, marking dimensions dynamic, exports.

A mixin of `commands.CommandSet`: each ``do_*`` method is a command; its docstring is its help line.
"""

from __future__ import annotations


class RecompileCommands:
    """Mixed into `CommandSet` (``self.s`` is the Session, ``self.ctx`` the current PauseContext)."""
