"""How tests/data/v1.db was made: by scheduler-agent 0.1.0 at commit 46fff34, before the layout changed.

Kept as a record; it is not run by the tests (the code it drives has moved since). It used the CLI,
a loopback scripted server and the test-only fault hook, exactly as a person's machine would have:

1. `calendar seed-demo`;
2. conversation 1, finished: `ask "Find a 30-minute slot with Priya next week..." --yes`;
3. conversation 2, interrupted mid-round: the same ask, killed by SIGKILL at `after_calendar_write`
   (the booking committed with its record, its tool_result not stored).
"""

# The script as it ran (from /tmp, against the installed package):
#
#   run("calendar", "seed-demo")
#   with ScriptedServer(SCRIPT, by_length=True) as server:            # test_crash_resume's script
#       cli(["ask", ASK, "--yes", "--db", db, "--today", "2026-08-27T09:00"], server)
#   run("calendar", "cancel", "29")                                   # free the slot again
#   with ScriptedServer(SCRIPT2, by_length=True) as server:           # the same replies, ids + "_b"
#       cli([... the same ask ...], server, "after_calendar_write")   # exit -9: SIGKILL
#   PRAGMA wal_checkpoint(TRUNCATE)
#
# Result: conversation 1 complete (6 entries), conversation 2 interrupted (4 entries: its booking
# toolu_cr_2_b made, event 29, with no tool_result stored).
