"""The session: the loop of `agent/` wired to the grammar check, the store, the calendar and the person.

`agent/` is the agent and imports nothing of this; this package is what joins it to the rest. `session`
(a conversation around the loop: `Session`, `Settings`) over its pieces: `steps` (the loop's two steps,
stored, each safe to run twice), `checked_request` (the check, the budget, the body) with `entry_texts`
and `sizes` (what it keeps per entry as the list grows), `store` (the conversation's rows), `listener`
(what it does with the loop's events), `lease` (one process at a time), `resuming`, `approval` (a person
approves a side effect), `prompt_loader` (the prompt files), `clock` (the clock a `--today` pin gives).
"""
