"""The agent: read this folder first. It is a while-loop around a stateless model:

    messages = [user_message]
    while True:
        reply = model(messages, tools)
        messages.append(reply)                 # the assistant turn, verbatim, before anything runs
        if no tool_use in reply: return its text
        messages.append(results_for(reply))    # ONE user turn: one tool_result per tool_use id

`loop.run_turn` is that loop, over two steps it is given: a model step (the reply, appended) and a
tool round (its results, appended); `steps` has both as they run in one process. `toolbox` turns each
call into exactly one `tool_result`; `request` builds the body (a pure function); `events` is what the
loop reports; `replies` judges whether a reply can join the list; `trim` bounds what is sent;
`deadline` bounds a tool call; `growth` tells what keeps something per entry where the list changed.
`faults` holds the test-only kill and pause points (the loop body's fault injector) that the layers
above mark their crash moments with. This folder is the bottom layer and imports nothing else of the
package (no SDK, no database, no Click): `session/` wires the loop to the grammar check, the store and
the calendar, through its own two steps (`session/steps.py`).
"""
