"""dynadbg.core — the debugging engine: capture, stepping, value stack, guards, edits. No UI imports."""
