"""Bundled example programs for `dynadbg demo`."""
