"""Many workers on Temporal: each submitted turn is a durable workflow over the loop's two steps.

    names     what the workflow and its activities exchange: ids, iteration numbers, outcome codes
    turn      the workflow: the loop's while-loop again, each step an activity (imports only temporalio)
    steps     the activities: load the list from the store, run the session's step, store what it appended
    records   the few rows the workflow's activities and commands keep (calls waiting for a person)
    engine    the client side: connect, start a turn's workflow, wait for it, answer a waiting call
    worker    a worker process: the workflow and the activities on a task queue

The message list never enters Temporal's history: it lives in the project's store, where `--dump-array`,
`lint`, `view` and `resume` read it. Temporal only keeps which step of which turn ran, and how it ended.
"""
