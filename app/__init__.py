"""dynadbg — an interactive debugger for the bytecode that PyTorch Dynamo (torch.compile) generates."""

from __future__ import annotations

__version__ = "0.1.0"


def __getattr__(name: str):  # noqa: ANN202 - PEP 562: torch is imported only when the API is used
    if name in ("debug", "set_trace"):
        from dynadbg import api

        return getattr(api, name)
    raise AttributeError(f"module 'dynadbg' has no attribute {name!r}")


__all__ = ["debug", "set_trace", "__version__"]
