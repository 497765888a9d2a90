"""The engine methods that change the program: bytecode patches (`patches.PatchManager`) and guard edits
(`guard_edits.GuardEditor`).

`Edits` is a group of `Session` (`engine_base.Group`); `Session` names its public methods (see
`dynadbg.core.protocol.Engine` for each one's contract)."""

from __future__ import annotations

from .engine_base import Group, engine_method
from .model import (
    EditError,
    EditOp,
    EditOutcome,
    EditPreview,
    EngineError,
    GuardEditView,
    PatchDiff,
    PatchView,
    StopKind,
)


class Edits(Group):
    """The engine methods that change the program: bytecode patches and guard edits."""

    def _after_code_change(self) -> None:
        # a compile stop shows the event's code: rebuild the frozen snapshot so front ends see the edit
        if self.host._paused().kind is StopKind.COMPILE:
            self.host._rebuild_stop()

    @engine_method()
    def preview_edit(self, op: EditOp) -> EditPreview | EngineError:
        self.host._live_only("editing")
        return self.host.patch_manager.preview(self.host._paused(), op)

    @engine_method()
    def apply_edit(self, op: EditOp) -> EditOutcome | EngineError:
        self.host._live_only("editing")
        outcome = self.host.patch_manager.edit(self.host._paused(), op)
        if outcome.error is None:
            self._after_code_change()
        return outcome

    @engine_method()
    def patch_diff(self) -> PatchDiff | EditError | EngineError:
        return self.host.patch_manager.show(self.host._paused())

    @engine_method(anytime=True)
    def patches(self) -> tuple[PatchView, ...]:
        return tuple(self.host.patch_manager.patches())

    @engine_method()
    def save_patches(self, path: str) -> int | EditError | EngineError:
        return self.host.patch_manager.save(path)

    @engine_method()
    def load_patches(self, path: str) -> EditOutcome | EngineError:
        outcome = self.host.patch_manager.load(self.host._paused(), path)
        if outcome.error is None:
            self._after_code_change()
        return outcome

    @engine_method()
    def undo_patch(self, everything: bool = False) -> EditOutcome | EngineError:
        outcome = self.host.patch_manager.undo(self.host._paused(), everything=everything)
        if outcome.error is None:
            self._after_code_change()
        return outcome

    @engine_method()
    def add_guard(self, expr: str) -> EditOutcome | EngineError:
        return self.host.guard_editor.add(self.host._paused(), expr)

    @engine_method()
    def drop_guard(self, leaf_id: str) -> EditOutcome | EngineError:
        return self.host.guard_editor.drop(self.host._paused(), leaf_id)

    @engine_method()
    def undo_guard_edit(self, which: str = "") -> EditOutcome | EngineError:
        return self.host.guard_editor.undo(self.host._paused(), which)

    @engine_method(anytime=True)
    def guard_edits(self) -> tuple[GuardEditView, ...]:
        return tuple(self.host.guard_editor.edits())

    @engine_method(anytime=True)
    def export_guard_filter(self) -> str:
        return self.host.guard_editor.export()
