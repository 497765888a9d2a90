"""dynadbg — an interactive debugger for the bytecode that PyTorch Dynamo (torch.compile) generates."""

from __future__ import annotations

__version__ = "0.1.0"
