"""Commands for live editing (issue 5): instruction edits, patch files, guard add/drop/export.

A mixin of `commands.CommandSet`: each ``do_*`` method is a command; its docstring is its help line.
"""

from __future__ import annotations


class EditCommands:
    """Mixed into `CommandSet` (``self.s`` is the Session, ``self.ctx`` the current PauseContext)."""
