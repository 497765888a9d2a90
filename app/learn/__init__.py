"""`dynadbg learn`: a guided course in Dynamo's internals, run in the debugger on bundled programs.

Lessons are data (`lessons/*.toml`, checked by `lessons.load_lesson`); `coach.Coach` follows the learner through
one; `plain.run_lesson_plain` and `tui.LearnApp` are its two front ends; `progress.Progress` keeps the learner's
place across runs.
"""
