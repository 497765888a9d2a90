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
