"""The command palette provider: every registry action, searchable, with its keys."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from . import actions


class ActionCommands(Provider):
    """Offers each `actions.ACTIONS` entry in the command palette; choosing one runs it like its key would."""

    def _entries(self) -> list[tuple[str, str, str]]:
        keymap = getattr(self.app, "keymap", None)
        keys = actions.effective_keys(keymap)
        return [
            (f"{action.label}: {action.description}", action.id,
             actions.display_keys(keys[action.id]) + (f"  ·  console: `{action.command}`" if action.command else ""))
            for action in actions.ACTIONS
        ]

    async def _run(self, action_id: str) -> None:
        await self.app.run_action(f"dbg({action_id!r})")

    async def discover(self) -> Hits:
        for title, action_id, help_text in self._entries():
            yield DiscoveryHit(title, partial(self._run, action_id), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action_id, help_text in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self._run, action_id), text=title, help=help_text)


class LearnCommand(Provider):
    """`dynadbg learn` in the palette: lists the lessons and how to open one (a lesson runs its own program, so it
    starts from the shell)."""

    TITLE = "Learn Dynamo: dynadbg learn (a guided course on bundled programs)"

    def _show(self) -> None:
        # the course's data modules only (never its front ends: they are built on this app)
        from dynadbg.learn.lessons import LessonError, load_lessons
        from dynadbg.learn.progress import Progress, lesson_list

        console = self.app.main_screen.console
        try:
            console.info("Lessons; run `dynadbg learn` (the next one) or `dynadbg learn N` from a shell:\n"
                         + lesson_list(load_lessons(), Progress()))
        except LessonError as exc:
            console.error(f"bad lesson file: {exc}")

    async def discover(self) -> Hits:
        yield DiscoveryHit(self.TITLE, self._show, help="lists the lessons in the console")

    async def search(self, query: str) -> Hits:
        score = self.matcher(query).match(self.TITLE)
        if score > 0:
            yield Hit(score, self.matcher(query).highlight(self.TITLE), self._show, text=self.TITLE)
