"""The small programs `dynadbg learn` runs (each a plain script, run as ``__main__``)."""
